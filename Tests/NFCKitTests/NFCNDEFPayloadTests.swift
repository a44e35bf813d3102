import Foundation
import Testing

@testable import NFCKit

/// Core NFC's face of NDEF: `NFCNDEFPayload`, `NFCNDEFMessage` and `NFCTypeNameFormat` over NFCKit's codec,
/// with Apple's helpers for well-known Text and URI records.
@Suite struct NFCNDEFPayloadTests {
  private static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

  // MARK: URI

  @Test func aURIPayloadFromAStringIsAWellKnownURIRecordWithTheLongestPrefix() throws {
    let payload = try #require(NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://www.example.com/menu"))
    #expect(payload.typeNameFormat == .nfcWellKnown)
    #expect(payload.type == Data("U".utf8))
    #expect(payload.identifier.isEmpty)
    #expect(payload.payload == Data([0x02] + Self.bytes("example.com/menu")))
    #expect(payload.wellKnownTypeURIPayload() == URL(string: "https://www.example.com/menu"))
  }

  @Test func aURIPayloadFromAURLReadsBackAsTheURL() throws {
    let url = try #require(URL(string: "tel:+15551234567"))
    let payload = try #require(NFCNDEFPayload.wellKnownTypeURIPayload(url: url))
    #expect(payload.payload.first == 0x05, "tel: is prefix code 5")
    #expect(payload.wellKnownTypeURIPayload() == url)
    #expect(payload.wellKnownTypeTextPayload().0 == nil)
  }

  @Test func aURIWithAControlCharacterMakesNoPayload() {
    #expect(NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://example.com/\u{07}") == nil)
  }

  // MARK: Text

  @Test func aTextPayloadStoresTheLocalesLanguageTagAndReadsBackTextAndLocale() throws {
    let payload = try #require(
      NFCNDEFPayload.wellKnownTypeTextPayload(string: "Grüezi", locale: Locale(identifier: "de_CH")))
    #expect(payload.typeNameFormat == .nfcWellKnown)
    #expect(payload.type == Data("T".utf8))
    #expect(payload.payload == Data([0x05] + Self.bytes("de-CH") + Self.bytes("Grüezi")))
    let (text, locale) = payload.wellKnownTypeTextPayload()
    #expect(text == "Grüezi")
    #expect(locale?.identifier(.bcp47) == "de-CH")
    #expect(payload.wellKnownTypeURIPayload() == nil)
  }

  @Test func aUTF16TextRecordReadsThroughTheSameHelper() throws {
    let record = try NDEFRecord.text("hi", languageCode: "en", encoding: .utf16BigEndianWithBOM)
    let (text, locale) = NFCNDEFPayload(record).wellKnownTypeTextPayload()
    #expect(text == "hi")
    #expect(locale?.identifier == "en")
  }

  @Test func recordsThatAreNeitherTextNorURIGiveNothing() throws {
    let media = NFCNDEFPayload(
      format: .media, type: Data("text/plain".utf8), identifier: Data(), payload: Data("T".utf8))
    let (text, locale) = media.wellKnownTypeTextPayload()
    #expect(text == nil && locale == nil)
    #expect(media.wellKnownTypeURIPayload() == nil)
    // A well-known T record whose payload is malformed is not text either.
    let broken = NFCNDEFPayload(format: .nfcWellKnown, type: Data("T".utf8), identifier: Data(), payload: Data([0x3F]))
    #expect(broken.wellKnownTypeTextPayload().0 == nil)
  }

  // MARK: Conversions

  @Test func everyKindOfRecordConvertsToTheCoreNFCFaceAndBack() throws {
    let records: [NDEFRecord] = [
      .empty, try .text("hello"), try .uri("https://example.com"),
      try .media(type: "application/json", payload: NDEFBytes(Self.bytes("{}")), identifier: [0x01]),
      try .absoluteURI("https://example.com/t", payload: [0xAB]), try .external("example.com:x", payload: [1, 2]),
      try .unknown(payload: [9]),
    ]
    for record in records {
      let payload = NFCNDEFPayload(record)
      #expect(payload.typeNameFormat.rawValue == record.typeNameFormat.rawValue)
      #expect(payload.type == Data(record.type.array))
      #expect(payload.identifier == Data(record.identifier.array))
      #expect(payload.payload == Data(record.payload.array))
      #expect(try NDEFRecord(payload) == record)
      let rebuilt = NFCNDEFPayload(
        format: payload.typeNameFormat, type: payload.type, identifier: payload.identifier, payload: payload.payload)
      #expect(rebuilt == payload)
      #expect(try NDEFRecord(rebuilt) == record)
    }
  }

  @Test func aReservedTNF7RecordShowsAsUnknownAndConvertsBackUnchangedUntilItIsEdited() throws {
    let decoded = try NDEFMessage(decoding: [0xD7, 0x02, 0x01, 0xAB, 0xCD, 0xEF])
    let face = NFCNDEFMessage(decoded)
    #expect(face.records.first?.typeNameFormat == .unknown)
    #expect(try NDEFMessage(face).encoded() == [0xD7, 0x02, 0x01, 0xAB, 0xCD, 0xEF], "read, then written back as read")
    face.records.first?.payload = Data([0x00])
    // Edited, it is an unknown record with a type, which NDEF forbids.
    #expect(throws: NDEFError.self) { try NDEFMessage(face) }
  }

  @Test func fieldsThatBreakAnNDEFRuleAreRefusedWhenConvertedNamingTheRecordAndField() throws {
    let good = try #require(NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://example.com"))
    let chunk = NFCNDEFPayload(format: .unchanged, type: Data(), identifier: Data(), payload: Data([1]))
    let message = NFCNDEFMessage(records: [good, chunk])
    #expect {
      try NDEFMessage(message)
    } throws: { error in
      let error = error as? NDEFError
      return error?.code == .invalidRecord && error?.context["field"] == "typeNameFormat"
        && error?.context["record"] == "1"
    }
    let typedWithoutType = NFCNDEFPayload(format: .media, type: Data(), identifier: Data(), payload: Data())
    #expect(throws: NDEFError.self) { try NDEFRecord(typedWithoutType) }
  }

  @Test func anEmptyMessageIsTheNDEFEmptyMessage() throws {
    let empty = NFCNDEFMessage(records: [])
    #expect(try NDEFMessage(empty) == .empty)
    #expect(empty.length == 3)
  }

  @Test func aMessageDecodesFromDataAndRefusesBytesThatAreNotOneMessage() throws {
    let hello = NDEFMessage(try .text("hello"))
    let message = try #require(NFCNDEFMessage(data: Data(hello.encoded())))
    #expect(message.records.count == 1)
    #expect(message.records.first?.wellKnownTypeTextPayload().0 == "hello")
    #expect(NFCNDEFMessage(data: Data()) == nil, "zero bytes are not a message")
    #expect(NFCNDEFMessage(data: Data([0xD1, 0x01, 0x08, 0x54])) == nil)
  }

  @Test func lengthIsTheSizeOfTheMessageAsWrittenChunksIncluded() throws {
    let long = Data(repeating: 0x41, count: 700)
    let cases: [NFCNDEFMessage] = [
      NFCNDEFMessage(records: [try #require(NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://example.com"))]),
      NFCNDEFMessage(records: [
        NFCNDEFPayload(format: .media, type: Data("a/b".utf8), identifier: Data([7, 8]), payload: long),
        try #require(NFCNDEFPayload.wellKnownTypeTextPayload(string: "x", locale: Locale(identifier: "en"))),
      ]),
      NFCNDEFMessage(records: [
        NFCNDEFPayload(
          format: .media, type: Data("a/b".utf8), identifier: Data([7]), payload: long, chunkSize: 256),
        NFCNDEFPayload(format: .unknown, type: Data(), identifier: Data(), payload: Data([1, 2, 3]), chunkSize: 1),
        NFCNDEFPayload(format: .unknown, type: Data(), identifier: Data(), payload: Data([1, 2, 3]), chunkSize: 3),
      ]),
    ]
    for message in cases {
      let written = try message.encoded().bytes
      #expect(message.length == written.count)
      let read = try NDEFMessage(decoding: written)
      #expect(read.records.map(\.payload.count) == message.records.map(\.payload.count), "chunks are joined")
    }
    // 700 bytes in chunks of 256 (two long, one short) with a 3-byte type and a 1-byte ID, then 3 one-byte
    // chunks, then a 3-byte payload not chunked (it fits its chunk size).
    #expect(cases[2].length == (3 + 3 + 1 + 3 + 1 + 256) + (3 + 3 + 256) + (3 + 188) + 3 * (3 + 1) + (3 + 3))
  }

  @Test func messagesAndPayloadsAreEqualWhenTheirFieldsAre() throws {
    let a = NFCNDEFMessage(records: [try #require(NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://a.example"))])
    let b = NFCNDEFMessage(records: [try #require(NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://a.example"))])
    let c = NFCNDEFMessage(records: [try #require(NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://c.example"))])
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
    #expect(a != c)
    b.records = c.records
    #expect(b == c, "records can be replaced, as in Core NFC")
  }

  @Test func theTypeNameFormatHasCoreNFCsCasesAndRawValues() {
    #expect(NFCTypeNameFormat.allCases.map(\.rawValue) == Array(0...6))
    #expect(
      NFCTypeNameFormat.allCases.map(\.description) == [
        "empty", "nfcWellKnown", "media", "absoluteURI", "nfcExternal", "unknown", "unchanged",
      ])
    for format in NFCTypeNameFormat.allCases { #expect(NFCTypeNameFormat(TypeNameFormat(format)) == format) }
    #expect(NFCTypeNameFormat(TypeNameFormat.reserved) == .unknown)
  }
}
