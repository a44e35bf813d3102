import NFCKit

extension NFCReaderError {
  /// The error a session's `didInvalidateWithError` gave, as an `NFCReaderError`: the sessions end
  /// with one; any other error reads as the session terminating unexpectedly.
  init(invalidation error: any Error) {
    self =
      error as? NFCReaderError
      ?? NFCReaderError(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly, "\(error)")
  }
}
