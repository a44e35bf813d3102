import NFCKit
import ReaderCore
import Testing

/// Bytes from hex text (whitespace allowed); traps on bad hex, which is a bug in the test itself.
func hex(_ text: String) -> [UInt8] {
  guard let bytes = NDEFBytes(hex: text) else { preconditionFailure("bad hex in test: \(text)") }
  return bytes.array
}

/// The error decoding `bytes` throws, or `nil` when it decodes.
func decodeError(_ bytes: [UInt8], options: NDEFDecodingOptions = NDEFDecodingOptions()) -> NDEFError? {
  do {
    _ = try NDEFDecoder(options: options).decode(bytes)
    return nil
  } catch {
    return error
  }
}

/// Expects decoding `bytes` to fail with `code` at `offset`, and returns the error.
@discardableResult
func expectDecodeError(
  _ bytes: [UInt8], _ code: NDEFError.Code, at offset: Int, options: NDEFDecodingOptions = NDEFDecodingOptions(),
  sourceLocation: SourceLocation = #_sourceLocation
) -> NDEFError? {
  guard let error = decodeError(bytes, options: options) else {
    Issue.record("expected \(code) at byte \(offset), but the bytes decoded", sourceLocation: sourceLocation)
    return nil
  }
  #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
  #expect(error.offset == offset, "\(error)", sourceLocation: sourceLocation)
  return error
}

/// The error a throwing NFCKit call throws, or `nil` when it succeeds.
func thrownError<T>(_ body: () throws(NDEFError) -> T) -> NDEFError? {
  do {
    _ = try body()
    return nil
  } catch {
    return error
  }
}

extension SeededRandom {
  /// `count` random bytes.
  mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) } }
}

/// Random valid records and messages built with the NFCKit API.
enum RandomMessages {
  static let languages = ["en", "de", "fr-CH", "ja", "zh-Hant-TW"]
  static let texts = ["hello", "", "Grüße", "日本語", "🎉 party", "tab\t", String(repeating: "x", count: 300)]
  static let mediaTypes = ["text/plain", "application/json", "text/vcard", "image/png", "application/octet-stream"]

  static func payload(_ random: inout SeededRandom) -> NDEFBytes {
    let lengths = [0, 1, 5, 255, 256, 300, Int.random(in: 0...600, using: &random)]
    return NDEFBytes(random.bytes(lengths.randomElement(using: &random)!))
  }

  static func identifier(_ random: inout SeededRandom) -> NDEFBytes {
    Bool.random(using: &random) ? [] : NDEFBytes(random.bytes(Int.random(in: 1...8, using: &random)))
  }

  static func record(_ random: inout SeededRandom) throws(NDEFError) -> NDEFRecord {
    let id = identifier(&random)
    switch Int.random(in: 0..<9, using: &random) {
    case 0:
      return try .text(
        texts.randomElement(using: &random)!, languageCode: languages.randomElement(using: &random)!,
        encoding: TextRecord.Encoding.allCases.randomElement(using: &random)!, identifier: id)
    case 1:
      let prefix = URIPrefix.all.randomElement(using: &random)!.string
      return try .uri(prefix + "example/\(Int.random(in: 0...999, using: &random))", identifier: id)
    case 2:
      return try .media(type: mediaTypes.randomElement(using: &random)!, payload: payload(&random), identifier: id)
    case 3:
      return try .absoluteURI("https://example.com/t", payload: payload(&random), identifier: id)
    case 4:
      return try .external("example.com:widget", payload: payload(&random), identifier: id)
    case 5:
      return try .unknown(payload: payload(&random), identifier: id)
    case 6:
      return .empty
    case 7:
      return try NDEFRecord(
        typeNameFormat: .reserved, type: NDEFBytes(random.bytes(Int.random(in: 0...3, using: &random))),
        identifier: id, payload: payload(&random))
    default:
      let poster = SmartPosterRecord(
        uri: URIRecord(uri: "https://www.example.com/\(Int.random(in: 0...99, using: &random))"),
        titles: [TextRecord(text: "Title", languageCode: "en"), TextRecord(text: "Titel", languageCode: "de")],
        action: SmartPosterRecord.Action.allCases.randomElement(using: &random),
        size: Bool.random(using: &random) ? UInt32.random(in: 0...UInt32.max, using: &random) : nil,
        resourceType: Bool.random(using: &random) ? "text/html" : nil)
      return try poster.record(identifier: id)
    }
  }

  static func message(_ random: inout SeededRandom, maxRecords: Int = 4) throws(NDEFError) -> NDEFMessage {
    var records: [NDEFRecord] = []
    for _ in 0..<Int.random(in: 1...maxRecords, using: &random) { records.append(try record(&random)) }
    return try NDEFMessage(records: records)
  }
}
