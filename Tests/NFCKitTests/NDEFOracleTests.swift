import Foundation
import NFCKit
import ReaderCore
import Testing

/// NFCKit against an independent implementation: Python ndeflib 0.3.3 (`bash .ci/ndef-oracle.sh` installs it).
///
/// Where ndeflib and the NFC Forum specification disagree, NFCKit follows the specification; the
/// `…ThoughNdeflib…` checks pin each such case on both sides.
///
/// The checks run as the cases of one test, so that where ndeflib is not installed one line says they
/// were skipped and how to enable them (`OracleRunner.enabled`); CI (`READERKIT_CI=1`) requires them.
@Suite(.timeLimit(.minutes(1))) struct NDEFOracleTests {
  /// One comparison with ndeflib, named after the behaviour it pins.
  enum Check: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case decodesTheNdeflibCorpusRecordByRecord
    case reencodesEveryUnchunkedCorpusMessageToTheSameBytes
    case reassemblesNdeflibsChunkSequencesIntoTheJoinedRecord
    case theCorpusCoversEveryRecordKindLayoutAndChunking
    case chunkingNdeflibsMessagesInTheTestReassemblesToNdeflibsRecords
    case ndeflibDecodesWhatNFCKitEncodes
    case loneUnchangedRecordIsRejectedThoughNdeflibAcceptsIt
    case brokenChunkSequencesAreRejectedThoughNdeflibAcceptsThem
    case bytesAfterTheMERecordAreRejectedThoughNdeflibIgnoresThem
    case zeroBytesAreNotAMessageThoughNdeflibReturnsNoRecords
    case reservedTNF7IsAcceptedThoughNdeflibRejectsIt
    case reservedURIIdentifierCodesReadAsNoAbbreviationThoughNdeflibRejectsThem
    case typesOutsideTheirTNFGrammarAreKeptThoughNdeflibRejectsThem
    case utf16TextWithoutABOMIsBigEndianThoughNdeflibReadsItInHostOrder
    case payloadsOverOneMebibyteDecodeThoughNdeflibCapsThem
    case smartPosterWithTwoActionRecordsIsRejectedThoughNdeflibAcceptsIt
    case smartPosterWithTwoTitlesInOneLanguageIsRejectedThoughNdeflibKeepsTheLast
    case recordsAfterASmartPosterAreNotReadWithItsLocalTypesThoughNdeflibDoes

    var testDescription: String { rawValue }
  }

  @Test(.enabled(if: OracleRunner.enabled, OracleRunner.skipNote), arguments: Check.allCases)
  func agreesWithNdeflib(_ check: Check) async throws {
    try OracleRunner.requireInstalled()
    switch check {
    case .decodesTheNdeflibCorpusRecordByRecord: try await decodesTheNdeflibCorpusRecordByRecord()
    case .reencodesEveryUnchunkedCorpusMessageToTheSameBytes:
      try await reencodesEveryUnchunkedCorpusMessageToTheSameBytes()
    case .reassemblesNdeflibsChunkSequencesIntoTheJoinedRecord:
      try await reassemblesNdeflibsChunkSequencesIntoTheJoinedRecord()
    case .theCorpusCoversEveryRecordKindLayoutAndChunking: try await theCorpusCoversEveryRecordKindLayoutAndChunking()
    case .chunkingNdeflibsMessagesInTheTestReassemblesToNdeflibsRecords:
      try await chunkingNdeflibsMessagesInTheTestReassemblesToNdeflibsRecords()
    case .ndeflibDecodesWhatNFCKitEncodes: try await ndeflibDecodesWhatNFCKitEncodes()
    case .loneUnchangedRecordIsRejectedThoughNdeflibAcceptsIt:
      try await loneUnchangedRecordIsRejectedThoughNdeflibAcceptsIt()
    case .brokenChunkSequencesAreRejectedThoughNdeflibAcceptsThem:
      try await brokenChunkSequencesAreRejectedThoughNdeflibAcceptsThem()
    case .bytesAfterTheMERecordAreRejectedThoughNdeflibIgnoresThem:
      try await bytesAfterTheMERecordAreRejectedThoughNdeflibIgnoresThem()
    case .zeroBytesAreNotAMessageThoughNdeflibReturnsNoRecords:
      try await zeroBytesAreNotAMessageThoughNdeflibReturnsNoRecords()
    case .reservedTNF7IsAcceptedThoughNdeflibRejectsIt: try await reservedTNF7IsAcceptedThoughNdeflibRejectsIt()
    case .reservedURIIdentifierCodesReadAsNoAbbreviationThoughNdeflibRejectsThem:
      try await reservedURIIdentifierCodesReadAsNoAbbreviationThoughNdeflibRejectsThem()
    case .typesOutsideTheirTNFGrammarAreKeptThoughNdeflibRejectsThem:
      try await typesOutsideTheirTNFGrammarAreKeptThoughNdeflibRejectsThem()
    case .utf16TextWithoutABOMIsBigEndianThoughNdeflibReadsItInHostOrder:
      try await utf16TextWithoutABOMIsBigEndianThoughNdeflibReadsItInHostOrder()
    case .payloadsOverOneMebibyteDecodeThoughNdeflibCapsThem:
      try await payloadsOverOneMebibyteDecodeThoughNdeflibCapsThem()
    case .smartPosterWithTwoActionRecordsIsRejectedThoughNdeflibAcceptsIt:
      try await smartPosterWithTwoActionRecordsIsRejectedThoughNdeflibAcceptsIt()
    case .smartPosterWithTwoTitlesInOneLanguageIsRejectedThoughNdeflibKeepsTheLast:
      try await smartPosterWithTwoTitlesInOneLanguageIsRejectedThoughNdeflibKeepsTheLast()
    case .recordsAfterASmartPosterAreNotReadWithItsLocalTypesThoughNdeflibDoes:
      try await recordsAfterASmartPosterAreNotReadWithItsLocalTypesThoughNdeflibDoes()
    }
  }

  private func corpus() async throws -> [OracleCorpusEntry] {
    let lines = try await OracleRunner.run(script: "ndef_corpus.py").split(separator: "\n")
    return try lines.map { try JSONDecoder().decode(OracleCorpusEntry.self, from: Data($0.utf8)) }
  }

  private func ndeflibDecode(_ messages: [[UInt8]]) async throws -> [OracleDecodeResult] {
    let input = messages.map { $0.isEmpty ? "<empty>" : NDEFBytes($0).hex }.joined(separator: "\n") + "\n"
    let lines = try await OracleRunner.run(script: "ndef_decode.py", input: input).split(separator: "\n")
    let results = try lines.map { try JSONDecoder().decode(OracleDecodeResult.self, from: Data($0.utf8)) }
    guard results.count == messages.count else {
      throw OracleRunner.Failure(description: "ndef_decode.py answered \(results.count) of \(messages.count) messages")
    }
    return results
  }

  private func ndeflibDecodeOne(_ message: [UInt8]) async throws -> OracleDecodeResult {
    try await ndeflibDecode([message])[0]
  }

  /// Compares NFCKit's decoding of `bytes` with ndeflib's records (chunks joined).
  private func compare(_ bytes: [UInt8], with ndeflib: [OracleRecord], name: String) throws -> Bool {
    let message = try NDEFDecoder().decode(bytes)
    let expected = OracleRecord.joiningChunks(ndeflib)
    guard message.records.count == expected.count else {
      Issue.record("\(name): NFCKit decoded \(message.records.count) records, ndeflib \(expected.count)")
      return false
    }
    for (index, (record, (oracle, chunked))) in zip(message.records, expected).enumerated() {
      let mine = chunked ? OracleRecord(raw: record) : try OracleRecord(record)
      guard mine == oracle else {
        Issue.record(
          "\(name), record \(index):\n  NFCKit  \(mine)\n  ndeflib \(oracle)\n  bytes \(NDEFBytes(bytes).hex)")
        return false
      }
    }
    return true
  }

  private func decodesTheNdeflibCorpusRecordByRecord() async throws {
    let entries = try await corpus()
    #expect(entries.count > 400)
    #expect(entries.contains { $0.chunked })
    var mismatches = 0
    for entry in entries where try !compare(hex(entry.hex), with: entry.records, name: entry.name) {
      mismatches += 1
      if mismatches > 5 { break }
    }
    #expect(mismatches == 0)
  }

  private func reencodesEveryUnchunkedCorpusMessageToTheSameBytes() async throws {
    // ndeflib's encoder is canonical (SR when the payload is < 256 bytes, IL only with an identifier).
    for entry in try await corpus() where !entry.chunked {
      let bytes = hex(entry.hex)
      #expect(try NDEFDecoder().decode(bytes).encoded() == bytes, "\(entry.name)")
    }
  }

  private func reassemblesNdeflibsChunkSequencesIntoTheJoinedRecord() async throws {
    let chunked = try await corpus().filter(\.chunked)
    #expect(chunked.count >= 20)
    for entry in chunked {
      let message = try NDEFDecoder().decode(hex(entry.hex))
      #expect(message.records.count < entry.records.count, "\(entry.name): no chunks were joined")
      // The canonical re-encoding is the same message without chunks.
      #expect(try NDEFDecoder().decode(message.encoded()) == message)
    }
  }

  private func theCorpusCoversEveryRecordKindLayoutAndChunking() async throws {
    let records = try await corpus().flatMap(\.records)
    #expect(Set(records.map(\.tnf)) == [0, 1, 2, 3, 4, 5, 6])
    let wellKnown = Set(records.filter { $0.tnf == 1 }.map(\.type))
    #expect(wellKnown.isSuperset(of: [NDEFBytes(utf8: "T").hex, NDEFBytes(utf8: "U").hex, NDEFBytes(utf8: "Sp").hex]))
    #expect(Set(records.compactMap(\.encoding)) == ["UTF-8", "UTF-16"])
    #expect(records.contains { !$0.id.isEmpty })
    #expect(records.contains { $0.payload.count / 2 >= 256 }, "no record needs the normal (4-byte) length")
    #expect(records.contains { $0.records?.contains { $0.tnf == 2 } == true }, "no Smart Poster with an icon")
  }

  private func chunkingNdeflibsMessagesInTheTestReassemblesToNdeflibsRecords() async throws {
    // ndeflib neither writes nor joins chunks of Text, URI or Smart Poster records, so split its unchunked
    // messages here (by hand, with random chunk sizes and layouts) and compare NFCKit's reassembled records,
    // typed fields included, with ndeflib's decoding of the original.
    let seed: UInt64 = 0x00C4_0C4E
    var random = SeededRandom(seed: seed)
    var mismatches = 0
    for entry in try await corpus() where !entry.chunked && mismatches <= 5 {
      let fields = try NDEFDecoder().decode(hex(entry.hex)).records.map(NDEFRoundTripTests.Fields.init)
      let chunked = NDEFRoundTripTests.nonCanonicalBytes(fields, &random)
      if try !compare(chunked, with: entry.records, name: "seed \(seed), \(entry.name) chunked") { mismatches += 1 }
    }
    #expect(mismatches == 0)
  }

  private func ndeflibDecodesWhatNFCKitEncodes() async throws {
    let seed: UInt64 = 0x0AC1_E000
    var random = SeededRandom(seed: seed)
    var messages: [[UInt8]] = []
    while messages.count < 300 {
      let message = try RandomMessages.message(&random)
      // Leave out what ndeflib cannot represent or reads differently (see the tests below): TNF 7 records
      // and UTF-16 text without a byte-order mark.
      let representable = message.records.allSatisfy { record in
        record.typeNameFormat != .reserved
          && !(record.isWellKnown("T") && (try? TextRecord(record))?.encoding == .utf16BigEndian)
      }
      guard representable else { continue }
      messages.append(
        messages.count % 5 == 0
          ? try NDEFEncoder().encode(message, chunkSize: Int.random(in: 1...64, using: &random)) : message.encoded())
    }
    let results = try await ndeflibDecode(messages)
    var mismatches = 0
    for (index, (bytes, result)) in zip(messages, results).enumerated() {
      guard result.ok, let records = result.records else {
        Issue.record("seed \(seed), message \(index): ndeflib rejects \(NDEFBytes(bytes).hex): \(result.error ?? "")")
        mismatches += 1
        continue
      }
      if try !compare(bytes, with: records, name: "seed \(seed), message \(index)") { mismatches += 1 }
      // ndeflib's own decoder must accept the whole message too, unless it holds chunks (which ndeflib
      // decodes one at a time, so a chunked Text, URI or Smart Poster fails its typed decoding).
      if result.strictError != nil && !records.contains(where: { $0.cf == true }) {
        Issue.record("seed \(seed), message \(index): ndeflib rejects \(NDEFBytes(bytes).hex): \(result.strictError!)")
        mismatches += 1
      }
      if mismatches > 5 { break }
    }
    #expect(mismatches == 0)
  }

  // MARK: Where ndeflib and the NFC Forum specification disagree

  private func loneUnchangedRecordIsRejectedThoughNdeflibAcceptsIt() async throws {
    let bytes = hex("D6 00 01 41")
    #expect(try await ndeflibDecodeOne(bytes).ok)
    #expect(decodeError(bytes)?.code == .unexpectedUnchangedRecord)
  }

  private func brokenChunkSequencesAreRejectedThoughNdeflibAcceptsThem() async throws {
    // ndeflib checks no chunk rules. NDEF 1.0 (2.3.3): middle and terminating chunks have TNF 6 and IL and
    // TYPE_LENGTH zero (even with ID_LENGTH 0); the first chunk carries the type, so it is not TNF 6, and
    // an empty record (TNF 0, no type, no payload) has nothing to chunk.
    let cases = [
      hex("B5 00 01 41  3E 00 01 00 42  56 00 01 43"),  // IL on a middle chunk
      hex("B5 00 01 41  5E 00 01 00 43"),  // IL on a terminating chunk, ID_LENGTH 0
      hex("B5 00 01 41  35 00 01 42  56 00 01 43"),  // a middle chunk with TNF 5
      hex("B6 00 01 41  56 00 01 43"),  // a first chunk with TNF 6
      hex("B0 00 00  56 00 00"),  // a chunked empty record
    ]
    for (bytes, result) in zip(cases, try await ndeflibDecode(cases)) {
      #expect(result.ok, "\(NDEFBytes(bytes).hex)")
      #expect(decodeError(bytes) != nil, "\(NDEFBytes(bytes).hex)")
    }
  }

  private func bytesAfterTheMERecordAreRejectedThoughNdeflibIgnoresThem() async throws {
    let bytes = hex("D1 01 01 55 00  FF FF")
    let result = try await ndeflibDecodeOne(bytes)
    #expect(result.ok && result.records?.count == 1)
    #expect(decodeError(bytes)?.code == .trailingBytes)
  }

  private func zeroBytesAreNotAMessageThoughNdeflibReturnsNoRecords() async throws {
    let result = try await ndeflibDecodeOne([])
    #expect(result.ok && result.records?.isEmpty == true)
    #expect(decodeError([])?.code == .zeroLengthMessage)
  }

  private func reservedTNF7IsAcceptedThoughNdeflibRejectsIt() async throws {
    let bytes = hex("D7 01 01 78 00")
    #expect(try await !ndeflibDecodeOne(bytes).ok)
    #expect(try NDEFDecoder().decode(bytes).records[0].typeNameFormat == .reserved)
  }

  private func reservedURIIdentifierCodesReadAsNoAbbreviationThoughNdeflibRejectsThem() async throws {
    let bytes = hex("D1 01 03 55 24 61 3A")
    #expect(try await ndeflibDecodeOne(bytes).strictError?.contains("URI identifier 36") == true)
    #expect(try URIRecord(NDEFDecoder().decode(bytes).records[0]).uri == "a:")
  }

  private func typesOutsideTheirTNFGrammarAreKeptThoughNdeflibRejectsThem() async throws {
    let cases: [(bytes: [UInt8], tnf: TypeNameFormat, ndeflibRejects: Bool)] = [
      (hex("D1 02 00 00FF"), .nfcWellKnown, true),  // A well-known name that is not ASCII.
      (hex("D2 03 00 616263"), .media, true),  // A media type without "/".
      (hex("D4 03 00 616263"), .nfcExternal, false),  // An external type without ":" (ndeflib keeps it too).
    ]
    for (bytes, tnf, ndeflibRejects) in cases {
      #expect(try await ndeflibDecodeOne(bytes).ok != ndeflibRejects, "\(NDEFBytes(bytes).hex)")
      let record = try NDEFDecoder().decode(bytes).records[0]
      #expect(record.typeNameFormat == tnf)
      #expect(record.type.array == Array(bytes[3...]))
    }
  }

  private func utf16TextWithoutABOMIsBigEndianThoughNdeflibReadsItInHostOrder() async throws {
    // "Hi" in UTF-16BE, no BOM. The Text RTD says big-endian; Python's "UTF-16" codec assumes the host's
    // order (little-endian here) and reads "䠀椀".
    let bytes = hex("D1 01 07 54 82 656E 0048 0069")
    let ndeflibText = try await ndeflibDecodeOne(bytes).records?.first?.text
    #expect(ndeflibText == "\u{4800}\u{6900}")
    #expect(try TextRecord(NDEFDecoder().decode(bytes).records[0]).text == "Hi")
  }

  private func payloadsOverOneMebibyteDecodeThoughNdeflibCapsThem() async throws {
    let message = NDEFMessage(try .unknown(payload: NDEFBytes(Array(repeating: 0x5A, count: 0x10_0001))))
    let bytes = message.encoded()
    #expect(try await !ndeflibDecodeOne(bytes).ok)
    #expect(try NDEFDecoder().decode(bytes) == message)
  }

  private func smartPosterWithTwoActionRecordsIsRejectedThoughNdeflibAcceptsIt() async throws {
    let act = try NDEFRecord(typeNameFormat: .nfcWellKnown, type: NDEFBytes(utf8: "act"), payload: [0])
    let payload = NDEFBytes(NDEFMessage(try .uri("tel:1"), act, act).encoded())
    let bytes = NDEFMessage(
      try NDEFRecord(typeNameFormat: .nfcWellKnown, type: NDEFBytes(utf8: "Sp"), payload: payload)
    )
    .encoded()
    #expect(try await ndeflibDecodeOne(bytes).ok)
    #expect(decodeError(bytes)?.code == .invalidSmartPoster)
  }

  private func smartPosterWithTwoTitlesInOneLanguageIsRejectedThoughNdeflibKeepsTheLast() async throws {
    // The Smart Poster RTD allows one title per language; ndeflib silently keeps the last of the two.
    let payload = NDEFBytes(
      NDEFMessage(try .uri("tel:1"), try .text("first", languageCode: "en"), try .text("second", languageCode: "en"))
        .encoded())
    let bytes = NDEFMessage(
      try NDEFRecord(typeNameFormat: .nfcWellKnown, type: NDEFBytes(utf8: "Sp"), payload: payload)
    )
    .encoded()
    let result = try await ndeflibDecodeOne(bytes)
    #expect(result.ok && result.strictError == nil)
    #expect(result.records?.first?.titles == ["en": "second"])
    #expect(decodeError(bytes)?.code == .invalidSmartPoster)
  }

  private func recordsAfterASmartPosterAreNotReadWithItsLocalTypesThoughNdeflibDoes() async throws {
    // A top-level "act" record means nothing (act is local to Smart Posters); ndeflib decodes every record
    // after a Smart Poster with the Smart Poster's local types and rejects the action value 5.
    let afterPoster = hex("91 02 06 5370 D1010255 0531  51 03 01 616374 05")
    let beforePoster = hex("91 03 01 616374 05  51 02 06 5370 D1010255 0531")
    let results = try await ndeflibDecode([afterPoster, beforePoster])
    #expect(results[0].strictError?.contains("ACTION value 5") == true)
    #expect(results[1].ok && results[1].strictError == nil)
    #expect(decodeError(afterPoster) == nil)
    #expect(decodeError(beforePoster) == nil)
  }
}
