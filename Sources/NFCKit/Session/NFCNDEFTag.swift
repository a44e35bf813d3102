import Synchronization

/// An NDEF tag handed to a read-write session's delegate (`readerSession(_:didDetect:)`): Core NFC's
/// `NFCNDEFTag`.
///
/// A handle is good for one presentation of the tag, in the polling round it was detected in. Connect
/// it with `session.connect(to:)` first; then query, read, write or lock it. Completion handlers run
/// on the session's queue. Failures:
/// - `readerTransceiveErrorSessionInvalidated`: the session has ended (the handle is stale for good).
/// - `readerTransceiveErrorTagConnectionLost`: the tag left the field (also mid-command), or
///   `restartPolling()` made the handle stale (`context["reason"] == "pollingRestarted"`).
/// - `readerTransceiveErrorTagNotConnected`: another tag is the connected one.
/// - `readerErrorInvalidParameter`: the tag was given to another session's `connect(to:)`.
/// - reading: `ndefReaderSessionErrorZeroLengthMessage` (blank tag), `readerTransceiveErrorTagResponseError`
///   (malformed message, with `ndefError` and its byte offset; or a tag that is not NDEF-formatted).
/// - writing: `ndefReaderSessionErrorTagNotWritable`, `ndefReaderSessionErrorTagSizeTooSmall`,
///   `ndefReaderSessionErrorTagUpdateFailure`.
public final class NFCNDEFTag: Sendable, Hashable, CustomStringConvertible {
  let ref: NFCSessionStateMachine.TagRef
  /// The session that handed the tag out, which runs its operations.
  let session: NFCNDEFReaderSession
  private let available = Atomic<Bool>(true)

  init(ref: NFCSessionStateMachine.TagRef, session: NFCNDEFReaderSession) {
    self.ref = ref
    self.session = session
  }

  /// Whether the tag can still be used: false once it left the field, polling restarted, or the
  /// session ended.
  public var isAvailable: Bool { available.load(ordering: .acquiring) }

  func markUnavailable() { available.store(false, ordering: .releasing) }

  // MARK: Completion handlers (Core NFC's forms)

  /// Asks whether the tag holds NDEF, can be written, and the largest message it takes (bytes). The
  /// error, when there is one, is an ``NFCReaderError`` (the status is then `notSupported`, the
  /// capacity 0).
  public func queryNDEFStatus(
    completionHandler: @escaping @Sendable (NFCNDEFStatus, Int, (any Error)?) -> Void
  ) {
    session.perform(.queryNDEFStatus, on: self) { outcome in
      switch outcome {
      case .status(let status, let capacity): completionHandler(status, capacity, nil)
      case .failed(let error): completionHandler(.notSupported, 0, error)
      case .connected, .message, .done: completionHandler(.notSupported, 0, Self.mismatch(outcome))
      }
    }
  }

  /// Reads the tag's NDEF message, in Core NFC's face (`try NDEFMessage(message)` gives NFCKit's). The
  /// error, when there is one, is an ``NFCReaderError``.
  public func readNDEF(completionHandler: @escaping @Sendable (NFCNDEFMessage?, (any Error)?) -> Void) {
    session.perform(.readNDEF, on: self) { outcome in
      switch outcome {
      case .message(let message): completionHandler(NFCNDEFMessage(message), nil)
      case .failed(let error): completionHandler(nil, error)
      case .connected, .status, .done: completionHandler(nil, Self.mismatch(outcome))
      }
    }
  }

  /// Replaces the tag's NDEF message with `message`, each record chunked as its payload's `chunkSize`
  /// says. A message that breaks an NDEF rule is not written: `readerErrorInvalidParameter` with the
  /// ``NFCReaderError/ndefError`` saying which record and field.
  public func writeNDEF(_ message: NFCNDEFMessage, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
    switch Self.bytes(of: message) {
    case .success(let bytes):
      session.perform(.writeNDEF(bytes), on: self) { completionHandler(Self.error(of: $0)) }
    case .failure(let error):
      session.reject(error) { completionHandler(Self.error(of: $0)) }
    }
  }

  /// Replaces the tag's NDEF message with `message` (in its canonical encoding).
  public func writeNDEF(_ message: NDEFMessage, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
    session.perform(.writeNDEF(message.encoded()), on: self) { completionHandler(Self.error(of: $0)) }
  }

  /// Makes the tag read-only for good; its status becomes `readOnly`.
  public func writeLock(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
    session.perform(.writeLock, on: self) { completionHandler(Self.error(of: $0)) }
  }

  // MARK: async

  /// Asks whether the tag holds NDEF, can be written, and the largest message it takes (bytes).
  public func queryNDEFStatus() async throws(NFCReaderError) -> (status: NFCNDEFStatus, capacity: Int) {
    try await session.awaitOutcome(.queryNDEFStatus, on: self) { outcome throws(NFCReaderError) in
      switch outcome {
      case .status(let status, let capacity): return (status, capacity)
      case .failed(let error): throw error
      case .connected, .message, .done: throw Self.mismatch(outcome)
      }
    }
  }

  /// Reads the tag's NDEF message, in Core NFC's face (`try NDEFMessage(message)` gives NFCKit's).
  public func readNDEF() async throws(NFCReaderError) -> NFCNDEFMessage {
    try await session.awaitOutcome(.readNDEF, on: self) { outcome throws(NFCReaderError) in
      switch outcome {
      case .message(let message): return NFCNDEFMessage(message)
      case .failed(let error): throw error
      case .connected, .status, .done: throw Self.mismatch(outcome)
      }
    }
  }

  /// Replaces the tag's NDEF message with `message`; see `writeNDEF(_:completionHandler:)`.
  public func writeNDEF(_ message: NFCNDEFMessage) async throws(NFCReaderError) {
    let bytes = try Self.bytes(of: message).get()
    try await write(bytes)
  }

  /// Replaces the tag's NDEF message with `message` (in its canonical encoding).
  public func writeNDEF(_ message: NDEFMessage) async throws(NFCReaderError) {
    try await write(message.encoded())
  }

  /// Makes the tag read-only for good.
  public func writeLock() async throws(NFCReaderError) {
    try await session.awaitOutcome(.writeLock, on: self) { outcome throws(NFCReaderError) in
      if let error = Self.error(of: outcome) { throw error }
    }
  }

  private func write(_ bytes: [UInt8]) async throws(NFCReaderError) {
    try await session.awaitOutcome(.writeNDEF(bytes), on: self) { outcome throws(NFCReaderError) in
      if let error = Self.error(of: outcome) { throw error }
    }
  }

  /// The bytes a Core NFC message is written as, or why it cannot be.
  private static func bytes(of message: NFCNDEFMessage) -> Result<[UInt8], NFCReaderError> {
    do {
      return .success(try message.encoded().bytes)
    } catch {
      var context = ["operation": "writeNDEF", "reason": "invalidMessage"]
      context["field"] = error.context["field"]
      context["record"] = error.context["record"]
      return .failure(
        NFCReaderError(
          .readerErrorInvalidParameter, "the message is not valid NDEF: \(error.message)", context: context,
          ndefError: error))
    }
  }

  /// `tag#N (session S)`.
  public var description: String { "\(ref.tag) (session \(ref.round.session))" }

  public static func == (lhs: NFCNDEFTag, rhs: NFCNDEFTag) -> Bool { lhs === rhs }
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

  private static func error(of outcome: NFCSessionStateMachine.Outcome) -> NFCReaderError? {
    switch outcome {
    case .done, .connected: nil
    case .failed(let error): error
    case .status, .message: mismatch(outcome)
    }
  }

  /// An outcome of the wrong kind: the machine answers each operation with its own kind, so this only
  /// guards against a broken invariant without crashing.
  static func mismatch(_ outcome: NFCSessionStateMachine.Outcome) -> NFCReaderError {
    NFCReaderError(
      .readerTransceiveErrorTagResponseError, "unexpected outcome \(outcome)", context: ["reason": "unexpectedOutcome"])
  }
}
