import NFCKit
import ReaderCore
import TestSupport
import Testing

/// Bytes from hex text (whitespace allowed); bad hex, a bug in the test itself, is recorded as an issue
/// and reads as no bytes.
func hex(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
  guard let bytes = NDEFBytes(hex: text) else {
    Issue.record("bad hex in test: \(text)", sourceLocation: sourceLocation)
    return []
  }
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

/// PAYLOAD_LENGTH as written on the wire: one byte with SR, else four bytes, most significant first.
func payloadLengthField(_ length: Int, short: Bool) -> [UInt8] {
  short
    ? [UInt8(length)]
    : [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
}

/// One record (or chunk) written out by hand from the NDEF record layout, independently of `NDEFEncoder`:
/// flags and TNF, TYPE_LENGTH, PAYLOAD_LENGTH, ID_LENGTH (with IL), TYPE, ID, PAYLOAD. `short` and `il`
/// default to the canonical choice: SR when the payload has fewer than 256 bytes, IL when there is an ID.
func wireRecord(
  tnf: UInt8, type: [UInt8] = [], identifier: [UInt8] = [], payload: [UInt8] = [], mb: Bool = true, me: Bool = true,
  cf: Bool = false, short: Bool? = nil, il: Bool? = nil
) -> [UInt8] {
  let short = short ?? (payload.count < 256)
  let il = il ?? !identifier.isEmpty
  var flags = tnf
  if mb { flags |= 0x80 }
  if me { flags |= 0x40 }
  if cf { flags |= 0x20 }
  if short { flags |= 0x10 }
  if il { flags |= 0x08 }
  var bytes = [flags, UInt8(type.count)] + payloadLengthField(payload.count, short: short)
  if il { bytes.append(UInt8(identifier.count)) }
  return bytes + type + identifier + payload
}

/// A TNF 7 (reserved) record, which only the decoder can produce: written as one record and decoded.
func reservedRecord(type: [UInt8], identifier: [UInt8], payload: [UInt8]) -> NDEFRecord {
  // The decoder accepts any fields on TNF 7.
  fixture(or: .empty) {
    try NDEFDecoder().decode(wireRecord(tnf: 7, type: type, identifier: identifier, payload: payload)).records[0]
  }
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
      let type = random.bytes(Int.random(in: 0...3, using: &random))
      return reservedRecord(type: type, identifier: id.array, payload: payload(&random).array)
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

/// A message holding one Smart Poster nested `depth` deep: each poster's payload is a URI record followed by
/// the next poster; the innermost holds only its URI record. Written straight to bytes in one pass, so even
/// hostile depths (100,000) take linear time and memory.
func nestedSmartPosters(depth: Int) -> [UInt8] {
  let uri: [UInt8] = [0x01, 0x01, 0x55, 0x00]  // TYPE_LENGTH 1, PAYLOAD_LENGTH 1, "U", code 0x00: after the flags
  // payloadLengths[k]: the payload length of the poster at nesting level k (0 = innermost).
  var payloadLengths = [1 + uri.count]
  for _ in 1..<max(depth, 1) {
    let inner = payloadLengths.last!
    let innerRecord = (inner < 256 ? 3 : 6) + 2 + inner
    payloadLengths.append(1 + uri.count + innerRecord)
  }
  var bytes: [UInt8] = []
  for level in stride(from: payloadLengths.count - 1, through: 0, by: -1) {
    let length = payloadLengths[level]
    let isOutermost = level == payloadLengths.count - 1
    // The outermost poster is the whole message (MB ME); a nested one is the last of two records (ME).
    let flags: UInt8 = (isOutermost ? 0xC1 : 0x41) | (length < 256 ? 0x10 : 0)
    bytes += [flags, 2] + payloadLengthField(length, short: length < 256) + [0x53, 0x70]
    // The URI record opens the nested message; it ends it too in the innermost poster.
    bytes.append(level == 0 ? 0xD1 : 0x91)
    bytes += uri
  }
  return bytes
}
