import Foundation
import NFCKit
import ReaderCore
import Testing

@Suite struct NDEFJSONTests {
  @Test func rendersATextRecordWithSortedKeys() throws {
    #expect(
      NDEFJSON.render(NDEFMessage(try .text("hello")))
        == #"{"records":[{"encoding":"UTF-8","id":"","language":"en","payload":"02656e68656c6c6f","text":"hello","tnf":1,"type":"54"}]}"#
    )
  }

  @Test func rendersUTF16TextWithItsByteOrder() throws {
    let json = NDEFJSON.render(NDEFMessage(try .text("A", encoding: .utf16LittleEndianWithBOM)))
    #expect(json.contains(#""bom":true,"byteOrder":"LE","encoding":"UTF-16""#))
  }

  @Test func rendersAURIRecordExpanded() throws {
    #expect(
      NDEFJSON.render(NDEFMessage(try .uri("https://www.example.com", identifier: [0x01])))
        == #"{"records":[{"id":"01","payload":"026578616d706c652e636f6d","tnf":1,"type":"55","uri":"https://www.example.com","uriPrefix":2}]}"#
    )
  }

  @Test func rendersASmartPosterWithItsNestedRecordsAndTitles() throws {
    let message = try NDEFDecoder().decode(SmartPosterRecordTests.example)
    let object = try #require(try parse(NDEFJSON.render(message))["records"] as? [[String: Any]])[0]
    #expect(object["uri"] as? String == "https://www.nfc-forum.org")
    #expect(object["action"] as? String == "exec")
    let titles = try #require(object["titles"] as? [[String: String]])
    #expect(
      titles == [["language": "en-US", "text": "Hello, world"], ["language": "fr-CA", "text": "Bonjour, le monde"]])
    let nested = try #require(object["records"] as? [[String: Any]])
    #expect(nested.count == 4)
    #expect(nested[0]["uri"] as? String == "https://www.nfc-forum.org")
    #expect(nested[3]["action"] as? String == "exec")
    #expect(nested[3]["type"] as? String == "616374")
  }

  @Test func rendersMediaAbsoluteURIAndExternalTypes() throws {
    let message = NDEFMessage(
      try .media(type: "application/json", payload: NDEFBytes(utf8: #"{"a":1}"#)),
      try .media(type: "image/png", payload: [0x89]),
      try .absoluteURI("https://example.com/t"),
      try .external("android.com:pkg", payload: NDEFBytes(utf8: "com.example")),
      .empty)
    let records = try #require(try parse(NDEFJSON.render(message))["records"] as? [[String: Any]])
    #expect(records[0]["mediaType"] as? String == "application/json")
    #expect(records[0]["text"] as? String == #"{"a":1}"#)
    #expect(records[1]["mediaType"] as? String == "image/png")
    #expect(records[1]["text"] == nil)
    #expect(records[2]["absoluteURI"] as? String == "https://example.com/t")
    #expect(records[3]["externalType"] as? String == "android.com:pkg")
    #expect(records[4]["tnf"] as? Int == 0)
  }

  @Test func escapesQuotesBackslashesAndControlCharacters() throws {
    let json = NDEFJSON.render(NDEFMessage(try .text("a\"b\\c\n\u{01}é")))
    #expect(json.contains(#""text":"a\"b\\c\n\u0001é""#))
    #expect(try parse(json)["records"] != nil)
  }

  @Test func reportsAnUnparsableKnownTypeInAnErrorField() throws {
    var options = NDEFDecodingOptions()
    options.validatesWellKnownPayloads = false
    let message = try NDEFDecoder(options: options).decode(hex("D1 01 02 55 00 FF"))
    let record = try #require(try parse(NDEFJSON.render(message))["records"] as? [[String: Any]])[0]
    #expect((record["error"] as? String)?.hasPrefix("invalidUTF8") == true)
    #expect(record["uri"] == nil)
  }

  @Test func stopsAtTheNestingLimitInsteadOfRecursing() throws {
    var poster = try SmartPosterRecord(uri: URIRecord(uri: "tel:0")).record()
    for level in 1...50 {
      poster = try SmartPosterRecord(uri: URIRecord(uri: "tel:\(level)"), additionalRecords: [poster]).record()
    }
    var options = NDEFDecodingOptions()
    options.validatesWellKnownPayloads = false
    let message = try NDEFDecoder(options: options).decode(NDEFMessage(poster).encoded())
    let json = NDEFJSON.render(message)
    #expect(json.contains("nestingTooDeep"))
    #expect(try parse(json)["records"] != nil)
  }

  @Test func rendersHostileNestingWithoutRecursingPastTheCeilingWhateverTheOptions() throws {
    var options = NDEFDecodingOptions()
    options.validatesWellKnownPayloads = false
    options.maxNestingDepth = .max
    let message = try NDEFDecoder(options: options).decode(nestedSmartPosters(depth: 10_000))
    let json = NDEFJSON.render(message, options: options)
    #expect(json.contains("nestingTooDeep"))
    #expect(try parse(json)["records"] != nil)
  }

  @Test func everyRandomMessageRendersAsValidJSON() throws {
    var random = SeededRandom(seed: 99)
    for _ in 0..<100 {
      let message = try RandomMessages.message(&random)
      let object = try parse(NDEFJSON.render(message))
      #expect((object["records"] as? [Any])?.count == message.records.count)
    }
  }

  @Test func aTypedDecodeRendersTheSameTextAsItsMessage() throws {
    var random = SeededRandom(seed: 7)
    var messages = [try NDEFDecoder().decode(SmartPosterRecordTests.example)]
    for _ in 0..<200 { messages.append(try RandomMessages.message(&random)) }
    // A Smart Poster inside a Smart Poster, with an icon and an external record beside its URI and title.
    let inner = SmartPosterRecord(
      uri: URIRecord(uri: "https://x.org"), titles: [TextRecord(text: "Hi", languageCode: "en")],
      icons: [try .media(type: "image/png", payload: [0x89, 0x50])],
      additionalRecords: [try .external("a.b:c", payload: [0x7A])])
    messages.append(
      NDEFMessage(
        try SmartPosterRecord(uri: URIRecord(uri: "tel:1"), additionalRecords: [try inner.record()]).record(),
        try .text("UTF-16", encoding: .utf16LittleEndianWithBOM)))
    var rendered = 0
    for message in messages {
      // Messages whose well-known payloads do not parse have no typed decode.
      guard let typed = try? NDEFDecoder().decodeTyped(message.encoded()) else { continue }
      #expect(NDEFJSON.render(typed) == NDEFJSON.render(typed.message), "seed 7, \(message)")
      rendered += 1
    }
    #expect(rendered > 100)
  }

  private func parse(_ json: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
  }
}
