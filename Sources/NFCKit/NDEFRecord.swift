/// One logical NDEF record: a type name format, a type, an optional identifier and a payload.
///
/// The fields follow Core NFC's `NFCNDEFPayload`. A record always satisfies the NDEF rules, which the
/// initializer checks: a TYPE and an ID of at most 255 bytes and a payload of at most 2³²−1 bytes; an
/// empty record (TNF 0) has no type, identifier or payload; well-known, media, absolute-URI and external
/// records have a type; unknown records have none; and TNF 6 (unchanged) is not a record of its own
/// (it only marks chunks on the wire, which the decoder reassembles into one record).
///
/// TNF 7 (reserved) records cannot be created: the NDEF specification forbids generators from using a
/// reserved TNF. The decoder still accepts them (the specification asks parsers to treat them as unknown),
/// and a decoded TNF 7 record re-encodes byte for byte, so a message read from a tag can be written back.
///
/// Records decoded from bytes share the input buffer (see ``NDEFBytes``). Two records are equal when
/// their four fields hold the same bytes.
///
/// ```swift
/// let record = try NDEFRecord.uri("https://www.example.com")
/// record.typeNameFormat   // .nfcWellKnown
/// record.type.asciiString // "U"
/// record.payload.hex      // "026578616d706c652e636f6d"
/// ```
public struct NDEFRecord: Hashable, Sendable, CustomStringConvertible {
  /// TYPE, ID and PAYLOAD one after the other, as they lie on the wire: for a decoded record that is not
  /// chunked, one slice of the input. So a record holds one reference, and copying one retains one buffer,
  /// not three. Visible to inlined code only, so that reading a field of a record in an array copies nothing.
  @usableFromInline let fields: ArraySlice<UInt8>
  /// The length of TYPE, at the start of ``fields``.
  @usableFromInline let typeLength: UInt8
  /// The length of ID, after TYPE in ``fields``.
  @usableFromInline let identifierLength: UInt8
  /// How to read ``type``. (Stored after ``fields``, beside the other one-byte fields: a record takes 40 bytes in an
  /// array, not 48.)
  public let typeNameFormat: TypeNameFormat

  /// The TYPE field, e.g. `T` for a well-known Text record or `text/plain` for a media record.
  @inlinable public var type: NDEFBytes {
    NDEFBytes(fields[fields.startIndex..<(fields.startIndex + Int(typeLength))])
  }
  /// The ID field; empty when the record has none.
  @inlinable public var identifier: NDEFBytes {
    let start = fields.startIndex + Int(typeLength)
    return NDEFBytes(fields[start..<(start + Int(identifierLength))])
  }
  /// The PAYLOAD field; for a record decoded from chunks, the chunks' payloads joined.
  @inlinable public var payload: NDEFBytes {
    NDEFBytes(fields[(fields.startIndex + Int(typeLength) + Int(identifierLength))...])
  }

  /// Creates a record, checking the NDEF rules listed on the type.
  ///
  /// - Throws: ``NDEFError`` with code ``NDEFError/Code/invalidRecord`` (and `context["field"]` naming the
  ///   field) when a rule is broken, including for TNF 6 (unchanged) and TNF 7 (reserved).
  public init(
    typeNameFormat: TypeNameFormat, type: NDEFBytes = [], identifier: NDEFBytes = [], payload: NDEFBytes = []
  ) throws(NDEFError) {
    func invalid(_ field: String, _ message: String, expected: String) -> NDEFError {
      NDEFError(.invalidRecord, message, offset: 0, expected: expected, context: ["field": field])
    }
    guard type.count <= 255 else {
      throw invalid("type", "the type has \(type.count) bytes", expected: "at most 255 bytes")
    }
    guard identifier.count <= 255 else {
      throw invalid("identifier", "the identifier has \(identifier.count) bytes", expected: "at most 255 bytes")
    }
    guard UInt64(payload.count) <= UInt64(UInt32.max) else {
      throw invalid("payload", "the payload has \(payload.count) bytes", expected: "at most 4294967295 bytes")
    }
    switch typeNameFormat {
    case .empty:
      guard type.isEmpty, identifier.isEmpty, payload.isEmpty else {
        throw invalid(
          type.isEmpty ? (identifier.isEmpty ? "payload" : "identifier") : "type",
          "an empty record (TNF 0) has a type, an identifier or a payload",
          expected: "no type, identifier or payload")
      }
    case .nfcWellKnown, .media, .absoluteURI, .nfcExternal:
      guard !type.isEmpty else {
        throw invalid("type", "a \(typeNameFormat) record has an empty type", expected: "a type of 1 to 255 bytes")
      }
    case .unknown:
      guard type.isEmpty else {
        throw invalid("type", "an unknown-type record (TNF 5) has a type", expected: "an empty type")
      }
    case .unchanged:
      throw invalid(
        "typeNameFormat", "TNF 6 (unchanged) only marks the middle and terminating chunks of a chunked record",
        expected: "the format of the whole record; the encoder writes chunks itself")
    case .reserved:
      throw invalid(
        "typeNameFormat", "TNF 7 is reserved by the NFC Forum and must not be used by NDEF generators",
        expected: "TNF 0 to 5 (a decoded TNF 7 record re-encodes as it is)")
    }
    self.init(validated: typeNameFormat, type: type, identifier: identifier, payload: payload)
  }

  /// Creates a record whose fields the caller has already checked (TYPE and ID at most 255 bytes each); the
  /// three fields are copied into one buffer unless only the payload has bytes.
  init(validated typeNameFormat: TypeNameFormat, type: NDEFBytes, identifier: NDEFBytes, payload: NDEFBytes) {
    var fields = payload.storage
    if !type.isEmpty || !identifier.isEmpty {
      var joined: [UInt8] = []
      joined.reserveCapacity(type.count + identifier.count + payload.count)
      joined += type.storage
      joined += identifier.storage
      joined += payload.storage
      fields = joined[...]
    }
    self.init(validated: typeNameFormat, fields: fields, typeLength: type.count, identifierLength: identifier.count)
  }

  /// Creates a record from TYPE, ID and PAYLOAD one after the other in `fields`: the decoder's record, which
  /// the caller has checked.
  init(validated typeNameFormat: TypeNameFormat, fields: ArraySlice<UInt8>, typeLength: Int, identifierLength: Int) {
    self.typeNameFormat = typeNameFormat
    self.fields = fields
    self.typeLength = UInt8(typeLength)
    self.identifierLength = UInt8(identifierLength)
  }

  /// Two records are equal when their four fields hold the same bytes.
  public static func == (lhs: NDEFRecord, rhs: NDEFRecord) -> Bool {
    lhs.typeNameFormat == rhs.typeNameFormat && lhs.type == rhs.type && lhs.identifier == rhs.identifier
      && lhs.payload == rhs.payload
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(typeNameFormat)
    hasher.combine(type)
    hasher.combine(identifier)
    hasher.combine(payload)
  }

  /// The empty record (TNF 0, no type, identifier or payload); on its own it encodes as `D0 00 00`.
  public static let empty = NDEFRecord(validated: .empty, type: [], identifier: [], payload: [])

  // MARK: Builders

  /// A well-known Text record (`T`).
  ///
  /// - Throws: ``NDEFError/Code/invalidArgument`` when `languageCode` is empty, longer than 63 bytes or
  ///   not printable US-ASCII.
  ///
  /// ```swift
  /// let hello = try NDEFRecord.text("hello", languageCode: "en") // payload 02 65 6E 68 65 6C 6C 6F
  /// ```
  public static func text(
    _ text: String, languageCode: String = "en", encoding: TextRecord.Encoding = .utf8, identifier: NDEFBytes = []
  ) throws(NDEFError) -> NDEFRecord {
    try TextRecord(text: text, languageCode: languageCode, encoding: encoding).record(identifier: identifier)
  }

  /// A well-known URI record (`U`), abbreviated with the longest matching ``URIPrefix``.
  ///
  /// - Throws: ``NDEFError/Code/invalidArgument`` when the URI holds a control character (U+0000–U+001F).
  ///
  /// ```swift
  /// let link = try NDEFRecord.uri("https://www.example.com") // payload 02 "example.com"
  /// ```
  public static func uri(_ uri: String, identifier: NDEFBytes = []) throws(NDEFError) -> NDEFRecord {
    try URIRecord(uri: uri).record(identifier: identifier)
  }

  /// A media-type record (TNF 2), e.g. `text/plain`, `application/json` or `text/vcard`, whose payload is
  /// kept as raw bytes.
  ///
  /// - Throws: ``NDEFError/Code/invalidArgument`` when `type` is not `type/subtype` in printable US-ASCII
  ///   of at most 255 bytes.
  public static func media(type: String, payload: NDEFBytes, identifier: NDEFBytes = []) throws(NDEFError)
    -> NDEFRecord
  {
    try checkTypeName(type, field: "type", separator: "/", what: "a media type such as text/plain")
    return try NDEFRecord(typeNameFormat: .media, type: NDEFBytes(utf8: type), identifier: identifier, payload: payload)
  }

  /// An absolute-URI record (TNF 3): `uri` names the type of the payload.
  ///
  /// - Throws: ``NDEFError/Code/invalidArgument`` when `uri` is not printable US-ASCII with a `:` (at most
  ///   255 bytes).
  public static func absoluteURI(_ uri: String, payload: NDEFBytes = [], identifier: NDEFBytes = []) throws(NDEFError)
    -> NDEFRecord
  {
    try checkTypeName(uri, field: "uri", separator: ":", what: "an absolute URI such as https://example.com/t")
    return try NDEFRecord(
      typeNameFormat: .absoluteURI, type: NDEFBytes(utf8: uri), identifier: identifier, payload: payload)
  }

  /// An NFC Forum external-type record (TNF 4) named `domain:type`, e.g. `android.com:pkg`.
  ///
  /// - Throws: ``NDEFError/Code/invalidArgument`` when `name` is not `domain:type` in printable US-ASCII.
  public static func external(_ name: String, payload: NDEFBytes = [], identifier: NDEFBytes = []) throws(NDEFError)
    -> NDEFRecord
  {
    try checkTypeName(name, field: "name", separator: ":", what: "an external type name domain:type")
    return try NDEFRecord(
      typeNameFormat: .nfcExternal, type: NDEFBytes(utf8: name), identifier: identifier, payload: payload)
  }

  /// A record of unknown type (TNF 5): a payload with no type.
  ///
  /// - Throws: ``NDEFError/Code/invalidRecord`` when the payload is longer than 2³²−1 bytes.
  public static func unknown(payload: NDEFBytes, identifier: NDEFBytes = []) throws(NDEFError) -> NDEFRecord {
    try NDEFRecord(typeNameFormat: .unknown, identifier: identifier, payload: payload)
  }

  /// Checks a type name given to a builder: 1–255 bytes of printable US-ASCII, with `separator` strictly
  /// inside it.
  private static func checkTypeName(_ name: String, field: String, separator: Character, what: String)
    throws(NDEFError)
  {
    let bytes = Array(name.utf8)
    let printable = bytes.allSatisfy { (0x21...0x7E).contains($0) }
    let separatorIndex = name.firstIndex(of: separator)
    guard !bytes.isEmpty, bytes.count <= 255, printable, let separatorIndex, separatorIndex != name.startIndex,
      name.index(after: separatorIndex) != name.endIndex
    else {
      throw NDEFError(
        .invalidArgument, "\(field) \"\(name)\" is not \(what)", offset: 0,
        expected: "\(what): 1 to 255 printable US-ASCII bytes", context: ["field": field])
    }
  }

  // MARK: Accessors

  /// The type as a string when the record is well-known (TNF 1) and its type is US-ASCII, e.g. `"T"`.
  public var wellKnownTypeName: String? { typeNameFormat == .nfcWellKnown ? typeASCIIString : nil }

  /// The media type when the record is a media record (TNF 2) and its type is US-ASCII, e.g. `"text/plain"`.
  public var mediaType: String? { typeNameFormat == .media ? typeASCIIString : nil }

  /// The type URI when the record is an absolute-URI record (TNF 3) and its type is US-ASCII.
  public var absoluteURI: String? { typeNameFormat == .absoluteURI ? typeASCIIString : nil }

  /// The `domain:type` name when the record is an external-type record (TNF 4) and its type is US-ASCII.
  public var externalType: String? { typeNameFormat == .nfcExternal ? typeASCIIString : nil }

  /// ``type`` as a string when it is US-ASCII (read where it lies, without making an ``NDEFBytes`` of it); one
  /// of the ``KnownTypeNames`` is not made again.
  private var typeASCIIString: String? {
    fields.withUnsafeBufferPointer { fields in
      let type = UnsafeBufferPointer(rebasing: fields[0..<Int(typeLength)])
      return KnownTypeNames.string(type) ?? NDEFBytes.asciiString(type)
    }
  }

  /// Calls `body` with ``payload`` read where it lies (no ``NDEFBytes`` made of it), keeping a typed error.
  func withPayload<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
    try fields.withUnsafeBufferPointer { (fields) throws(E) in
      try body(UnsafeBufferPointer(rebasing: fields[(Int(typeLength) + Int(identifierLength))...]))
    }
  }

  /// Whether the record is a well-known record of the given type name (compared byte for byte).
  public func isWellKnown(_ name: String) -> Bool {
    // The lengths first: most records fail there, before the name's bytes are looked at.
    guard typeNameFormat == .nfcWellKnown, name.utf8.count == Int(typeLength) else { return false }
    var name = name
    return name.withUTF8 { name in
      var index = fields.startIndex
      for byte in name {
        guard fields[index] == byte else { return false }
        index += 1
      }
      return true
    }
  }

  /// Whether the record is a well-known record whose type is the one byte `name` (the decoder's test for
  /// `T`, `U`, `s` and `t`).
  func isWellKnown(_ name: UInt8) -> Bool {
    typeNameFormat == .nfcWellKnown && typeLength == 1 && fields[fields.startIndex] == name
  }

  /// Whether the record is a well-known record whose type is the bytes `first`, `second` and the optional
  /// `third` (the decoder's test for `Sp` and `act`).
  func isWellKnown(_ first: UInt8, _ second: UInt8, _ third: UInt8? = nil) -> Bool {
    guard typeNameFormat == .nfcWellKnown, typeLength == (third == nil ? 2 : 3) else { return false }
    let start = fields.startIndex
    return fields[start] == first && fields[start + 1] == second && (third.map { fields[start + 2] == $0 } ?? true)
  }

  /// `NDEFRecord(tnf: nfcWellKnown, type: 54, id: , payload: 02656e…)`, bytes in hex.
  public var description: String {
    "NDEFRecord(tnf: \(typeNameFormat), type: \(type.hex), id: \(identifier.hex), payload: \(payload.hex))"
  }
}
