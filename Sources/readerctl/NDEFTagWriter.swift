import NFCKit
import ReaderCore

/// The app's side of a read-write session that writes one message, for `nfc write` on the simulator and
/// on PC/SC readers alike: connect to the first tag, query its status, write, read back, end. What it
/// found is kept in `result`; `ended` is set when the session is invalidated.
final class NDEFTagWriter: NFCNDEFReaderSessionTagDelegate, Sendable {
  struct Result {
    var status: NFCNDEFStatus?
    var capacity = 0
    var readBack: NDEFMessage?
    var failure: NFCReaderError?
  }

  let message: NDEFMessage
  let ended = Outcome<NFCReaderError>()
  private let narrate: @Sendable (String) -> Void
  private let state = Locked(Result())

  /// A writer of `message` that tells each step to `narrate`.
  init(message: NDEFMessage, narrate: @escaping @Sendable (String) -> Void) {
    self.message = message
    self.narrate = narrate
  }

  var result: Result { state.withLock { $0 } }

  /// How the write went, as `nfc write` reports it.
  enum Verdict {
    /// A step failed, or no tag was written (interrupted, or the session ended first): what to say
    /// and the error.
    case failed(String, NFCReaderError)
    /// The tag reads back another message than the one written.
    case readBackMismatch(NDEFMessage)
    /// The tag reads back the message written.
    case written(NDEFMessage)
  }

  /// How the write went, once the session has ended.
  var verdict: Verdict {
    let result = self.result
    if let failure = result.failure { return .failed("writing the tag failed", failure) }
    guard let readBack = result.readBack else {
      let error =
        ended.value.flatMap { $0.code == .readerSessionInvalidationErrorUserCanceled ? nil : $0 }
        ?? NFCReaderError(.readerSessionInvalidationErrorUserCanceled, "interrupted", context: ["by": "app"])
      return .failed(Interrupt.requested ? "interrupted" : "no tag was written", error)
    }
    return readBack == message ? .written(readBack) : .readBackMismatch(readBack)
  }

  /// The outcome's fields: the tag's status and capacity once queried, and the message's length.
  var fields: [(String, JSONValue)] {
    let result = self.result
    var fields: [(String, JSONValue)] = []
    if let status = result.status {
      fields += [("status", .string(status.description)), ("capacity", .int(result.capacity))]
    }
    fields.append(("length", .int(message.length)))
    return fields
  }

  /// The outcome's raw JSON: the message the tag read back, or `null`.
  var raw: [(String, String)] { [("message", result.readBack.map { NDEFJSON.render($0) } ?? "null")] }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    ended.set(NFCReaderError(invalidation: error))
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
    guard let tag = tags.first else { return }
    session.connect(to: tag) { [self] error in
      if let error { return fail(session, "connect", error) }
      tag.queryNDEFStatus { [self] status, capacity, error in
        if let error { return fail(session, "queryNDEFStatus", error) }
        state.withLock {
          $0.status = status
          $0.capacity = capacity
        }
        narrate("Connected; queryNDEFStatus: \(status), capacity \(capacity) bytes.")
        tag.writeNDEF(message) { [self] error in
          if let error { return fail(session, "writeNDEF", error) }
          narrate("writeNDEF: \(message.length) bytes written.")
          tag.readNDEF { [self] readBack, error in
            guard let readBack = readBack.flatMap({ try? NDEFMessage($0) }) else {
              return fail(
                session, "readNDEF", error ?? NFCReaderError(.readerTransceiveErrorTagResponseError, "no message"))
            }
            state.withLock { $0.readBack = readBack }
            narrate("readNDEF: \(NFCNarration.summary(readBack)).")
            session.alertMessage = "Tag written."
            session.invalidate()
          }
        }
      }
    }
  }

  /// Ends the session showing why on the sheet, as Core NFC's samples do.
  private func fail(_ session: NFCNDEFReaderSession, _ operation: String, _ failure: any Error) {
    let error =
      failure as? NFCReaderError
      ?? NFCReaderError(.readerTransceiveErrorTagResponseError, "\(operation): \(failure)")
    state.withLock { $0.failure = error }
    narrate("\(operation) failed: \(error.code) (\(error.errorCode)).")
    session.invalidate(errorMessage: Self.sheetText(for: error))
  }

  private static func sheetText(for error: NFCReaderError) -> String {
    switch error.code {
    case .ndefReaderSessionErrorTagNotWritable: "This tag is read-only."
    case .ndefReaderSessionErrorTagSizeTooSmall: "This tag is too small for the message."
    default: "The tag could not be written."
    }
  }
}
