/// Decodes NDEF messages from bytes, safely: any input gives either a message or an ``NDEFError``.
///
/// Decoding follows the NFC Forum NDEF specification strictly: MB on the first record only, ME on the
/// last, nothing after it; TYPE_LENGTH, ID_LENGTH and PAYLOAD_LENGTH within the input; the TNF rules
/// (empty records have no fields, unknown and unchanged have no type); chunked records reassembled into
/// one record, with every middle and terminating chunk TNF 6 (unchanged), TYPE_LENGTH 0 and without IL.
/// With ``NDEFDecodingOptions/validatesWellKnownPayloads`` (the default) Text, URI and Smart Poster
/// payloads are checked too. TNF 7 (reserved) records are accepted as they are, with no rule on their
/// fields: the specification asks parsers to treat a reserved TNF as unknown, not to reject it. SR is
/// accepted on any record or chunk, since parsers must not reject a message for its SR flag alone.
/// TYPE fields are taken as bytes, without checking them against their TNF's grammar (a media type
/// without `/`, an external type without `:`, non-ASCII well-known names): a reader should still
/// show what a sloppy tag holds, and the typed views and builders are where names are checked.
/// ndeflib rejects some of them (a non-ASCII name, a media type without `/`); tests pin the difference.
///
/// Types, identifiers and payloads of the decoded records are views of `bytes` (no copy), except those of
/// chunked records, whose type, identifier and joined payloads are copied into a new buffer. No allocation is sized from a length
/// field before the bytes it announces are known to be present, so memory stays proportional to the input:
/// byte buffers never exceed it, and the list of records holds at most one record value (about 100
/// bytes) per 3 input bytes — the smallest record — and never more than
/// ``NDEFDecodingOptions/maxRecords`` of them.
///
/// - Throws: ``NDEFError`` with the offset of the first problem, from the start of `bytes`.
///
/// ```swift
/// let message = try NDEFDecoder().decode([0xD1, 0x01, 0x08, 0x54, 0x02, 0x65, 0x6E, 0x68, 0x65, 0x6C, 0x6C, 0x6F])
/// try TextRecord(message.records[0]).text // "hello"
/// ```
public struct NDEFDecoder: Sendable {
  /// The limits and checks in force.
  public var options: NDEFDecodingOptions

  /// Creates a decoder.
  public init(options: NDEFDecodingOptions = NDEFDecodingOptions()) {
    self.options = options
  }

  /// Decodes one message that fills `bytes` exactly.
  ///
  /// - Throws: ``NDEFError``; `offset` counts from `bytes[0]`.
  public func decode(_ bytes: [UInt8]) throws(NDEFError) -> NDEFMessage {
    try decode(bytes[...])
  }

  /// Decodes one message that fills `bytes` exactly (no copy of the slice).
  ///
  /// - Throws: ``NDEFError``; `offset` counts from `bytes.startIndex`.
  public func decode(_ bytes: ArraySlice<UInt8>) throws(NDEFError) -> NDEFMessage {
    let parser = MessageParser(input: bytes, options: options, depth: 0, absolute: .identity)
    var budget = options.effectiveMaxRecords
    return NDEFMessage(validated: try parser.parseMessage(budget: &budget))
  }

  /// Decodes one message that fills `bytes` exactly and reads its Text, URI and Smart Poster records, in one
  /// pass: the parse that checks each of those payloads also builds its value, which is kept.
  ///
  /// The message is the one ``decode(_:)-([UInt8])`` returns with the well-known payload checks on (they are
  /// on here whatever ``NDEFDecodingOptions/validatesWellKnownPayloads`` says: the values are built by them),
  /// and each value equals the record's typed view (``TextRecord/init(_:)``, ``URIRecord/init(_:)``,
  /// ``SmartPosterRecord/init(_:options:)`` with these options).
  ///
  /// - Throws: ``NDEFError``, the same as ``decode(_:)-([UInt8])`` with the well-known checks on; `offset`
  ///   counts from `bytes[0]`.
  ///
  /// ```swift
  /// let typed = try NDEFDecoder().decodeTyped(bytes)
  /// if case .uri(let link) = typed.values[0] { print(link.uri) }
  /// ```
  public func decodeTyped(_ bytes: [UInt8]) throws(NDEFError) -> NDEFTypedMessage {
    try decodeTyped(bytes[...])
  }

  /// Decodes one message that fills `bytes` exactly and reads its Text, URI and Smart Poster records, as
  /// ``decodeTyped(_:)`` does (no copy of the slice; `offset` counts from `bytes.startIndex`).
  @inline(__always)
  func decodeTyped(_ bytes: ArraySlice<UInt8>) throws(NDEFError) -> NDEFTypedMessage {
    var options = options
    options.validatesWellKnownPayloads = true
    let parser = MessageParser(input: bytes, options: options, depth: 0, absolute: .identity, building: .all)
    var budget = options.effectiveMaxRecords
    var values: [NDEFRecordValue] = []
    let records = try parser.parseMessage(budget: &budget, values: &values)
    return NDEFTypedMessage(message: NDEFMessage(validated: records), values: values)
  }

  /// Decodes one message that fills `bytes` exactly, e.g. the payload of a record.
  ///
  /// - Throws: ``NDEFError``; `offset` counts from `bytes[0]`.
  public func decode(_ bytes: NDEFBytes) throws(NDEFError) -> NDEFMessage {
    try decode(bytes.storage)
  }
}
