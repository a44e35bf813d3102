import NFCKit
import Testing

/// The hostile inputs listed by the codec's requirements, each pinned to its typed error, the offset of the
/// offending byte and a statement of what was expected there.
@Suite struct NDEFHostileInputTests {
  struct Case: CustomTestStringConvertible, Sendable {
    var name: String
    var bytes: [UInt8]
    var code: NDEFError.Code
    var offset: Int
    var testDescription: String { name }
  }

  static let cases: [Case] = [
    Case(name: "truncated header", bytes: hex("D1 01"), code: .truncated, offset: 2),
    Case(name: "truncated long header", bytes: hex("C1 01 00 00"), code: .truncated, offset: 2),
    Case(name: "truncated payload", bytes: hex("D1 01 08 54 02656E"), code: .lengthOutOfBounds, offset: 2),
    Case(name: "type length past the end", bytes: hex("D1 05 00 54"), code: .lengthOutOfBounds, offset: 1),
    Case(name: "ID length past the end", bytes: hex("D9 01 00 09 54 69"), code: .lengthOutOfBounds, offset: 3),
    Case(
      name: "4 GiB payload length on a 10-byte buffer", bytes: hex("C1 01 FFFFFFFF 54 000000"),
      code: .lengthOutOfBounds, offset: 2),
    Case(name: "no MB on the first record", bytes: hex("51 01 01 55 00"), code: .missingMessageBegin, offset: 0),
    Case(
      name: "MB on a second record", bytes: hex("91 01 01 55 00  D1 01 01 55 00"), code: .unexpectedMessageBegin,
      offset: 5),
    Case(name: "no ME on the last record", bytes: hex("91 01 01 55 00"), code: .missingMessageEnd, offset: 5),
    Case(
      name: "a record after the ME record", bytes: hex("D1 01 01 55 00  D1 01 01 55 00"), code: .trailingBytes,
      offset: 5),
    Case(name: "lone unchanged record", bytes: hex("D6 00 01 41"), code: .unexpectedUnchangedRecord, offset: 0),
    Case(
      name: "middle chunk with TNF 5", bytes: hex("B5 00 01 41  35 00 01 42  56 00 01 43"), code: .invalidChunk,
      offset: 4),
    Case(
      name: "terminating chunk with a type", bytes: hex("B5 00 01 41  56 01 01 54 43"), code: .invalidChunk,
      offset: 5),
    Case(name: "ME on a first chunk", bytes: hex("F5 00 01 41  56 00 01 43"), code: .invalidChunk, offset: 0),
    Case(
      name: "chunked record without a terminating chunk", bytes: hex("B5 00 01 41  36 00 01 42"), code: .truncated,
      offset: 8),
    Case(
      name: "IL on a middle chunk", bytes: hex("B5 00 01 41  3E 00 01 00 42  56 00 01 43"), code: .invalidChunk,
      offset: 4),
    Case(
      name: "IL on a terminating chunk", bytes: hex("B5 00 01 41  5E 00 01 01 69 43"), code: .invalidChunk, offset: 4
    ),
    Case(
      name: "4 GiB length on a terminating chunk", bytes: hex("B5 00 01 41  46 00 FFFFFFFF 00"),
      code: .lengthOutOfBounds, offset: 6),
    Case(name: "invalid UTF-8 in Text", bytes: hex("D1 01 06 54 02656E 68C328"), code: .invalidUTF8, offset: 9),
    Case(
      name: "unpaired UTF-16 surrogate in Text", bytes: hex("D1 01 07 54 82656E D83D 0041"), code: .invalidUTF16,
      offset: 7),
    Case(name: "odd UTF-16 length in Text", bytes: hex("D1 01 06 54 82656E 0041 00"), code: .invalidUTF16, offset: 9),
    // The fifth nested message (poster 5's payload) is one level too deep: each level is a 6-byte header,
    // "Sp" and a 5-byte URI record before the next poster, so poster 5's payload starts at 4 * 13 + 8.
    Case(
      name: "Smart Posters nested 100,000 deep", bytes: nestedSmartPosters(depth: 100_000), code: .nestingTooDeep,
      offset: 60),
  ]

  @Test(arguments: cases)
  func hostileInputGivesATypedErrorAtTheOffendingByteSayingWhatWasExpected(_ hostile: Case) {
    guard let error = expectDecodeError(hostile.bytes, hostile.code, at: hostile.offset) else { return }
    #expect(!error.expected.isEmpty && !error.message.isEmpty, "\(error)")
    #expect(error.description.hasPrefix("\(hostile.code) at byte \(hostile.offset): "), "\(error)")
    #expect(!error.description.contains("\n"), "\(error)")
  }

  @Test func everyPrefixOfAHostileInputFailsInsideItsBoundsOrDecodes() {
    // A prefix can be a valid message (the record before trailing bytes); otherwise its error must point
    // inside the bytes given.
    for hostile in Self.cases where hostile.bytes.count < 100 {
      for length in 0..<hostile.bytes.count {
        let bytes = Array(hostile.bytes[..<length])
        if let error = decodeError(bytes) {
          #expect((0...bytes.count).contains(error.offset), "\(hostile.name), \(length) bytes: \(error)")
        }
      }
    }
  }

  @Test func noNestingLimitLetsHostileInputRecursePastTheCeiling() {
    var options = NDEFDecodingOptions()
    options.maxNestingDepth = .max
    options.maxRecords = .max
    let ceiling = NDEFDecodingOptions.nestingDepthCeiling
    #expect(decodeError(nestedSmartPosters(depth: ceiling), options: options) == nil)
    #expect(decodeError(nestedSmartPosters(depth: ceiling + 1), options: options)?.code == .nestingTooDeep)
    #expect(decodeError(nestedSmartPosters(depth: 100_000), options: options)?.code == .nestingTooDeep)
  }

  @Test func theDefaultNestingLimitAcceptsFourSmartPostersDeep() {
    #expect(decodeError(nestedSmartPosters(depth: 4)) == nil)
    #expect(decodeError(nestedSmartPosters(depth: 5))?.code == .nestingTooDeep)
  }
}
