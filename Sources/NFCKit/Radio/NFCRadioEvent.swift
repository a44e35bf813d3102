public import ReaderCore

/// Something an `NFCRadio` reports, always on the reader system's scheduler.
public enum NFCRadioEvent: Sendable, Hashable {
  /// Polling round `round` is running: the radio looks for tags (and the sheet may show).
  case pollingStarted(NFCRadioRequestID)
  /// Polling round `round` could not start, or stopped on its own (the radio was turned off).
  case pollingFailed(NFCRadioRequestID, NFCRadioFailure)
  /// Tags entered the field during round `round`.
  case tagsDetected(NFCRadioRequestID, [NFCRadioTagID])
  /// A tag detected during round `round` left the field.
  case tagRemoved(NFCRadioRequestID, NFCRadioTagID)
  /// The answer to the tag command `request`.
  case response(NFCRadioRequestID, NFCRadioResponse)
  /// The user tapped Cancel on the sheet shown for round `round`.
  case userCanceled(NFCRadioRequestID)
  /// The system ended every reader session of the app: the app moved to the background, the NFC
  /// service restarted.
  case terminated
}

/// The answer to a tag command.
public enum NFCRadioResponse: Sendable, Hashable {
  /// `connect(to:request:)` selected the tag.
  case connected
  /// `queryNDEFStatus(of:request:)`: the tag's NDEF status.
  case status(NFCRadioTagStatus)
  /// `readNDEF(from:request:)`: the bytes of the NDEF message area, as stored (empty for a blank tag).
  case read([UInt8])
  /// `writeNDEF(_:to:request:)` stored the message.
  case written
  /// `writeLock(_:request:)` made the tag read-only.
  case locked
  /// The command failed.
  case failed(NFCRadioFailure)
}

/// Why the radio could not do something, as the hardware or system reports it. The session maps each
/// to an `NFCReaderError` code (see `NFCReaderError(radioFailure:)`).
public enum NFCRadioFailure: Sendable, Hashable {
  /// The host has no NFC reader or service (`readerErrorUnsupportedFeature`).
  case unsupported
  /// The radio is off (`readerErrorRadioDisabled`).
  case radioOff
  /// Another process or session holds the radio (`readerSessionInvalidationErrorSystemIsBusy`).
  case busy
  /// The system stopped the session (`readerSessionInvalidationErrorSessionTerminatedUnexpectedly`).
  case terminated
  /// The tag left the field or was reset during the command (`readerTransceiveErrorTagConnectionLost`).
  case tagLost
  /// The tag has no NDEF area (`readerTransceiveErrorTagResponseError`).
  case notNDEFFormatted
  /// The tag is read-only (`ndefReaderSessionErrorTagNotWritable`).
  case notWritable
  /// The message is larger than the tag holds (`ndefReaderSessionErrorTagSizeTooSmall`).
  case capacityExceeded
  /// The tag did not take a write (`ndefReaderSessionErrorTagUpdateFailure`).
  case updateFailed
  /// The tag answered with an error; `detail` says what (e.g. a status word)
  /// (`readerTransceiveErrorTagResponseError`).
  case tagResponse(detail: String)
  /// `failure`, with what the hardware or its service reported: a sentence replacing the failure's
  /// own (`message`), the underlying fault (`cause`: a tag's status word, a PC/SC code) and details for
  /// the error's `context` (e.g. `"step"`, `"reader"`), which take precedence over the failure's.
  indirect case detailed(NFCRadioFailure, message: String?, cause: ErrorCause?, context: [String: String])
}
