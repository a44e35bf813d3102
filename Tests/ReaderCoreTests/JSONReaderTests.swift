import Foundation
import Testing

@testable import ReaderCore

@Suite struct JSONReaderTests {
  static let limits = JSONReader.Limits(maximumSize: 1 << 20, maximumDepth: 64)

  static func read(_ text: String, _ limits: JSONReader.Limits = limits) throws(JSONReadError) -> JSONValue {
    try JSONReader.read(Array(text.utf8), limits: limits)
  }

  static func error(_ bytes: [UInt8], _ limits: JSONReader.Limits = limits) -> JSONReadError? {
    do {
      _ = try JSONReader.read(bytes, limits: limits)
      return nil
    } catch {
      return error
    }
  }

  @Test func readsEveryKindOfValueInOrder() throws {
    let value = try Self.read(
      #" {"a":[1,-2.5e+3,0,0.25E-2,true,false,null,"\u00e9\n\"\\\/\ud83d\ude00"],"b":{},"c":-0} "#)
    let expected = JSONValue.object([
      (
        "a",
        .array([
          .int(1), .number(-2500, decimals: 0), .int(0), .number(0.0025, decimals: 4), .bool(true), .bool(false),
          .null, .string("é\n\"\\/😀"),
        ])
      ),
      ("b", .object([])), ("c", .int(0)),
    ])
    #expect(value == expected)
    #expect(try Self.read("\"x\"") == .string("x"))
    #expect(try Self.read(" [ ] ") == .array([]))
    #expect(try Self.read("9223372036854775807") == .int(Int.max))
    #expect(try Self.read("9223372036854775808") == .number(9_223_372_036_854_775_808, decimals: 0))
    #expect(try Self.read("\"héllo wörld\"") == .string("héllo wörld"))
  }

  @Test func theFirstSyntaxFaultIsReportedAtItsByte() {
    let cases: [(String, Int)] = [
      ("01", 1), ("-", 1), ("1.", 2), ("{\"a\" 1}", 5), ("\"\\x\"", 2), ("\"\\u12g4\"", 5), ("[1,]", 3),
      ("", 0), ("   ", 3), ("1 2", 2), ("[1 2]", 3), ("{\"a\":1,}", 7), ("{1:2}", 1), ("tru", 3), ("trux", 3),
      ("\"abc", 4), ("\"a\tb\"", 2), ("[\"\\ud800\"]", 2), ("\"\\udc00\"", 1), ("NaN", 0), ("+1", 0), ("1e", 2),
      ("{\"a\":1,\"a\":2}", 7), ("1e400", 0), ("-1e400", 0), ("\u{FEFF}{}", 0), ("{}//", 2), ("[1]]", 3),
    ]
    for (text, offset) in cases {
      #expect(
        Self.error(Array(text.utf8))?.offset == offset, "\(text): \(String(describing: Self.error(Array(text.utf8))))")
    }
    #expect(Self.error(Array("{\"a\":1,\"a\":2}".utf8))?.kind == .duplicateKey("a"))
    #expect(Self.error(Array("1e400".utf8))?.kind == .numberOutOfRange)
    #expect(Self.error(Array("[1,".utf8))?.kind == .unexpectedEnd(expected: "a value"))
    #expect(Self.error(Array("[1,".utf8))?.description == "the text ends where a value was expected (at byte 3)")
  }

  @Test func onlyWellFormedUTF8IsReadInStrings() {
    let cases: [([UInt8], Int?)] = [
      ([0x22, 0x61, 0xC3, 0x28, 0x22], 2),  // a lead byte without its continuation
      ([0x22, 0xC0, 0x80, 0x22], 1),  // overlong
      ([0x22, 0xE0, 0x80, 0x80, 0x22], 1),  // overlong
      ([0x22, 0xED, 0xA0, 0x80, 0x22], 1),  // a surrogate
      ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 1),  // past U+10FFFF
      ([0x22, 0xF0, 0x9F, 0x98, 0x22], 1),  // cut short
      ([0x22, 0x80, 0x22], 1),  // a lone continuation
      ([0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22], nil),  // U+1F600
      ([0xC3, 0xA9], 0),  // outside a string
    ]
    for (bytes, offset) in cases {
      #expect(Self.error(bytes)?.offset == offset, "\(bytes)")
    }
    #expect(Self.error([0x22, 0xC0, 0x80, 0x22])?.kind == .invalidUTF8)
  }

  @Test func everyLimitIsTheCallersAndNamesItsByte() {
    let small = JSONReader.Limits(maximumSize: 40, maximumDepth: 3, maximumStringLength: 5, maximumElementCount: 6)
    #expect(
      Self.error(Array(String(repeating: " ", count: 41).utf8), small) == JSONReadError(.tooLarge(limit: 40), at: 40))
    #expect(Self.error(Array("[[[[]]]]".utf8), small) == JSONReadError(.tooDeep(limit: 3), at: 3))
    #expect(Self.error(Array("[[[]]]".utf8), small) == nil)
    #expect(Self.error(Array("[\"12345\",\"123456\"]".utf8), small) == JSONReadError(.stringTooLong(limit: 5), at: 9))
    #expect(Self.error(Array("{\"123456\":1}".utf8), small) == JSONReadError(.stringTooLong(limit: 5), at: 1))
    #expect(
      Self.error(Array("[\"\\u00e9\\u00e9\\u00e9\"]".utf8), small) == JSONReadError(.stringTooLong(limit: 5), at: 1))
    #expect(Self.error(Array("[1,2,3,4,5]".utf8), small) == nil)
    #expect(Self.error(Array("[1,2,3,4,5,6]".utf8), small) == JSONReadError(.tooManyElements(limit: 6), at: 11))
  }

  @Test func nestingFarPastTheLimitIsRefusedAtTheFirstLevelTooDeepWithoutRecursion() {
    let limits = JSONReader.Limits(maximumSize: 1 << 22, maximumDepth: 16)
    let open = Array(String(repeating: "[", count: 1_000_000).utf8)
    #expect(Self.error(open, limits) == JSONReadError(.tooDeep(limit: 16), at: 16))
    // Within the limit, the explicit stack reads any depth (the value's own recursion, when it is
    // compared or released, is what bounds the limits callers choose).
    let deep = Array((String(repeating: "[", count: 500) + String(repeating: "]", count: 500)).utf8)
    #expect(Self.error(deep, JSONReader.Limits(maximumSize: 1 << 22, maximumDepth: 500)) == nil)
  }

  @Test func whatItRendersReadsBackTheSameAndFoundationAgrees() throws {
    let seed = UInt64.random(in: 1...UInt64.max)
    print("JSONReaderTests: random documents, seed \(seed)")
    var random = SeededRandom(seed: seed)
    for _ in 0..<300 {
      let value = Self.randomValue(depth: 0, &random)
      let text = value.rendered
      #expect(try Self.read(text).rendered == text, "seed \(seed): \(text)")
      #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) != nil, "\(text)")
    }
  }

  static func randomValue(depth: Int, _ random: inout SeededRandom) -> JSONValue {
    switch random.next() % (depth > 4 ? 5 : 7) {
    case 0: return .null
    case 1: return .bool(random.next() % 2 == 0)
    case 2: return .int(Int(truncatingIfNeeded: random.next()) >> Int(1 + random.next() % 63))
    case 3: return .number(Double(Int64(truncatingIfNeeded: random.next()) >> 20) / 1000, decimals: 3)
    case 4:
      let scalars: [Unicode.Scalar] = ["a", "\"", "\\", "\n", "\u{01}", "é", "😀", "/", "\u{7F}", "\u{FFFF}"]
      var text = ""
      for _ in 0..<Int(random.next() % 12) { text.unicodeScalars.append(scalars[Int(random.next() % 10)]) }
      return .string(text)
    case 5: return .array((0..<Int(random.next() % 5)).map { _ in randomValue(depth: depth + 1, &random) })
    default:
      let count = Int(random.next() % 5)
      return .object((0..<count).map { index in ("k\(index)", randomValue(depth: depth + 1, &random)) })
    }
  }
}
