import NFCKit
import Testing

@Suite struct SmartPosterRecordTests {
  /// ndeflib 0.3.3's encoding of SmartposterRecord("https://www.nfc-forum.org",
  /// {"en-US": "Hello, world", "fr-CA": "Bonjour, le monde"}, "exec") — the shape of the Smart Poster RTD example.
  static let example = hex(
    "D1 02 4A 5370"
      + " 91 01 0E 55 02 6E66632D666F72756D2E6F7267"
      + " 11 01 12 54 05 656E2D5553 48656C6C6F2C20776F726C64"
      + " 11 01 17 54 05 66722D4341 426F6E6A6F75722C206C65206D6F6E6465"
      + " 51 03 01 616374 00")

  static let exampleValue = SmartPosterRecord(
    uri: URIRecord(uri: "https://www.nfc-forum.org"),
    titles: [
      TextRecord(text: "Hello, world", languageCode: "en-US"),
      TextRecord(text: "Bonjour, le monde", languageCode: "fr-CA"),
    ],
    action: .execute)

  @Test func encodesTheExampleByteForByte() throws {
    #expect(NDEFMessage(try Self.exampleValue.record()).encoded() == Self.example)
  }

  @Test func readsTheExample() throws {
    let poster = try SmartPosterRecord(NDEFDecoder().decode(Self.example).records[0])
    #expect(poster == Self.exampleValue)
    #expect(poster.title(languageCode: "fr-ca") == "Bonjour, le monde")
    #expect(poster.title(languageCode: "de") == nil)
  }

  @Test func roundTripsSizeTypeIconsAndOtherRecords() throws {
    let icon = try NDEFRecord.media(type: "image/png", payload: [0x89, 0x50, 0x4E, 0x47])
    let other = try NDEFRecord.external("example.com:x", payload: [1])
    let poster = SmartPosterRecord(
      uri: URIRecord(uri: "tel:+41790000000"), titles: [TextRecord(text: "Call", languageCode: "en")], action: .save,
      size: 0xDEAD_BEEF, resourceType: "text/html", icons: [icon], additionalRecords: [other])
    let decoded = try SmartPosterRecord(NDEFDecoder().decode(NDEFMessage(poster.record()).encoded()).records[0])
    #expect(decoded == poster)
  }

  private func posterError(_ records: [NDEFRecord]) throws -> NDEFError? {
    let payload = NDEFBytes(try NDEFMessage(records: records).encoded())
    let record = try NDEFRecord(typeNameFormat: .nfcWellKnown, type: NDEFBytes(utf8: "Sp"), payload: payload)
    return thrownError { () throws(NDEFError) in try SmartPosterRecord(record) }
  }

  private func local(_ type: String, _ payload: NDEFBytes) throws -> NDEFRecord {
    try NDEFRecord(typeNameFormat: .nfcWellKnown, type: NDEFBytes(utf8: type), payload: payload)
  }

  @Test func requiresAURIRecord() throws {
    let error = try posterError([.text("no uri")])
    #expect(error?.code == .invalidSmartPoster)
    #expect(error?.expected == "exactly one URI record")
  }

  @Test func rejectsASecondURIRecordAtItsOffsetInThePayload() throws {
    let error = try posterError([.uri("tel:1"), .uri("tel:2")])
    #expect(error?.code == .invalidSmartPoster)
    #expect(error?.offset == 6)
    #expect(error?.context["relativeTo"] == "payload")
  }

  @Test func rejectsTwoTitlesInOneLanguageIgnoringCase() throws {
    let error = try posterError([.uri("tel:1"), .text("a", languageCode: "en-US"), .text("b", languageCode: "en-us")])
    #expect(error?.code == .invalidSmartPoster)
  }

  @Test func readsManyTitlesAndRejectsASecondTitleInOneLanguageAmongThem() throws {
    // Past the first titles, languages are looked up in a set instead of compared one by one.
    let titles = try (0..<40).map { try NDEFRecord.text("t\($0)", languageCode: "l\($0)") }
    let payload = NDEFBytes(try NDEFMessage(records: [.uri("tel:1")] + titles).encoded())
    let poster = try SmartPosterRecord(
      try NDEFRecord(typeNameFormat: .nfcWellKnown, type: NDEFBytes(utf8: "Sp"), payload: payload))
    #expect(poster.titles.map(\.languageCode) == (0..<40).map { "l\($0)" })
    for (late, earlier) in [(3, "L3"), (39, "l39"), (0, "L0")] {
      let error = try posterError([.uri("tel:1")] + titles + [.text("again", languageCode: earlier)])
      #expect(error?.code == .invalidSmartPoster, "a second title in the language of title \(late)")
      #expect(error?.context["record"] == "41")
      #expect(error?.offset == payload.count)
    }
  }

  @Test func rejectsAnUndefinedAction() throws {
    #expect(try posterError([.uri("tel:1"), local("act", [3])])?.code == .invalidSmartPoster)
    #expect(try posterError([.uri("tel:1"), local("act", [0, 0])])?.code == .invalidSmartPoster)
    #expect(try posterError([.uri("tel:1"), local("act", [0]), local("act", [1])])?.code == .invalidSmartPoster)
  }

  @Test func rejectsASizeRecordThatIsNotFourBytes() throws {
    #expect(try posterError([.uri("tel:1"), local("s", [0, 0, 1])])?.code == .invalidSmartPoster)
  }

  @Test func rejectsATypeRecordThatIsNotUTF8() throws {
    #expect(try posterError([.uri("tel:1"), local("t", [0xFF])])?.code == .invalidUTF8)
  }

  /// A type record is looked at once when it is US-ASCII, and checked as UTF-8 otherwise: US-ASCII, other UTF-8
  /// and broken UTF-8 after seven and eight US-ASCII bytes (the quick look reads eight at a time).
  @Test(arguments: ["text/ht", "text/htm", "text/html", "tëxt/html", "text/htm\u{E9}"])
  func readsATypeRecordAsItsString(type: String) throws {
    let poster = SmartPosterRecord(uri: URIRecord(uri: "tel:1"), resourceType: type)
    let typed = try NDEFDecoder().decodeTyped(NDEFMessage(try poster.record()).encoded())
    #expect(typed.values == [.smartPoster(poster)])
    for broken in [Array(type.utf8.prefix(7)) + [0xC3], Array(type.utf8.prefix(8)) + [0xC3, 0x41]] {
      // The type record's payload starts at offset 10 of the nested message (6 bytes of URI record, 4 of header
      // and type); the lead byte cut short by the end, or the byte after it that does not continue it, is wrong.
      let error = try posterError([.uri("tel:1"), local("t", NDEFBytes(broken))])
      #expect(error?.code == .invalidUTF8)
      #expect(error?.offset == 10 + broken.count - 1, "\(broken)")
    }
  }

  @Test func rejectsAnEmptyNestedMessage() throws {
    let record = try NDEFRecord(typeNameFormat: .nfcWellKnown, type: NDEFBytes(utf8: "Sp"))
    #expect(thrownError { () throws(NDEFError) in try SmartPosterRecord(record) }?.code == .zeroLengthMessage)
  }

  @Test func rejectsRecordsOfAnotherType() throws {
    #expect(thrownError { () throws(NDEFError) in try SmartPosterRecord(NDEFRecord.text("x")) }?.code == .typeMismatch)
  }

  @Test func refusesToBuildTwoTitlesInOneLanguage() {
    let poster = SmartPosterRecord(
      uri: URIRecord(uri: "tel:1"), titles: [TextRecord(text: "a"), TextRecord(text: "b", languageCode: "EN")])
    #expect(thrownError { () throws(NDEFError) in try poster.record() }?.code == .invalidArgument)
  }

  /// A Smart Poster after another record, with an ID and a 4-byte PAYLOAD_LENGTH, whole or in chunks of 1 to
  /// 9 bytes: read from where its payload lies in the input (or from the joined chunks) to the value its record
  /// gives, and a bad byte in a title reported at that byte's offset in the input.
  @Test(arguments: [0, 1, 4, 9])
  func readsANestedMessageFromWhereItsPayloadLies(chunkSize: Int) throws {
    let payload = try NDEFMessage(Self.exampleValue.record()).records[0].payload
    let first = wireRecord(tnf: 0x01, type: [0x54], payload: [0x02, 0x65, 0x6E, 0x61], me: false)
    var bytes = first
    var payloadOffsets: [Int] = []
    if chunkSize == 0 {
      bytes += wireRecord(
        tnf: 0x01, type: Array("Sp".utf8), identifier: [1, 2, 3], payload: Array(payload), mb: false, short: false)
      payloadOffsets = (0..<payload.count).map { bytes.count - payload.count + $0 }
    } else {
      let chunks = stride(from: 0, to: payload.count, by: chunkSize).map {
        Array(payload[$0..<min($0 + chunkSize, payload.count)])
      }
      for (index, chunk) in chunks.enumerated() {
        let last = index == chunks.count - 1
        bytes +=
          index == 0
          ? wireRecord(
            tnf: 0x01, type: Array("Sp".utf8), identifier: [1, 2, 3], payload: chunk, mb: false, me: false, cf: true)
          : wireRecord(tnf: 0x06, payload: chunk, mb: false, me: last, cf: !last)
        payloadOffsets += (0..<chunk.count).map { bytes.count - chunk.count + $0 }
      }
    }
    let typed = try NDEFDecoder().decodeTyped(bytes)
    #expect(typed.values.count == 2)
    #expect(typed.values.last == .smartPoster(Self.exampleValue))
    #expect(try SmartPosterRecord(typed.records[1]) == Self.exampleValue)

    // The last byte ("d") of the first title's text: after the URI record (18 bytes), the title's header (4)
    // and 17 bytes of its payload.
    let index = payloadOffsets[18 + 4 + 17]
    #expect(bytes[index] == UInt8(ascii: "d"))
    bytes[index] = 0xFF
    let error = thrownError { () throws(NDEFError) in try NDEFDecoder().decodeTyped(bytes) }
    #expect(error?.code == .invalidUTF8 && error?.offset == index)
    #expect(error == decodeError(bytes))
  }

  @Test func decodingRejectsAMalformedTitleInsideASmartPoster() throws {
    var bytes = NDEFMessage(try Self.exampleValue.record()).encoded()
    // Corrupt the last text byte of the first title ("d" of "world") into an invalid UTF-8 lead byte.
    let index = 5 + 18 + 4 + 17
    #expect(bytes[index] == UInt8(ascii: "d"))
    bytes[index] = 0xFF
    expectDecodeError(bytes, .invalidUTF8, at: index)
  }
}
