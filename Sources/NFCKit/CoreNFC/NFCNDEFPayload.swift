import Foundation
internal import ReaderCore

/// One record of an NDEF message in Core NFC's face: Core NFC's `NFCNDEFPayload`, with its
/// initializers, its four changeable fields as `Data`, and its well-known Text and URI helpers.
///
/// It is a view of NFCKit's ``NDEFRecord``, which checks the NDEF rules and carries the typed records
/// (``TextRecord``, ``URIRecord``, ``SmartPosterRecord``): `NFCNDEFPayload(record)` and
/// `try NDEFRecord(payload)` convert both ways. As in Core NFC, the fields can hold anything; the
/// rules are checked when the payload is converted or written to a tag.
///
/// ```swift
/// let link = NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://example.com")!
/// let note = NFCNDEFPayload.wellKnownTypeTextPayload(string: "hello", locale: Locale(identifier: "en"))!
/// let message = NFCNDEFMessage(records: [link, note])
/// note.wellKnownTypeTextPayload()  // ("hello", en)
/// ```
///
/// Thread-safe: a payload can be read and changed from any thread. Two payloads are equal when their
/// four fields hold the same values.
public final class NFCNDEFPayload: Sendable, Hashable, CustomStringConvertible {
  private struct Fields: Sendable {
    var typeNameFormat: NFCTypeNameFormat
    var type: Data
    var identifier: Data
    var payload: Data
    var chunkSize: Int
    /// The record the fields were read from, until one of them changes (keeps a TNF 7 record as is).
    var record: NDEFRecord?
  }

  private let fields: Locked<Fields>

  /// Creates a payload from its fields, as Core NFC's `init(format:type:identifier:payload:)`. Empty
  /// data means the field is absent. The payload is not chunked when written.
  public convenience init(format: NFCTypeNameFormat, type: Data, identifier: Data, payload: Data) {
    self.init(format: format, type: type, identifier: identifier, payload: payload, chunkSize: 0)
  }

  /// Creates a payload whose data is written in chunks of at most `chunkSize` bytes, as Core NFC's
  /// `init(format:type:identifier:payload:chunkSize:)`; 0 (or less) means no chunking. Reading joins
  /// the chunks again.
  public init(format: NFCTypeNameFormat, type: Data, identifier: Data, payload: Data, chunkSize: Int) {
    fields = Locked(
      Fields(
        typeNameFormat: format, type: type, identifier: identifier, payload: payload, chunkSize: max(0, chunkSize),
        record: nil))
  }

  /// The Core NFC face of an NFCKit record (a reserved TNF 7 record shows as `unknown`).
  public init(_ record: NDEFRecord) {
    fields = Locked(
      Fields(
        typeNameFormat: NFCTypeNameFormat(record.typeNameFormat), type: Data(record.type.storage),
        identifier: Data(record.identifier.storage), payload: Data(record.payload.storage), chunkSize: 0,
        record: record))
  }

  /// The Type Name Format.
  public var typeNameFormat: NFCTypeNameFormat {
    get { fields.withLock { $0.typeNameFormat } }
    set { change { $0.typeNameFormat = newValue } }
  }

  /// The TYPE field, e.g. `"T"` or `"text/plain"` as bytes; empty when absent.
  public var type: Data {
    get { fields.withLock { $0.type } }
    set { change { $0.type = newValue } }
  }

  /// The ID field; empty when absent.
  public var identifier: Data {
    get { fields.withLock { $0.identifier } }
    set { change { $0.identifier = newValue } }
  }

  /// The PAYLOAD field (chunks joined).
  public var payload: Data {
    get { fields.withLock { $0.payload } }
    set { change { $0.payload = newValue } }
  }

  /// The largest chunk the payload is written in; 0 for none.
  var chunkSize: Int { fields.withLock { $0.chunkSize } }

  // MARK: Well-known Text and URI records

  /// A well-known URI record for `url` (its absolute string, abbreviated with the longest URI prefix);
  /// nil when the URL holds a control character.
  public static func wellKnownTypeURIPayload(url: URL) -> NFCNDEFPayload? {
    wellKnownTypeURIPayload(string: url.absoluteString)
  }

  /// A well-known URI record for `uri`, abbreviated with the longest URI prefix; nil when `uri` holds a
  /// control character.
  public static func wellKnownTypeURIPayload(string uri: String) -> NFCNDEFPayload? {
    guard let record = try? URIRecord(uri: uri).record() else { return nil }
    return NFCNDEFPayload(record)
  }

  /// A well-known Text record (UTF-8) of `text` in the language of `locale` (its BCP 47 identifier,
  /// e.g. `en-US`); nil when that identifier does not fit a Text record (over 63 bytes).
  public static func wellKnownTypeTextPayload(string text: String, locale: Locale) -> NFCNDEFPayload? {
    guard let record = try? NDEFRecord.text(text, languageCode: locale.identifier(.bcp47)) else { return nil }
    return NFCNDEFPayload(record)
  }

  /// The misspelled name Core NFC's first iOS 13 SDK had.
  @available(*, deprecated, renamed: "wellKnownTypeTextPayload(string:locale:)")
  public static func wellKnowTypeTextPayload(string text: String, locale: Locale) -> NFCNDEFPayload? {
    wellKnownTypeTextPayload(string: text, locale: locale)
  }

  /// The URL of a well-known URI record; nil for any other record, a malformed one, or a URI that is
  /// not a valid URL.
  public func wellKnownTypeURIPayload() -> URL? {
    guard let record = currentRecord, let uri = try? URIRecord(record) else { return nil }
    return URL(string: uri.uri)
  }

  /// The text and language of a well-known Text record (UTF-8 or UTF-16); `(nil, nil)` for any other
  /// record or a malformed one.
  public func wellKnownTypeTextPayload() -> (String?, Locale?) {
    guard let record = currentRecord, let text = try? TextRecord(record) else { return (nil, nil) }
    return (text.text, Locale(identifier: text.languageCode))
  }

  // MARK: Conversion

  /// The record the fields make.
  /// - Throws: ``NDEFError`` (`invalidRecord`, with `context["field"]`) when they break an NDEF rule.
  func record() throws(NDEFError) -> NDEFRecord {
    let fields = self.fields.withLock { $0 }
    if let record = fields.record { return record }
    return try NDEFRecord(
      typeNameFormat: TypeNameFormat(fields.typeNameFormat), type: NDEFBytes(fields.type),
      identifier: NDEFBytes(fields.identifier), payload: NDEFBytes(fields.payload))
  }

  /// The record the fields make, or nil when they break an NDEF rule.
  private var currentRecord: NDEFRecord? { try? record() }

  private func change(_ body: (inout Fields) -> Void) {
    fields.withLock { fields in
      body(&fields)
      fields.record = nil
    }
  }

  // MARK: Equality, description

  public static func == (lhs: NFCNDEFPayload, rhs: NFCNDEFPayload) -> Bool {
    guard lhs !== rhs else { return true }
    let (left, right) = (lhs.fields.withLock { $0 }, rhs.fields.withLock { $0 })
    return left.typeNameFormat == right.typeNameFormat && left.type == right.type
      && left.identifier == right.identifier && left.payload == right.payload
  }

  public func hash(into hasher: inout Hasher) {
    let fields = self.fields.withLock { $0 }
    hasher.combine(fields.typeNameFormat)
    hasher.combine(fields.type)
    hasher.combine(fields.identifier)
    hasher.combine(fields.payload)
  }

  /// `NFCNDEFPayload(tnf: nfcWellKnown, type: 54, id: , payload: 02656e…)`, bytes in hex.
  public var description: String {
    let fields = self.fields.withLock { $0 }
    return "NFCNDEFPayload(tnf: \(fields.typeNameFormat), type: \(NDEFBytes(fields.type).hex), "
      + "id: \(NDEFBytes(fields.identifier).hex), payload: \(NDEFBytes(fields.payload).hex))"
  }
}

extension NDEFRecord {
  /// The NFCKit record a Core NFC payload makes.
  /// - Throws: ``NDEFError`` (`invalidRecord`, with `context["field"]`) when its fields break an NDEF
  ///   rule: a type on an empty or unknown record, no type on a well-known, media, absolute-URI or
  ///   external one, a type or identifier over 255 bytes, or the format `unchanged`.
  public init(_ payload: NFCNDEFPayload) throws(NDEFError) {
    self = try payload.record()
  }
}
