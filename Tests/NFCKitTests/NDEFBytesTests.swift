import NFCKit
import Testing

@Suite struct NDEFBytesTests {
  @Test func indicesStartAtZeroForAnySlice() {
    let bytes = NDEFBytes([1, 2, 3, 4, 5][2...])
    #expect(bytes.startIndex == 0)
    #expect(bytes[0] == 3)
    #expect(bytes.count == 3)
    #expect(bytes[1..<3] == [4, 5])
    #expect(bytes[1..<3][0] == 4)
  }

  @Test func equalityComparesContentOnly() {
    #expect(NDEFBytes([9, 1, 2][1...]) == NDEFBytes([1, 2]))
    #expect(NDEFBytes([9, 1, 2][1...]).hashValue == NDEFBytes([1, 2]).hashValue)
    #expect(NDEFBytes([1]) != NDEFBytes([1, 0]))
  }

  @Test func parsesAndPrintsHex() {
    #expect(NDEFBytes(hex: "D1 01\n0a\tFF")?.array == [0xD1, 0x01, 0x0A, 0xFF])
    #expect(NDEFBytes([0xD1, 0x0A]).hex == "d10a")
    #expect(NDEFBytes(hex: "") == NDEFBytes())
  }

  @Test(arguments: ["D", "D1 0", "D 1", "0x01", "zz"])
  func rejectsMalformedHex(text: String) {
    #expect(NDEFBytes(hex: text) == nil)
  }

  @Test(arguments: [
    ("D", NDEFHexError(offset: 1, found: nil, expectedSecondDigit: true)),
    ("D1 0", NDEFHexError(offset: 4, found: nil, expectedSecondDigit: true)),
    ("D 1", NDEFHexError(offset: 1, found: UInt8(ascii: " "), expectedSecondDigit: true)),
    ("0x01", NDEFHexError(offset: 1, found: UInt8(ascii: "x"), expectedSecondDigit: true)),
    ("d1 zz", NDEFHexError(offset: 3, found: UInt8(ascii: "z"), expectedSecondDigit: false)),
  ])
  func malformedHexNamesTheOffendingByte(text: String, error: NDEFHexError) {
    #expect(throws: error) { try NDEFBytes(hexText: Array(text.utf8)) }
  }

  @Test func convertsToStringsOnlyWhenValid() {
    #expect(NDEFBytes(utf8: "é").utf8String == "é")
    #expect(NDEFBytes([0xFF]).utf8String == nil)
    #expect(NDEFBytes(utf8: "é").asciiString == nil)
    #expect(NDEFBytes(utf8: "T").asciiString == "T")
  }
}
