/// Receives the events of an `NFCNDEFReaderSession`, on the session's queue.
///
/// Ordering guarantees: `readerSessionDidBecomeActive` comes before any detection;
/// `readerSession(_:didInvalidateWithError:)` comes exactly once per session that was begun (or
/// invalidated), last: nothing reaches the delegate after it.
///
/// A delegate whose class implements `readerSession(_:didDetect:)` makes a read-write session, as in
/// Core NFC: it receives tags instead of messages. Core NFC decides by whether the optional method is
/// implemented; Swift cannot ask, so the first tags detected are offered to the delegate, and when the
/// protocol's default runs instead (the class has no such method) the session reads those tags itself
/// and is read-only from then on. Adopting ``NFCNDEFReaderSessionTagDelegate`` says read-write from the
/// start.
///
/// As Core NFC's, the protocol asks nothing of the delegate's concurrency: any class adopts it (an
/// `NSObject` subclass with mutable state too), and the session calls it on the session's queue only.
/// A `@MainActor` view controller passes `queue: .main` and adopts it with `@preconcurrency` in Swift 6
/// (or marks the methods `nonisolated`), as it would with Core NFC.
public protocol NFCNDEFReaderSessionDelegate: AnyObject {
  /// The session ended, for the reason in `error` — always an ``NFCReaderError``. The session cannot be
  /// begun again; create a new one for the next scan. `readerSessionInvalidationErrorFirstNDEFTagRead`
  /// and `readerSessionInvalidationErrorUserCanceled` are normal ends (``NFCReaderError/isNormalEnd``).
  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error)
  /// A read-only session read messages from a tag that entered the field, in Core NFC's face
  /// (``NFCNDEFMessage``; `try NDEFMessage(message)` gives NFCKit's, and `session.events()` carries
  /// NFCKit's ``NDEFMessage`` values).
  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage])
  /// Polling runs and the sheet shows. Default: nothing.
  func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession)
  /// Tags entered the field (read-write sessions). Connect one with `session.connect(to:)` before using
  /// it; for several, Apple's guidance is to ask the user to present one and call `restartPolling()`.
  /// Implementing it makes the session read-write; the default marks the delegate as one that reads
  /// messages only.
  func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag])
  /// A read-only session found a tag that gave no message: a blank tag
  /// (`ndefReaderSessionErrorZeroLengthMessage`), a malformed message (`readerTransceiveErrorTagResponseError`
  /// with ``NFCReaderError/ndefError`` holding the byte offset), a tag that is not NDEF-formatted, or a
  /// tag removed mid-read (`readerTransceiveErrorTagConnectionLost`). The session goes on polling. Not in
  /// Core NFC, which drops such tags silently. Default: nothing.
  func readerSession(_ session: NFCNDEFReaderSession, didFailToReadNDEF error: NFCReaderError)
}

extension NFCNDEFReaderSessionDelegate {
  public func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) {}
  public func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
    session.noteTagMethodMissing()
  }
  public func readerSession(_ session: NFCNDEFReaderSession, didFailToReadNDEF error: NFCReaderError) {}
}

/// A delegate that says up front that its session is read-write: it receives tags instead of messages,
/// and connects, reads, writes and locks them itself. Such a session never ends after a read (whatever
/// `invalidateAfterFirstRead` says); it ends with the app's `invalidate()` or the system's time limit. A
/// plain ``NFCNDEFReaderSessionDelegate`` that implements `readerSession(_:didDetect:)` gets the same
/// session, known at its first detection; this protocol also makes `didDetectNDEFs` optional.
public protocol NFCNDEFReaderSessionTagDelegate: NFCNDEFReaderSessionDelegate {
  /// Tags entered the field. Connect one with `session.connect(to:)` before using it; for several,
  /// Apple's guidance is to ask the user to present one and call `restartPolling()`.
  func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag])
}

extension NFCNDEFReaderSessionTagDelegate {
  /// Read-write sessions never report messages by themselves; a tag delegate need not implement this.
  public func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
}
