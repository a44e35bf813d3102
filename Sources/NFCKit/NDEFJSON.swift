internal import ReaderCore

/// The JSON view of NDEF messages printed by `readerctl ndef decode`.
///
/// A message is `{"records": [record, …]}`. Every record has `"tnf"` (0–7), `"type"`, `"id"` and
/// `"payload"` (lowercase hex). Known types add decoded fields:
/// - Text (`T`): `"text"`, `"language"`, `"encoding"` (`"UTF-8"` or `"UTF-16"`), and for UTF-16
///   `"byteOrder"` (`"BE"`/`"LE"`) and `"bom"`;
/// - URI (`U`): `"uri"` (expanded) and `"uriPrefix"` (the identifier code);
/// - Smart Poster (`Sp`): `"records"` (the nested message), `"uri"`, `"titles"` (`[{"language", "text"}]`),
///   and when present `"action"` (`"exec"`/`"save"`/`"edit"`), `"size"`, `"resourceType"`;
///   inside a Smart Poster, `act`, `s` and `t` records carry `"action"`, `"size"` and `"resourceType"`;
/// - media (TNF 2): `"mediaType"`, plus `"text"` for `text/…`, `application/json` and other JSON or XML
///   types whose payload is valid UTF-8;
/// - absolute URI (TNF 3): `"absoluteURI"`; external (TNF 4): `"externalType"`.
///
/// A known type whose payload does not parse (possible only when decoding without
/// ``NDEFDecodingOptions/validatesWellKnownPayloads``) gets `"error"` instead of its decoded fields.
/// Keys are sorted and the output is one line, so the rendering is deterministic.
///
/// ```swift
/// NDEFJSON.render(NDEFMessage(try .uri("https://www.example.com")))
/// // {"records":[{"id":"","payload":"026578616d706c652e636f6d","tnf":1,"type":"55","uri":"https://www.example.com","uriPrefix":2}]}
/// ```
public enum NDEFJSON {
  /// The JSON text for `message`; `options` bound the decoding of Smart Poster payloads.
  public static func render(_ message: NDEFMessage, options: NDEFDecodingOptions = NDEFDecodingOptions()) -> String {
    value(for: message.records, options: options, depth: 0, insideSmartPoster: false).rendered
  }

  /// The JSON text for a message decoded with ``NDEFDecoder/decodeTyped(_:)``: the same text as
  /// `render(typed.message, options: options)`, with each Text, URI and Smart Poster
  /// record read from the value the decode built instead of parsing its payload again.
  public static func render(_ typed: NDEFTypedMessage, options: NDEFDecodingOptions = NDEFDecodingOptions()) -> String {
    value(for: typed.records, values: typed.values, options: options, depth: 0, insideSmartPoster: false).rendered
  }

  /// The JSON text for one record.
  public static func render(_ record: NDEFRecord, options: NDEFDecodingOptions = NDEFDecodingOptions()) -> String {
    value(for: record, options: options, depth: 0, insideSmartPoster: false).rendered
  }

  /// The JSON object for a message; `values`, when given, are the typed views of `records`, in order.
  private static func value(
    for records: [NDEFRecord], values: [NDEFRecordValue]? = nil, options: NDEFDecodingOptions, depth: Int,
    insideSmartPoster: Bool
  ) -> JSONValue {
    .sortedObject([
      "records": .array(
        array(
          for: records, values: values, options: options, depth: depth,
          insideSmartPoster: insideSmartPoster))
    ])
  }

  /// The JSON objects of the records of a message, with their typed views when `values` holds them.
  private static func array(
    for records: [NDEFRecord], values: [NDEFRecordValue]?, options: NDEFDecodingOptions, depth: Int,
    insideSmartPoster: Bool
  ) -> [JSONValue] {
    records.indices.map {
      value(
        for: records[$0], typed: values?[$0], options: options, depth: depth, insideSmartPoster: insideSmartPoster)
    }
  }

  /// The JSON object for a record of a message nested `depth` Smart Posters deep; `typed`, when given, is the
  /// record's typed view built by the decode (so its payload is not parsed again).
  private static func value(
    for record: NDEFRecord, typed: NDEFRecordValue? = nil, options: NDEFDecodingOptions, depth: Int,
    insideSmartPoster: Bool
  ) -> JSONValue {
    var fields: [String: JSONValue] = [
      "tnf": .int(Int(record.typeNameFormat.rawValue)), "type": .string(record.type.hex),
      "id": .string(record.identifier.hex), "payload": .string(record.payload.hex),
    ]
    do throws(NDEFError) {
      switch record.typeNameFormat {
      case .nfcWellKnown:
        try addWellKnownFields(
          of: record, typed: typed, to: &fields, options: options, depth: depth, insideSmartPoster: insideSmartPoster)
      case .media:
        if let mediaType = record.mediaType {
          fields["mediaType"] = .string(mediaType)
          if isTextual(mediaType), let text = record.payload.utf8String { fields["text"] = .string(text) }
        }
      case .absoluteURI:
        if let uri = record.absoluteURI { fields["absoluteURI"] = .string(uri) }
      case .nfcExternal:
        if let name = record.externalType { fields["externalType"] = .string(name) }
      case .empty, .unknown, .unchanged, .reserved:
        break
      }
    } catch {
      fields["error"] = .string(error.description)
    }
    return .sortedObject(fields)
  }

  private static func addWellKnownFields(
    of record: NDEFRecord, typed: NDEFRecordValue?, to fields: inout [String: JSONValue], options: NDEFDecodingOptions,
    depth: Int, insideSmartPoster: Bool
  ) throws(NDEFError) {
    if record.isWellKnown("T") {
      let text: TextRecord
      if case .text(let built) = typed { text = built } else { text = try TextRecord(record) }
      fields["text"] = .string(text.text)
      fields["language"] = .string(text.languageCode)
      fields["encoding"] = .string(text.encoding.isUTF16 ? "UTF-16" : "UTF-8")
      if text.encoding.isUTF16 {
        fields["byteOrder"] = .string(text.encoding == .utf16LittleEndianWithBOM ? "LE" : "BE")
        fields["bom"] = .bool(text.encoding != .utf16BigEndian)
      }
    } else if record.isWellKnown("U") {
      let uri: URIRecord
      if case .uri(let built) = typed { uri = built } else { uri = try URIRecord(record) }
      fields["uri"] = .string(uri.uri)
      fields["uriPrefix"] = .int(Int(uri.prefix.code))
    } else if record.isWellKnown("Sp") {
      // The nested message counts against the nesting limit from this depth on, so hostile nesting
      // ends in an "error" field rather than deep recursion.
      var nestedOptions = options
      nestedOptions.maxNestingDepth = options.effectiveMaxNestingDepth - depth
      let poster: SmartPosterRecord
      if case .smartPoster(let built) = typed {
        poster = built
      } else {
        poster = try SmartPosterRecord(record, options: nestedOptions)
      }
      nestedOptions.maxNestingDepth -= 1
      // The nested records with their typed views, from one parse (with the well-known checks, which that
      // parse needs, only when they are on anyway).
      let nestedDecoder = NDEFDecoder(options: nestedOptions)
      if nestedOptions.validatesWellKnownPayloads, let nested = try? nestedDecoder.decodeTyped(record.payload.storage) {
        fields["records"] = .array(
          array(for: nested.records, values: nested.values, options: options, depth: depth + 1, insideSmartPoster: true)
        )
      } else {
        let nested = try nestedDecoder.decode(record.payload)
        fields["records"] = .array(
          array(for: nested.records, values: nil, options: options, depth: depth + 1, insideSmartPoster: true))
      }
      fields["uri"] = .string(poster.uri.uri)
      fields["titles"] = .array(
        poster.titles.map { .sortedObject(["language": .string($0.languageCode), "text": .string($0.text)]) })
      if let action = poster.action { fields["action"] = .string(action.description) }
      if let size = poster.size { fields["size"] = .int(Int(size)) }
      if let type = poster.resourceType { fields["resourceType"] = .string(type) }
    } else if insideSmartPoster {
      if record.isWellKnown("act"), record.payload.count == 1,
        let action = SmartPosterRecord.Action(rawValue: record.payload[0])
      {
        fields["action"] = .string(action.description)
      } else if record.isWellKnown("s"), record.payload.count == 4 {
        fields["size"] = .int(Int(record.payload.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
      } else if record.isWellKnown("t"), let type = record.payload.utf8String {
        fields["resourceType"] = .string(type)
      }
    }
  }

  /// Whether a media type's payload is text worth showing decoded.
  private static func isTextual(_ mediaType: String) -> Bool {
    let type = mediaType.lowercased()
    return type.hasPrefix("text/") || type == "application/json" || type.hasSuffix("+json")
      || type.hasSuffix("+xml") || type == "application/xml"
  }
}
