import NFCKit
import Testing

@Suite struct NDEFDecoderTests {
  // MARK: Header fields

  @Test func decodesAShortWellKnownRecordWithTypeAndPayload() throws {
    let message = try NDEFDecoder().decode(hex("D1 01 08 54 02656E 68656C6C6F"))
    #expect(message.records.count == 1)
    let record = message.records[0]
    #expect(record.typeNameFormat == .nfcWellKnown)
    #expect(record.type == [0x54])
    #expect(record.identifier.isEmpty)
    #expect(record.payload.hex == "02656e68656c6c6f")
  }

  @Test func decodesALongRecordWithAFourBytePayloadLength() throws {
    let payload = (0..<300).map { UInt8($0 & 0xFF) }
    let bytes = hex("C2 0A 0000012C") + Array("text/plain".utf8) + payload
    let record = try NDEFDecoder().decode(bytes).records[0]
    #expect(record.typeNameFormat == .media)
    #expect(record.mediaType == "text/plain")
    #expect(record.payload.array == payload)
  }

  @Test func acceptsALongRecordWithASmallPayloadAndReencodesItShort() throws {
    // SR clear with a 3-byte payload is legal but not canonical; the canonical encoding uses SR.
    let bytes = hex("C5 00 00000003 AABBCC")
    let message = try NDEFDecoder().decode(bytes)
    #expect(message.records[0].payload == [0xAA, 0xBB, 0xCC])
    #expect(message.encoded() == hex("D5 00 03 AABBCC"))
  }

  @Test func readsTheIdentifierWhenILIsSet() throws {
    let record = try NDEFDecoder().decode(hex("D9 01 01 02 55 6964 00")).records[0]
    #expect(record.identifier.asciiString == "id")
    #expect(record.type == [0x55])
    #expect(record.payload == [0x00])
  }

  @Test func acceptsILWithAZeroLengthIdentifierAndDropsItWhenReencoding() throws {
    let message = try NDEFDecoder().decode(hex("D9 01 01 00 55 00"))
    #expect(message.records[0].identifier.isEmpty)
    #expect(message.encoded() == hex("D1 01 01 55 00"))
  }

  @Test func decodesTheEmptyRecordMessage() throws {
    let message = try NDEFDecoder().decode(hex("D0 00 00"))
    #expect(message == .empty)
    #expect(message.isEmpty)
    #expect(message.records[0].typeNameFormat == .empty)
  }

  @Test func rejectsZeroBytesAsAZeroLengthMessage() {
    expectDecodeError([], .zeroLengthMessage, at: 0)
  }

  @Test(arguments: [
    ("D1 01 00 78", TypeNameFormat.nfcWellKnown),
    ("D2 0A 00 746578742F706C61696E", .media),
    ("D3 0E 00 68747470733A2F2F612E636F2F74", .absoluteURI),
    ("D4 0E 00 6578616D706C652E636F6D3A7879", .nfcExternal),
    ("D5 00 02 0102", .unknown),
    ("D7 02 01 AB CD EF", .reserved),
    ("D7 00 00", .reserved),
  ])
  func decodesAndReencodesEveryTypeNameFormat(hexText: String, format: TypeNameFormat) throws {
    let bytes = hex(hexText)
    let message = try NDEFDecoder().decode(bytes)
    #expect(message.records[0].typeNameFormat == format)
    #expect(message.encoded() == bytes)
  }

  @Test func decodesTheTypeNameFormatFromTheLowThreeBitsOfEveryHeader() throws {
    for format in TypeNameFormat.allCases where format != .unchanged && format != .empty {
      let type: [UInt8] = format == .unknown ? [] : [0x78]
      let bytes = [0xD0 | format.rawValue, UInt8(type.count), 0x00] + type
      #expect(try NDEFDecoder().decode(bytes).records[0].typeNameFormat == format)
    }
  }

  // MARK: Zero copy

  @Test func decodedFieldsAreViewsOfTheInputBuffer() throws {
    let bytes = hex("D9 01 05 02 54 6964 02656E6869")
    let record = try NDEFDecoder().decode(bytes).records[0]
    let base = bytes.withUnsafeBytes { Int(bitPattern: $0.baseAddress) }
    #expect(record.type.withUnsafeBytes { Int(bitPattern: $0.baseAddress) } == base + 4)
    #expect(record.identifier.withUnsafeBytes { Int(bitPattern: $0.baseAddress) } == base + 5)
    #expect(record.payload.withUnsafeBytes { Int(bitPattern: $0.baseAddress) } == base + 7)
  }

  @Test func longPayloadsAndRecordsNestedInASmartPosterAreViewsOfTheInputToo() throws {
    let long = NDEFMessage(try .unknown(payload: NDEFBytes(Array(repeating: 7, count: 100_000)))).encoded()
    let record = try NDEFDecoder().decode(long).records[0]
    let longBase = long.withUnsafeBytes { Int(bitPattern: $0.baseAddress) }
    #expect(record.payload.withUnsafeBytes { Int(bitPattern: $0.baseAddress) } == longBase + 6)

    // The example's Smart Poster payload starts at byte 5, its URI record's payload at byte 9.
    let poster = SmartPosterRecordTests.example
    let posterBase = poster.withUnsafeBytes { Int(bitPattern: $0.baseAddress) }
    let outer = try NDEFDecoder().decode(poster).records[0]
    #expect(outer.payload.withUnsafeBytes { Int(bitPattern: $0.baseAddress) } == posterBase + 5)
    let nested = try NDEFDecoder().decode(outer.payload).records[0]
    #expect(nested.payload.withUnsafeBytes { Int(bitPattern: $0.baseAddress) } == posterBase + 9)
  }

  @Test func offsetsCountFromTheStartOfASliceInput() {
    let buffer = hex("FFFF D1 01 05 54")
    do {
      _ = try NDEFDecoder().decode(buffer[2...])
      Issue.record("decoded a truncated message")
    } catch {
      #expect(error.code == .lengthOutOfBounds)
      #expect(error.offset == 2)
    }
  }

  // MARK: MB and ME

  @Test func decodesSeveralRecordsWithMBOnTheFirstAndMEOnTheLast() throws {
    let message = try NDEFDecoder().decode(hex("91 01 01 55 00  11 01 01 55 00  51 01 01 55 00"))
    #expect(message.records.count == 3)
  }

  @Test func rejectsAFirstRecordWithoutMB() {
    expectDecodeError(hex("51 01 01 55 00"), .missingMessageBegin, at: 0)
  }

  @Test func rejectsMBOnALaterRecord() {
    expectDecodeError(hex("91 01 01 55 00  D1 01 01 55 00"), .unexpectedMessageBegin, at: 5)
  }

  @Test func rejectsAMessageWhoseLastRecordLacksME() {
    let error = expectDecodeError(hex("91 01 01 55 00  11 01 01 55 00"), .missingMessageEnd, at: 10)
    #expect(error?.expected.contains("ME") == true)
  }

  @Test func rejectsBytesAfterTheMERecord() {
    expectDecodeError(hex("D1 01 01 55 00 00"), .trailingBytes, at: 5)
  }

  // MARK: Truncation and lengths

  @Test func rejectsAHeaderByteWithNothingAfterIt() {
    let error = expectDecodeError(hex("D1"), .truncated, at: 1)
    #expect(error?.context["field"] == "TYPE_LENGTH")
  }

  @Test func rejectsAMissingShortPayloadLength() {
    expectDecodeError(hex("D1 01"), .truncated, at: 2)
  }

  @Test func rejectsAFourBytePayloadLengthCutShort() {
    let error = expectDecodeError(hex("C1 01 00 00"), .truncated, at: 2)
    #expect(error?.expected == "4 bytes of PAYLOAD_LENGTH (SR clear), 2 available")
  }

  @Test func rejectsAMissingIDLength() {
    expectDecodeError(hex("D9 01 01"), .truncated, at: 3)
  }

  @Test func rejectsATypeLengthPastTheEnd() {
    let error = expectDecodeError(hex("D1 05 00 54"), .lengthOutOfBounds, at: 1)
    #expect(error?.context["field"] == "TYPE_LENGTH")
  }

  @Test func rejectsAnIDLengthPastTheEnd() {
    expectDecodeError(hex("D9 01 00 09 54 69"), .lengthOutOfBounds, at: 3)
  }

  @Test func rejectsAPayloadLengthPastTheEnd() {
    let error = expectDecodeError(hex("D1 01 08 54 02656E"), .lengthOutOfBounds, at: 2)
    #expect(error?.expected == "at most 3 bytes, the rest of the input")
  }

  @Test func rejectsAFourGibibytePayloadLengthOnATenByteBufferWithoutAllocating() {
    let error = expectDecodeError(hex("C1 01 FFFFFFFF 54 000000"), .lengthOutOfBounds, at: 2)
    #expect(error?.message.contains("4294967295") == true)
  }

  @Test func everyProperPrefixOfAValidMessageIsRejected() throws {
    let bytes = try NDEFMessage(
      .text("hi"), .uri("https://example.com", identifier: [1]),
      .media(type: "text/plain", payload: NDEFBytes(Array(repeating: 0x41, count: 300)))
    ).encoded()
    for length in 0..<bytes.count {
      let error = decodeError(Array(bytes[..<length]))
      #expect(error != nil, "prefix of \(length) bytes decoded")
      if let error { #expect(error.offset <= length, "\(error)") }
    }
  }

  // MARK: TNF rules

  @Test func rejectsAnEmptyRecordWithAType() {
    expectDecodeError(hex("D0 01 00 54"), .invalidTypeLength, at: 1)
  }

  @Test func rejectsAnEmptyRecordWithAPayload() {
    expectDecodeError(hex("D0 00 01 00"), .invalidEmptyRecord, at: 2)
  }

  @Test func rejectsAnEmptyRecordWithAnIdentifier() {
    expectDecodeError(hex("D8 00 00 01 00"), .invalidEmptyRecord, at: 3)
  }

  @Test(arguments: [0xD1, 0xD2, 0xD3, 0xD4] as [UInt8])
  func rejectsATypedRecordWithAnEmptyType(header: UInt8) {
    expectDecodeError([header, 0x00, 0x00], .invalidTypeLength, at: 1)
  }

  @Test func rejectsAnUnknownRecordWithAType() {
    expectDecodeError(hex("D5 01 00 54"), .invalidTypeLength, at: 1)
  }

  @Test func rejectsALoneUnchangedRecord() {
    // ndeflib accepts this message; the NDEF spec allows TNF 6 only on middle and terminating chunks.
    let error = expectDecodeError(hex("D6 00 01 41"), .unexpectedUnchangedRecord, at: 0)
    #expect(error?.expected.contains("middle and terminating chunks") == true)
  }

  // MARK: Chunks

  /// "text/plain" with ID "a" in three chunks: "Hel", "lo, ", "world".
  static let chunked = hex(
    "BA 0A 03 01 746578742F706C61696E 61 48656C"  // first chunk: MB CF SR IL, TNF 2
      + " 36 00 04 6C6F2C20"  // middle chunk: CF SR, TNF 6
      + " 56 00 05 776F726C64")  // terminating chunk: ME SR, TNF 6

  @Test func reassemblesChunksIntoOneRecordWithTheFirstChunksTypeAndIdentifier() throws {
    let message = try NDEFDecoder().decode(Self.chunked)
    #expect(message.records.count == 1)
    let record = message.records[0]
    #expect(record.typeNameFormat == .media)
    #expect(record.mediaType == "text/plain")
    #expect(record.identifier == [0x61])
    #expect(record.payload.utf8String == "Hello, world")
    #expect(message.encoded() == hex("DA 0A 0C 01 746578742F706C61696E 61 48656C6C6F2C20776F726C64"))
  }

  @Test func reassemblesAChunkedRecordBetweenOtherRecords() throws {
    let bytes = hex("91 01 01 55 00  35 00 02 4142  36 00 01 43  16 00 00  51 01 01 55 00")
    let message = try NDEFDecoder().decode(bytes)
    #expect(message.records.count == 3)
    #expect(message.records[1].typeNameFormat == .unknown)
    #expect(message.records[1].payload == [0x41, 0x42, 0x43])
  }

  @Test func rejectsAMiddleChunkWithAnotherTNF() {
    let error = expectDecodeError(hex("B5 00 01 41  35 00 01 42  56 00 01 43"), .invalidChunk, at: 4)
    #expect(error?.expected == "TNF 6 (unchanged) on a middle or terminating chunk")
  }

  @Test func rejectsATerminatingChunkWithAnotherTNF() {
    expectDecodeError(hex("B5 00 01 41  36 00 01 42  52 01 01 54 43"), .invalidChunk, at: 8)
  }

  @Test func rejectsAMiddleChunkWithATypeLength() {
    expectDecodeError(hex("B5 00 01 41  36 01 01 54 42  56 00 01 43"), .invalidChunk, at: 5)
  }

  @Test func rejectsILOnAMiddleChunk() {
    let error = expectDecodeError(hex("B5 00 01 41  3E 00 01 00 42  56 00 01 43"), .invalidChunk, at: 4)
    #expect(error?.context["field"] == "IL")
  }

  @Test func rejectsILOnATerminatingChunkEvenWithAnEmptyIdentifier() {
    expectDecodeError(hex("B5 00 01 41  5E 00 01 00 43"), .invalidChunk, at: 4)
  }

  @Test func acceptsILWithAnIdentifierOnTheFirstChunk() throws {
    let record = try NDEFDecoder().decode(hex("BD 00 01 01 69 41  56 00 01 43")).records[0]
    #expect(record.identifier == [0x69])
    #expect(record.payload == [0x41, 0x43])
  }

  @Test func rejectsAFirstChunkWithTNFUnchanged() {
    expectDecodeError(hex("B6 00 01 41  56 00 01 43"), .unexpectedUnchangedRecord, at: 0)
  }

  @Test func rejectsMEOnAFirstChunk() {
    expectDecodeError(hex("F5 00 01 41  56 00 01 43"), .invalidChunk, at: 0)
  }

  @Test func rejectsMEOnAMiddleChunkThatStillHasCF() {
    expectDecodeError(hex("B5 00 01 41  76 00 01 42"), .invalidChunk, at: 4)
  }

  @Test func rejectsMBOnAMiddleChunk() {
    expectDecodeError(hex("B5 00 01 41  D6 00 01 42"), .unexpectedMessageBegin, at: 4)
  }

  @Test func rejectsAChunkSequenceThatEndsWithoutATerminatingChunk() {
    let error = expectDecodeError(hex("B5 00 01 41  36 00 01 42"), .truncated, at: 8)
    #expect(error?.expected == "a middle or terminating chunk (TNF 6, unchanged)")
  }

  @Test func acceptsShortAndNormalLayoutsMixedWithinOneChunkedRecord() throws {
    // Parsers must accept both layouts on any record, chunks included (NDEF 1.0, 3.2.4 and 4.3).
    let bytes = hex("A5 00 00000001 41  36 00 01 42  46 00 00000001 43")
    let message = try NDEFDecoder().decode(bytes)
    #expect(message.records[0].payload == [0x41, 0x42, 0x43])
    #expect(message.encoded() == hex("D5 00 03 414243"))
  }

  @Test func acceptsChunksWithEmptyPayloads() throws {
    let record = try NDEFDecoder().decode(hex("B2 0A 00 746578742F706C61696E  36 00 00  56 00 01 43")).records[0]
    #expect(record.mediaType == "text/plain")
    #expect(record.payload == [0x43])
  }

  @Test func acceptsAnEmptyRecordWithILAndAZeroIDLength() throws {
    // ID_LENGTH 0 is allowed (NDEF 1.0, 3.2.8); TNF 0 only requires the three lengths to be zero.
    let message = try NDEFDecoder().decode(hex("D8 00 00 00"))
    #expect(message == .empty)
    #expect(message.encoded() == hex("D0 00 00"))
  }

  @Test func rejectsAChunkPayloadCutShort() {
    expectDecodeError(hex("B5 00 01 41  56 00 05 43"), .lengthOutOfBounds, at: 6)
  }

  @Test func rejectsAChunkedEmptyRecord() {
    expectDecodeError(hex("B0 00 00  56 00 00"), .invalidChunk, at: 0)
  }

  // MARK: Limits

  @Test func rejectsMoreRecordsThanTheLimitCountingChunks() {
    var options = NDEFDecodingOptions()
    options.maxRecords = 2
    expectDecodeError(hex("91 01 01 55 00  11 01 01 55 00  51 01 01 55 00"), .tooManyRecords, at: 10, options: options)
    expectDecodeError(hex("B5 00 01 41  36 00 01 42  56 00 01 43"), .tooManyRecords, at: 8, options: options)
    options.maxRecords = 3
    #expect(decodeError(hex("B5 00 01 41  36 00 01 42  56 00 01 43"), options: options) == nil)
  }

  @Test func rejectsAPayloadLargerThanTheLimit() {
    var options = NDEFDecodingOptions()
    options.maxPayloadSize = 2
    expectDecodeError(hex("D5 00 03 414243"), .payloadTooLarge, at: 2, options: options)
    #expect(decodeError(hex("D5 00 02 4142"), options: options) == nil)
  }

  @Test func rejectsAReassembledPayloadLargerThanTheLimit() {
    var options = NDEFDecodingOptions()
    options.maxPayloadSize = 2
    expectDecodeError(hex("B5 00 01 41  36 00 01 42  56 00 01 43"), .payloadTooLarge, at: 10, options: options)
  }

  @Test func defaultLimitsAreSafe() {
    let options = NDEFDecodingOptions()
    #expect(options.maxRecords == 4096)
    #expect(options.maxNestingDepth == 4)
    #expect(options.maxPayloadSize == 16 * 1024 * 1024)
    #expect(options.validatesWellKnownPayloads)
  }

  // MARK: Well-known payloads

  @Test func rejectsInvalidUTF8InATextRecordAtItsOffsetInTheInput() {
    // Record 2's text "h\xC3(" : the byte after C3 is not a continuation byte.
    let bytes = hex("91 01 01 55 00  51 01 06 54 02656E 68C328")
    expectDecodeError(bytes, .invalidUTF8, at: 14)
  }

  @Test func withoutPayloadValidationDecodesAndLeavesTheErrorToTheTypedView() throws {
    var options = NDEFDecodingOptions()
    options.validatesWellKnownPayloads = false
    let message = try NDEFDecoder(options: options).decode(hex("D1 01 06 54 02656E 68C328"))
    let error = thrownError { () throws(NDEFError) in try TextRecord(message.records[0]) }
    #expect(error?.code == .invalidUTF8)
    #expect(error?.offset == 5)
    #expect(error?.context["relativeTo"] == "payload")
  }

  @Test func reportsATextErrorInsideAReassembledRecordAtItsOffsetInTheInput() {
    // Text "en" + "ab" + "\xFF": chunks "02656E", "6162", "FF"; the bad byte is the terminating chunk's payload.
    let bytes = hex("B1 01 03 54 02656E  36 00 02 6162  56 00 01 FF")
    expectDecodeError(bytes, .invalidUTF8, at: 15)
  }

  @Test func reportsAURIErrorInsideASmartPosterAtItsOffsetInTheInput() {
    // Sp payload: one URI record whose URI field holds the control character 0x01.
    let bytes = hex("D1 02 06 5370  D1 01 02 55 00 01")
    expectDecodeError(bytes, .invalidURI, at: 10)
    let error = thrownError { () throws(NDEFError) in try NDEFDecoder().decode(bytes) }
    #expect(error?.context["record"] == "0" && error?.context["depth"] == "1", "\(String(describing: error))")
  }

  @Test func rejectsSmartPostersNestedDeeperThanTheLimit() throws {
    // Six Smart Posters, each holding its own URI and the next Smart Poster as an additional record.
    var poster = try SmartPosterRecord(uri: URIRecord(uri: "https://a.example")).record()
    for _ in 0..<5 {
      poster = try SmartPosterRecord(uri: URIRecord(uri: "https://b.example"), additionalRecords: [poster]).record()
    }
    let bytes = NDEFMessage(poster).encoded()
    let error = decodeError(bytes)
    #expect(error?.code == .nestingTooDeep)
    var options = NDEFDecodingOptions()
    options.maxNestingDepth = 6
    #expect(decodeError(bytes, options: options) == nil)
    options.maxNestingDepth = 5
    #expect(decodeError(bytes, options: options)?.code == .nestingTooDeep)
  }

  @Test func aNegativeNestingLimitStillReadsMessagesWithoutSmartPosters() throws {
    var options = NDEFDecodingOptions()
    options.maxNestingDepth = -1
    let decoder = NDEFDecoder(options: options)
    #expect(try decoder.decode(hex("D1 01 02 55 00 61")).records.count == 1)
    let poster = try SmartPosterRecord(uri: URIRecord(uri: "tel:1")).record()
    #expect(
      thrownError { () throws(NDEFError) in try decoder.decode(NDEFMessage(poster).encoded()) }?.code == .nestingTooDeep
    )
  }

  @Test func negativeLimitsActAsZero() {
    let bytes = hex("D1 01 02 55 00 61")
    var records = NDEFDecodingOptions()
    records.maxRecords = -5
    let tooMany = thrownError { () throws(NDEFError) in try NDEFDecoder(options: records).decode(bytes) }
    #expect(tooMany?.code == .tooManyRecords)
    #expect(tooMany?.message == "more than 0 records")
    var payload = NDEFDecodingOptions()
    payload.maxPayloadSize = -1
    let tooLarge = thrownError { () throws(NDEFError) in try NDEFDecoder(options: payload).decode(bytes) }
    #expect(tooLarge?.code == .payloadTooLarge)
    #expect(tooLarge?.expected.contains("at most 0 bytes") == true)
  }
}
