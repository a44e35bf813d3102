import NFCKit
import ReaderKit

/// The exit statuses of `readerctl`, chosen in this one place (sysexits.h values where one fits).
enum ExitStatus {
  static let success: Int32 = 0
  /// The operation ran and failed for a reason without a more specific status.
  static let failure: Int32 = 1
  /// Bad flags or arguments.
  static let usage: Int32 = 64
  /// Malformed input data (an NDEF message, a corrupt store file, an update manifest, an image whose
  /// digest or size is wrong).
  static let dataError: Int32 = 65
  /// An input file that does not exist or cannot be read.
  static let noInput: Int32 = 66
  /// What was asked for is not there: no reader found, Bluetooth off, unsupported model, an update
  /// server that cannot be reached.
  static let unavailable: Int32 = 69
  /// A file could not be read or written.
  static let ioError: Int32 = 74
  /// Something did not happen in time, or could not happen now (an update server that stalls, a
  /// reader too low on battery to update); trying again may work.
  static let temporaryFailure: Int32 = 75
  /// Interrupted by the user (Ctrl-C) or cancelled.
  static let interrupted: Int32 = 130

  /// The status for an NFC reader session error that ended a command (`nfc scan`, `nfc write`): a tag
  /// that cannot be written (read-only, too small for the message) is an output that cannot be written.
  static func status(for error: NFCReaderError) -> Int32 {
    switch error.code {
    case .readerSessionInvalidationErrorFirstNDEFTagRead: success
    case .readerSessionInvalidationErrorUserCanceled: interrupted
    case .readerErrorUnsupportedFeature, .readerErrorRadioDisabled: unavailable
    case .readerTransceiveErrorTagResponseError, .ndefReaderSessionErrorZeroLengthMessage: dataError
    case .ndefReaderSessionErrorTagNotWritable, .ndefReaderSessionErrorTagSizeTooSmall,
      .ndefReaderSessionErrorTagUpdateFailure:
      ioError
    case .readerSessionInvalidationErrorSessionTimeout, .readerSessionInvalidationErrorSystemIsBusy,
      .readerTransceiveErrorTagConnectionLost:
      temporaryFailure
    default: failure
    }
  }

  /// The status for a failed ReaderKit operation.
  static func status(for error: ReaderError) -> Int32 {
    switch error.code {
    case .invalidConfiguration: usage
    case .storeCorrupt, .updateCatalogInvalid, .firmwareImageRejected, .invalidSoftwareVersion: dataError
    case .storeUnavailable: ioError
    // A manifest or image file that is missing or unreadable is an input that is not there; a server
    // that cannot be reached is a service that is not.
    case .updateCatalogUnavailable: error.context["url"]?.hasPrefix("file:") == true ? noInput : unavailable
    case .readerNotFound, .bluetoothDisabled, .unsupportedReader, .bluetoothUnsupported: unavailable
    case .bluetoothScanTimedOut, .bluetoothConnectTimedOut, .updateCatalogTimedOut: temporaryFailure
    // Charge the reader, or keep it in range, and the next try may work.
    case .readerSoftwareUpdateFailedBatteryLow, .readerSoftwareUpdateFailedInterrupted: temporaryFailure
    // An update that could not be obtained fails as the catalog did (`context["cause"]`).
    case .readerSoftwareUpdateFailedServerError: causeStatus(of: error) ?? failure
    case .canceled: interrupted
    default: failure
    }
  }

  /// The status of the catalog error an update error names as its `cause`, if it names one.
  private static func causeStatus(of error: ReaderError) -> Int32? {
    let causes: [ReaderError.Code] = [
      .updateCatalogInvalid, .updateCatalogUnavailable, .updateCatalogTimedOut, .firmwareImageRejected,
    ]
    guard let cause = causes.first(where: { $0.description == error.context["cause"] }) else { return nil }
    return status(for: ReaderError(cause, error.message, context: error.context))
  }
}

/// Bad command-line usage: reported with the command's usage text, exit status 64.
struct UsageError: Error {
  var message: String
  init(_ message: String) { self.message = message }
}
