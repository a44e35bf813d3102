import Foundation
internal import ReaderCore

/// An NDEF message in Core NFC's face: Core NFC's `NFCNDEFMessage`, the type
/// `readerSession(_:didDetectNDEFs:)` hands to the app and `NFCNDEFTag.readNDEF` returns.
///
/// It is a view of NFCKit's ``NDEFMessage``: `NFCNDEFMessage(message)` and `try NDEFMessage(message)`
/// convert both ways, and a message read from a tag converts back to exactly what was read. As in
/// Core NFC, `records` can be changed and may be empty (the NDEF empty message, one empty record, is
/// what an empty message writes); the NDEF rules are checked when the message is converted or written.
///
/// ```swift
/// func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
///   for message in messages {
///     for record in message.records where record.typeNameFormat == .nfcWellKnown {
///       if let url = record.wellKnownTypeURIPayload() { print(url) }
///     }
///   }
/// }
/// ```
///
/// Thread-safe. Two messages are equal when their records are.
public final class NFCNDEFMessage: Sendable, Hashable, CustomStringConvertible {
  private let storage: Locked<[NFCNDEFPayload]>

  /// Creates a message from its records; an empty array makes an empty message.
  public init(records: [NFCNDEFPayload]) {
    storage = Locked(records)
  }

  /// Decodes a message from the raw bytes of exactly one NDEF message; nil when they are not one
  /// (see ``NDEFDecoder`` for what is checked).
  public convenience init?(data: Data) {
    guard let message = try? NDEFMessage(decoding: Array(data)) else { return nil }
    self.init(message)
  }

  /// The Core NFC face of an NFCKit message.
  public convenience init(_ message: NDEFMessage) {
    self.init(records: message.records.map(NFCNDEFPayload.init))
  }

  /// The records, in order.
  public var records: [NFCNDEFPayload] {
    get { storage.withLock { $0 } }
    set { storage.withLock { $0 = newValue } }
  }

  /// The length in bytes of the message as written to a tag (chunked records counted as written);
  /// 3 for an empty message.
  public var length: Int {
    let records = self.records
    guard !records.isEmpty else { return 3 }
    return records.reduce(0) { total, record in
      let (type, identifier, payload) = (record.type.count, record.identifier.count, record.payload.count)
      let chunk = record.chunkSize
      guard chunk >= 1, payload > chunk else { return total + Self.recordLength(type, identifier, payload) }
      // The first chunk carries the type and identifier; the others have neither.
      let chunks = (payload + chunk - 1) / chunk
      let first = Self.recordLength(type, identifier, chunk)
      let middle = (chunks - 2) * Self.recordLength(0, 0, chunk)
      let last = Self.recordLength(0, 0, payload - (chunks - 1) * chunk)
      return total + first + middle + last
    }
  }

  /// The bytes of one record: header, lengths, fields.
  private static func recordLength(_ type: Int, _ identifier: Int, _ payload: Int) -> Int {
    3 + (payload < 256 ? 0 : 3) + (identifier == 0 ? 0 : 1) + type + identifier + payload
  }

  // MARK: Conversion

  /// The message and its bytes as written to a tag (each record chunked by its payload's `chunkSize`).
  /// - Throws: ``NDEFError`` (`invalidRecord`, with `context["field"]` and `context["record"]`, the
  ///   record's index) when a record breaks an NDEF rule.
  func encoded() throws(NDEFError) -> (message: NDEFMessage, bytes: [UInt8]) {
    let payloads = records
    let message = try NDEFMessage(payloads: payloads)
    let bytes = NDEFEncoder().encode(message, chunkSizes: { payloads.isEmpty ? 0 : payloads[$0].chunkSize })
    return (message, bytes)
  }

  // MARK: Equality, description

  public static func == (lhs: NFCNDEFMessage, rhs: NFCNDEFMessage) -> Bool {
    lhs === rhs || lhs.records == rhs.records
  }

  public func hash(into hasher: inout Hasher) { hasher.combine(records) }

  /// `NFCNDEFMessage([NFCNDEFPayload(…), …])`.
  public var description: String {
    "NFCNDEFMessage([\(records.map(\.description).joined(separator: ", "))])"
  }
}

extension NDEFMessage {
  /// The NFCKit message a Core NFC message makes; an empty one is ``NDEFMessage/empty``.
  /// - Throws: ``NDEFError`` (`invalidRecord`, with `context["field"]` and `context["record"]`, the
  ///   record's index) when a record breaks an NDEF rule.
  public init(_ message: NFCNDEFMessage) throws(NDEFError) {
    try self.init(payloads: message.records)
  }

  /// The message `payloads` make (see `init(_:)`).
  init(payloads: [NFCNDEFPayload]) throws(NDEFError) {
    guard !payloads.isEmpty else {
      self = .empty
      return
    }
    var records: [NDEFRecord] = []
    records.reserveCapacity(payloads.count)
    for (index, payload) in payloads.enumerated() {
      do {
        records.append(try payload.record())
      } catch {
        var error = error
        error.context["record"] = String(index)
        throw error
      }
    }
    self.init(validated: records)
  }
}
