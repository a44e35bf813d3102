/// An NDEF message: one or more records.
///
/// **What an "empty message" is.** The NFC Forum NDEF specification defines a message as one or more
/// records, so the smallest message is a single empty record (TNF 0), encoded `D0 00 00`; that is
/// ``empty``, and ``isEmpty`` is `true` for it. Zero bytes are not an NDEF message: they are what a tag
/// whose NDEF area has length 0 holds ("initialized" tags), and decoding them throws
/// ``NDEFError/Code/zeroLengthMessage`` (Core NFC reports the same case as
/// `ndefReaderSessionErrorZeroLengthMessage`). A message therefore never has zero records.
///
/// ```swift
/// let message = NDEFMessage(try .uri("https://www.example.com"), try .text("hello"))
/// let bytes = message.encoded()
/// try NDEFMessage(decoding: bytes) == message // true
/// ```
public struct NDEFMessage: Hashable, Sendable, CustomStringConvertible {
  /// The records, in order; never empty.
  public let records: [NDEFRecord]

  /// Creates a message from its records.
  ///
  /// - Throws: ``NDEFError/Code/zeroLengthMessage`` when `records` is empty (use ``empty`` for the
  ///   message that carries nothing).
  public init(records: [NDEFRecord]) throws(NDEFError) {
    guard !records.isEmpty else {
      throw NDEFError(
        .zeroLengthMessage, "an NDEF message has at least one record", offset: 0,
        expected: "one or more records (NDEFMessage.empty is the single empty record)",
        context: ["field": "records"])
    }
    self.records = records
  }

  /// Creates a message from one or more records.
  public init(_ first: NDEFRecord, _ more: NDEFRecord...) {
    records = [first] + more
  }

  /// Creates a message from records the decoder produced (never empty).
  init(validated records: [NDEFRecord]) {
    self.records = records
  }

  /// Decodes a message from its bytes with ``NDEFDecoder``.
  ///
  /// - Throws: ``NDEFError`` describing the first malformed byte.
  public init(decoding bytes: [UInt8], options: NDEFDecodingOptions = NDEFDecodingOptions()) throws(NDEFError) {
    self = try NDEFDecoder(options: options).decode(bytes)
  }

  /// The NDEF specification's empty message: one empty record, encoded `D0 00 00`.
  public static let empty = NDEFMessage(.empty)

  /// Whether the message carries nothing: every record is an empty record (TNF 0).
  public var isEmpty: Bool { records.allSatisfy { $0.typeNameFormat == .empty } }

  /// The canonical encoding (see ``NDEFEncoder``).
  public func encoded() -> [UInt8] { NDEFEncoder().encode(self) }

  /// The length in bytes of the canonical encoding (Core NFC's `NFCNDEFMessage.length`).
  public var length: Int { NDEFEncoder().encodedLength(of: self) }

  /// `NDEFMessage([record, …])`.
  public var description: String {
    "NDEFMessage([\(records.map(\.description).joined(separator: ", "))])"
  }
}
