import Testing

@testable import ReaderCore

struct JSONValueTests {
  @Test func objectsKeepTheirMemberOrderAndSortedObjectsSortKeys() {
    #expect(JSONValue.object([("t", .int(1)), ("event", .string("x"))]).rendered == #"{"t":1,"event":"x"}"#)
    #expect(JSONValue.sortedObject(["b": .null, "a": .bool(true)]).rendered == #"{"a":true,"b":null}"#)
  }

  @Test(arguments: [
    (0.0, 3, "0"), (1.5, 3, "1.5"), (2.25, 1, "2.3"), (-0.0004, 3, "0"), (-1.25, 2, "-1.25"), (86_400.1, 3, "86400.1"),
    (0.648, 3, "0.648"), (12, 0, "12"), (Double.nan, 3, "null"), (Double.infinity, 3, "null"),
  ])
  func numbersAreFixedPointWithoutTrailingZeros(value: Double, decimals: Int, expected: String) {
    #expect(JSONValue.number(value, decimals: decimals).rendered == expected)
  }

  @Test func stringsEscapeQuotesBackslashesAndControlCharacters() {
    #expect(JSONValue.string("a\"b\\c\n\u{01}é").rendered == #""a\"b\\c\n\u0001é""#)
  }

  @Test func arraysAndOptionalsRender() {
    let value = JSONValue.array([
      .optional(nil as String?), .optional("x"), .optional(nil, decimals: 1), .optional(0.5, decimals: 1),
    ])
    #expect(value.rendered == #"[null,"x",null,0.5]"#)
  }
}
