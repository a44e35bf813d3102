import MCUmgr
import Testing

/// The encoder and decoder against RFC 8949's examples (Appendix A) and its rules for malformed input.
@Suite struct CBORTests {
  static func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
      let next = text.index(index, offsetBy: 2)
      bytes.append(UInt8(text[index..<next], radix: 16)!)
      index = next
    }
    return bytes
  }

  /// RFC 8949 Appendix A: each value and its preferred encoding.
  static let examples: [(CBORValue, String)] = [
    (0, "00"), (1, "01"), (10, "0a"), (23, "17"), (24, "1818"), (25, "1819"), (100, "1864"),
    (1000, "1903e8"), (1_000_000, "1a000f4240"), (.unsigned(1_000_000_000_000), "1b000000e8d4a51000"),
    (.unsigned(18_446_744_073_709_551_615), "1bffffffffffffffff"),
    (.negative(18_446_744_073_709_551_615), "3bffffffffffffffff"),
    (-1, "20"), (-10, "29"), (-100, "3863"), (-1000, "3903e7"), (false, "f4"), (true, "f5"), (nil, "f6"),
    (.undefined, "f7"), (.bytes([]), "40"), (.bytes([1, 2, 3, 4]), "4401020304"), ("", "60"), ("a", "6161"),
    ("IETF", "6449455446"), ("\"\\", "62225c"), ("\u{00fc}", "62c3bc"), ("\u{6c34}", "63e6b0b4"),
    ("\u{10151}", "64f0908591"), ([], "80"), ([1, 2, 3], "83010203"), ([1, [2, 3], [4, 5]], "8301820203820405"),
    (.array((1...25).map { .int($0) }), "98190102030405060708090a0b0c0d0e0f101112131415161718181819"),
    ([:], "a0"), ([1: 2, 3: 4], "a201020304"), (["a": 1, "b": [2, 3]], "a26161016162820203"),
    (["a", ["b": "c"]], "826161a161626163"),
    (["a": "A", "b": "B", "c": "C", "d": "D", "e": "E"], "a56161614161626142616361436164614461656145"),
  ]

  @Test func encodesRFC8949ExamplesInPreferredSerialization() {
    for (value, encoded) in Self.examples {
      #expect(CBOREncoder.encode(value) == Self.hex(encoded), "\(value)")
    }
  }

  @Test func decodesRFC8949Examples() throws {
    for (value, encoded) in Self.examples {
      #expect(try CBORDecoder().decode(Self.hex(encoded)) == value, "\(encoded)")
    }
  }

  @Test func decodesIndefiniteLengthItemsOfRFC8949() throws {
    let decoder = CBORDecoder()
    #expect(try decoder.decode(Self.hex("5f42010243030405ff")) == .bytes([1, 2, 3, 4, 5]))
    #expect(try decoder.decode(Self.hex("7f657374726561646d696e67ff")) == "streaming")
    #expect(try decoder.decode(Self.hex("9fff")) == [])
    #expect(try decoder.decode(Self.hex("9f018202039f0405ffff")) == [1, [2, 3], [4, 5]])
    #expect(try decoder.decode(Self.hex("83018202039f0405ff")) == [1, [2, 3], [4, 5]])
    #expect(try decoder.decode(Self.hex("bf61610161629f0203ffff")) == ["a": 1, "b": [2, 3]])
    #expect(try decoder.decode(Self.hex("826161bf61626163ff")) == ["a", ["b": "c"]])
    #expect(try decoder.decode(Self.hex("bf6346756ef563416d7421ff")) == ["Fun": true, "Amt": -2])
  }

  @Test func acceptsIntegersAndLengthsWiderThanNeeded() throws {
    #expect(try CBORDecoder().decode(Self.hex("1b0000000000000005")) == 5)
    #expect(try CBORDecoder().decode(Self.hex("590002aabb")) == .bytes([0xAA, 0xBB]))
  }

  @Test func refusesMalformedInputWithTheOffsetAtFault() {
    let cases: [(String, CBORError)] = [
      ("", CBORError(.truncated, at: 0)),
      ("18", CBORError(.truncated, at: 0)),
      ("1900", CBORError(.truncated, at: 0)),
      ("8201020304", CBORError(.trailingBytes(count: 2), at: 3)),
      ("8201", CBORError(.lengthExceedsInput(2), at: 0)),
      ("8301820203820405ff", CBORError(.trailingBytes(count: 1), at: 8)),
      ("1c", CBORError(.reservedAdditionalInformation(28), at: 0)),
      ("811e", CBORError(.reservedAdditionalInformation(30), at: 1)),
      ("ff", CBORError(.unexpectedBreak, at: 0)),
      ("8201ff", CBORError(.unexpectedBreak, at: 2)),
      ("62c328", CBORError(.invalidUTF8, at: 0)),
      ("c11a514b67b0", CBORError(.unsupported("tag"), at: 0)),
      ("f93c00", CBORError(.unsupported("floating-point number"), at: 0)),
      ("f0", CBORError(.unsupported("simple value"), at: 0)),
      ("f820", CBORError(.unsupported("simple value"), at: 0)),
      ("1f", CBORError(.unsupported("indefinite integer"), at: 0)),
      ("5f6161ff", CBORError(.invalidChunk, at: 1)),
      ("5f5f4101ffff", CBORError(.invalidChunk, at: 1)),
      ("7f61c361bcff", CBORError(.invalidUTF8, at: 1)),
      ("5f4101", CBORError(.truncated, at: 3)),
      ("9f01", CBORError(.truncated, at: 2)),
      ("bf6161ff", CBORError(.missingMapValue, at: 3)),
      ("a2616101616102", CBORError(.duplicateKey, at: 4)),
      ("5a7fffffff00", CBORError(.lengthExceedsInput(0x7FFF_FFFF), at: 0)),
      ("9bffffffffffffffff00", CBORError(.lengthExceedsInput(UInt64.max), at: 0)),
      ("ba0000000200", CBORError(.lengthExceedsInput(2), at: 0)),
    ]
    for (input, expected) in cases {
      #expect(throws: expected, "\(input)") { try CBORDecoder().decode(Self.hex(input)) }
    }
  }

  @Test func refusesNestingDeeperThanTheLimit() throws {
    let deep = [UInt8](repeating: 0x81, count: 4) + [0x00]
    #expect(try CBORDecoder(maximumDepth: 4).decode(deep) == [[[[0]]]])
    #expect(throws: CBORError(.nestingTooDeep(limit: 3), at: 3)) { try CBORDecoder(maximumDepth: 3).decode(deep) }
    // A million nested arrays is refused at the limit, without recursing a million times.
    let hostile = [UInt8](repeating: 0x9F, count: 1_000_000)
    #expect(throws: CBORError(.nestingTooDeep(limit: 16), at: 16)) { try CBORDecoder().decode(hostile) }
  }

  @Test func decodePrefixSaysHowManyBytesTheFirstItemTook() throws {
    let (value, length) = try CBORDecoder().decodePrefix(Self.hex("a1616101ffee"))
    #expect(value == ["a": 1])
    #expect(length == 4)
  }

  @Test func lookupsReadSMPStyleMaps() throws {
    let body = try CBORDecoder().decode(CBOREncoder.encode(["off": 512, "match": true, "rc": -3, "sha": .bytes([1])]))
    #expect(body["off"]?.uint64Value == 512)
    #expect(body["match"]?.boolValue == true)
    #expect(body["rc"]?.intValue == -3)
    #expect(body["sha"]?.bytesValue == [1])
    #expect(body["missing"] == nil)
    #expect(CBORValue.int(Int.min).intValue == Int.min)
    #expect(CBORValue.unsigned(UInt64.max).intValue == nil)
  }

  @Test func errorsDescribeTheFaultAndItsOffset() {
    #expect("\(CBORError(.duplicateKey, at: 7))" == "CBOR: a map key that appears twice at byte 7")
  }
}
