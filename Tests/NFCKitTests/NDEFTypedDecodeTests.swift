import NFCKit
import ReaderCore
import Testing

/// `NDEFDecoder.decodeTyped`: the message `decode` gives, with the value of each Text, URI and Smart Poster
/// record built by the pass that checks it, and the same errors.
@Suite struct NDEFTypedDecodeTests {
  /// The values `decodeTyped` must give: each record's own typed view, or `.none`.
  static func typedViews(of message: NDEFMessage, options: NDEFDecodingOptions = NDEFDecodingOptions())
    -> [NDEFRecordValue]
  {
    message.records.map { record in
      if let text = try? TextRecord(record) { return .text(text) }
      if let uri = try? URIRecord(record) { return .uri(uri) }
      if let poster = try? SmartPosterRecord(record, options: options) { return .smartPoster(poster) }
      return .none
    }
  }

  @Test func valuesAreTheTypedViewsOfTheRecordsInOrder() throws {
    let message = try NDEFMessage(records: [
      .text("Grüße", languageCode: "de"), .uri("https://www.example.com/a"),
      try SmartPosterRecordTests.exampleValue.record(), .media(type: "text/plain", payload: NDEFBytes(utf8: "hi")),
      .text("le texte", languageCode: "fr", encoding: .utf16LittleEndianWithBOM), .external("example.com:x"),
    ])
    let typed = try NDEFDecoder().decodeTyped(message.encoded())
    #expect(typed.message == message)
    #expect(typed.records == message.records)
    #expect(
      typed.values == [
        .text(TextRecord(text: "Grüße", languageCode: "de")), .uri(URIRecord(uri: "https://www.example.com/a")),
        .smartPoster(SmartPosterRecordTests.exampleValue), .none,
        .text(TextRecord(text: "le texte", languageCode: "fr", encoding: .utf16LittleEndianWithBOM)), .none,
      ])
  }

  @Test func aSmartPosterInsideASmartPosterIsKeptAsARecordOfTheOuterOne() throws {
    let inner = try SmartPosterRecord(uri: URIRecord(uri: "https://inner.example")).record()
    let outer = SmartPosterRecord(
      uri: URIRecord(uri: "https://outer.example"), titles: [TextRecord(text: "Outer", languageCode: "en")],
      additionalRecords: [inner])
    let typed = try NDEFDecoder().decodeTyped(NDEFMessage(try outer.record()).encoded())
    #expect(typed.values == [.smartPoster(outer)])
  }

  @Test func wellKnownPayloadsAreCheckedEvenWhenTheOptionsSkipThem() throws {
    // A Text record whose text is not UTF-8: decoded as it is without the checks, refused by decodeTyped.
    let bytes = hex("D1 01 04 54 02 656E FF")
    let options = NDEFDecodingOptions(validatesWellKnownPayloads: false)
    #expect(throws: Never.self) { try NDEFDecoder(options: options).decode(bytes) }
    let error = thrownError { () throws(NDEFError) in try NDEFDecoder(options: options).decodeTyped(bytes) }
    #expect(error == decodeError(bytes))
    #expect(error?.code == .invalidUTF8)
  }

  @Test func mutatedMessagesGiveDecodesErrorsOrItsMessageWithTheTypedViews() {
    var decodedCount = 0
    for seed in (0..<UInt64(4_000)).map({ NDEFMutationTests.baseSeed ^ 0x7E9E_D000 &+ $0 }) {
      var random = SeededRandom(seed: seed)
      let input = NDEFMutationTests.mutate(NDEFMutationTests.corpus.randomElement(using: &random)!, &random)
      let typed: NDEFTypedMessage
      do {
        typed = try NDEFDecoder().decodeTyped(input)
      } catch {
        #expect(error == decodeError(input), "seed \(seed)")
        continue
      }
      decodedCount += 1
      guard let message = try? NDEFDecoder().decode(input) else {
        Issue.record("seed \(seed): decodeTyped decoded what decode refuses")
        continue
      }
      #expect(typed.message == message, "seed \(seed)")
      #expect(typed.values == Self.typedViews(of: message), "seed \(seed)")
    }
    #expect(decodedCount > 100, "only \(decodedCount) mutated inputs decoded")
  }

  @Test func limitsHoldAsInDecode() {
    // Two records in a Smart Poster count against the message's record budget.
    let bytes = SmartPosterRecordTests.example
    for maxRecords in 0..<6 {
      let options = NDEFDecodingOptions(maxRecords: maxRecords)
      let error = thrownError { () throws(NDEFError) in try NDEFDecoder(options: options).decodeTyped(bytes) }
      #expect(error == decodeError(bytes, options: options), "maxRecords \(maxRecords)")
    }
    let shallow = NDEFDecodingOptions(maxNestingDepth: 0)
    let error = thrownError { () throws(NDEFError) in try NDEFDecoder(options: shallow).decodeTyped(bytes) }
    #expect(error?.code == .nestingTooDeep)
    #expect(error == decodeError(bytes, options: shallow))
  }
  @Test func textsURIsAndTypeNamesOfEveryShortLengthReadAsTheirBytes() throws {
    // Around the 15 bytes a string holds without allocating: US-ASCII is copied into a small string in one piece,
    // anything else (or longer) takes the standard library's path.
    let ascii = Array("abcdefghijklmnopqrstuvwxyz".utf8)
    for length in 0...20 {
      let text = String(decoding: ascii[..<length], as: UTF8.self)
      let nonASCII = "é" + String(decoding: ascii[..<max(0, length - 2)], as: UTF8.self)
      let type = "a/b" + String(decoding: ascii[..<length], as: UTF8.self)
      let message = try NDEFMessage(records: [
        .text(text, languageCode: "en"), .text(nonASCII, languageCode: "en"), .uri(text), .uri("tel:" + text),
        .media(type: type, payload: []), .external("x:y" + text), .absoluteURI("u:v" + text),
      ])
      let typed = try NDEFDecoder().decodeTyped(message.encoded())
      #expect(
        typed.values[0...3] == [
          .text(TextRecord(text: text, languageCode: "en")), .text(TextRecord(text: nonASCII, languageCode: "en")),
          .uri(URIRecord(uri: text)), .uri(URIRecord(uri: "tel:" + text)),
        ], "length \(length)")
      if case .text(let value) = typed.values[0] { #expect(Array(value.text.utf8) == Array(ascii[..<length])) }
      if case .uri(let value) = typed.values[2] { #expect(Array(value.uri.utf8) == Array(ascii[..<length])) }
      #expect(typed.records[4].mediaType.map { Array($0.utf8) } == Array(type.utf8), "length \(length)")
      #expect(typed.records[5].externalType == "x:y" + text, "length \(length)")
      #expect(typed.records[6].absoluteURI == "u:v" + text, "length \(length)")
    }
  }
  @Test func otherShortWellKnownTypesHaveNoValueAndTheirPayloadsAreNotRead() throws {
    // Only T, U and Sp are read; types of one or two bytes that start alike or not at all are kept as they are,
    // whatever their payload holds.
    let types = ["S", "Sq", "SP", "Tx", "Ux", "s", "t", "a", "Hr"]
    let records = try types.map {
      try NDEFRecord(typeNameFormat: .nfcWellKnown, type: NDEFBytes(utf8: $0), payload: [0xFF, 0x00, 0xFE])
    }
    let typed = try NDEFDecoder().decodeTyped(NDEFMessage(records: records + [.text("x")]).encoded())
    #expect(typed.values == Array(repeating: .none, count: types.count) + [.text(TextRecord(text: "x"))])
  }
}
