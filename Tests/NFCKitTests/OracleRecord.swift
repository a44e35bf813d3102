import NFCKit

/// One record as the ndeflib oracle scripts print it (see Tests/NFCKitTests/Oracle/ndef_view.py), or
/// the same view built from an NFCKit record. Equality ignores the header flags, which only ndeflib reports.
struct OracleRecord: Decodable, Sendable, Equatable, CustomStringConvertible {
  var tnf: Int
  var type: String
  var id: String
  var payload: String
  var cf: Bool?
  var text: String?
  var language: String?
  var encoding: String?
  var uri: String?
  var titles: [String: String]?
  var action: String?
  var size: Int?
  var resourceType: String?
  var records: [OracleRecord]?
  var typedError: String?

  static func == (lhs: OracleRecord, rhs: OracleRecord) -> Bool {
    (lhs.tnf, lhs.type, lhs.id, lhs.payload) == (rhs.tnf, rhs.type, rhs.id, rhs.payload)
      && (lhs.text, lhs.language, lhs.encoding, lhs.uri) == (rhs.text, rhs.language, rhs.encoding, rhs.uri)
      && lhs.titles == rhs.titles && lhs.action == rhs.action && lhs.size == rhs.size
      && lhs.resourceType == rhs.resourceType && lhs.records == rhs.records && lhs.typedError == rhs.typedError
  }

  var description: String {
    var parts = ["tnf=\(tnf)", "type=\(type)", "id=\(id)", "payload=\(payload.prefix(64))"]
    for (key, value) in [
      ("text", text), ("language", language), ("encoding", encoding), ("uri", uri), ("action", action),
      ("resourceType", resourceType), ("typedError", typedError),
    ] {
      if let value { parts.append("\(key)=\(value.debugDescription)") }
    }
    if let titles { parts.append("titles=\(titles)") }
    if let size { parts.append("size=\(size)") }
    if let records { parts.append("records=\(records)") }
    return "{" + parts.joined(separator: " ") + "}"
  }

  /// The raw fields of an NFCKit record, with no decoded fields.
  init(raw record: NDEFRecord) {
    tnf = Int(record.typeNameFormat.rawValue)
    type = record.type.hex
    id = record.identifier.hex
    payload = record.payload.hex
  }

  /// The view of an NFCKit record, decoded with NFCKit's typed views the way ndeflib decodes its known types.
  init(_ record: NDEFRecord) throws {
    self.init(raw: record)
    if record.isWellKnown("T") {
      let value = try TextRecord(record)
      text = value.text
      language = value.languageCode
      encoding = value.encoding.isUTF16 ? "UTF-16" : "UTF-8"
    } else if record.isWellKnown("U") {
      uri = try URIRecord(record).uri
    } else if record.isWellKnown("Sp") {
      let poster = try SmartPosterRecord(record)
      uri = poster.uri.uri
      titles = Dictionary(poster.titles.map { ($0.languageCode, $0.text) }, uniquingKeysWith: { first, _ in first })
      action = poster.action?.description
      size = poster.size.map(Int.init)
      resourceType = poster.resourceType
      records = try NDEFDecoder().decode(record.payload).records.map { try OracleRecord($0) }
    }
  }

  /// ndeflib's records with chunked records joined: a record with CF and the TNF 6 records after it become
  /// one record whose payload is the chunks' payloads joined (ndeflib does not reassemble). Joined records
  /// keep only the raw fields, since ndeflib decoded the first chunk alone; `chunked` marks them.
  static func joiningChunks(_ records: [OracleRecord]) -> [(record: OracleRecord, chunked: Bool)] {
    var joined: [(record: OracleRecord, chunked: Bool)] = []
    var index = 0
    while index < records.count {
      var record = records[index]
      var chunked = record.cf == true
      let wasChunked = chunked
      index += 1
      if chunked {
        record = OracleRecord(tnf: record.tnf, type: record.type, id: record.id, payload: record.payload)
      }
      while chunked, index < records.count, records[index].tnf == 6 {
        record.payload += records[index].payload
        chunked = records[index].cf == true
        index += 1
      }
      joined.append((record, wasChunked))
    }
    return joined
  }

  private init(tnf: Int, type: String, id: String, payload: String) {
    self.tnf = tnf
    self.type = type
    self.id = id
    self.payload = payload
  }
}

/// One line of `ndef_corpus.py`.
struct OracleCorpusEntry: Decodable, Sendable {
  var name: String
  var hex: String
  var chunked: Bool
  var records: [OracleRecord]
}

/// One line of `ndef_decode.py`.
struct OracleDecodeResult: Decodable, Sendable {
  var ok: Bool
  var records: [OracleRecord]?
  var error: String?
  /// Set when ndeflib's own `message_decoder` rejects the message as a whole although its records decode.
  var strictError: String?
}
