/// Core NFC's name for an NDEF message: NFCKit's ``NDEFMessage``.
public typealias NFCNDEFMessage = NDEFMessage

/// Receives the events of an `NFCNDEFReaderSession`, on the session's queue.
///
/// Ordering guarantees: `readerSessionDidBecomeActive` comes before any detection;
/// `readerSession(_:didInvalidateWithError:)` comes exactly once per session that was begun (or
/// invalidated), last: nothing reaches the delegate after it.
///
/// A delegate that also adopts ``NFCNDEFReaderSessionTagDelegate`` makes a read-write session. (Core NFC
/// decides this by whether the optional `didDetect tags` method is implemented; Swift has no optional
/// protocol methods outside Objective-C, so the conformance says it.)
public protocol NFCNDEFReaderSessionDelegate: AnyObject, Sendable {
  /// The session ended, for the reason in `error` — always an ``NFCReaderError``. The session cannot be
  /// begun again; create a new one for the next scan. `readerSessionInvalidationErrorFirstNDEFTagRead`
  /// and `readerSessionInvalidationErrorUserCanceled` are normal ends (``NFCReaderError/isNormalEnd``).
  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error)
  /// A read-only session read messages from a tag that entered the field.
  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage])
  /// Polling runs and the sheet shows. Default: nothing.
  func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession)
  /// A read-only session found a tag that gave no message: a blank tag
  /// (`ndefReaderSessionErrorZeroLengthMessage`), a malformed message (`readerTransceiveErrorTagResponseError`
  /// with ``NFCReaderError/ndefError`` holding the byte offset), a tag that is not NDEF-formatted, or a
  /// tag removed mid-read (`readerTransceiveErrorTagConnectionLost`). The session goes on polling. Not in
  /// Core NFC, which drops such tags silently. Default: nothing.
  func readerSession(_ session: NFCNDEFReaderSession, didFailToReadNDEF error: NFCReaderError)
}

extension NFCNDEFReaderSessionDelegate {
  public func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) {}
  public func readerSession(_ session: NFCNDEFReaderSession, didFailToReadNDEF error: NFCReaderError) {}
}

/// The delegate of a read-write session: it receives tags instead of messages, and connects, reads,
/// writes and locks them itself. Such a session never ends after a read (whatever
/// `invalidateAfterFirstRead` says); it ends with the app's `invalidate()` or the system's time limit.
public protocol NFCNDEFReaderSessionTagDelegate: NFCNDEFReaderSessionDelegate {
  /// Tags entered the field. Connect one with `session.connect(to:)` before using it; for several,
  /// Apple's guidance is to ask the user to present one and call `restartPolling()`.
  func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag])
}

extension NFCNDEFReaderSessionTagDelegate {
  /// Read-write sessions never report messages by themselves; a tag delegate need not implement this.
  public func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
}
