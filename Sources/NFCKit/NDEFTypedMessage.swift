/// A decoded NDEF message with the typed view of each of its records (see ``NDEFDecoder/decodeTyped(_:)``).
///
/// `values[index]` is the view of `message.records[index]`: ``NDEFRecordValue/text(_:)``,
/// ``NDEFRecordValue/uri(_:)`` or ``NDEFRecordValue/smartPoster(_:)`` for the well-known records NFCKit reads,
/// ``NDEFRecordValue/none`` for the others.
public struct NDEFTypedMessage: Hashable, Sendable {
  /// The message, as ``NDEFDecoder/decode(_:)-([UInt8])`` returns it with the well-known payload checks on.
  public let message: NDEFMessage
  /// One value per record of ``message``, in the same order.
  public let values: [NDEFRecordValue]

  /// The records of ``message``.
  public var records: [NDEFRecord] { message.records }

  init(message: NDEFMessage, values: [NDEFRecordValue]) {
    self.message = message
    self.values = values
  }
}
