/// The error every ReaderKit operation reports.
///
/// `code` is extensible: new codes can be added without breaking a `switch` in client code, so
/// compare against the static members (`error.code == .canceled`) rather than matching a frozen enum.
/// `message` is for people; `context` carries the machine-readable details (the field that was
/// invalid, the serial number involved, the byte offset in a file).
public struct ReaderError: ReaderKitError, Hashable {
  /// What went wrong, as a stable identifier.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Wrapped: String, Hashable, Sendable {
      case canceled, invalidConfiguration, bluetoothScanTimedOut, bluetoothConnectTimedOut
      case bluetoothDisabled, alreadyConnected, notConnected, readerNotFound, connectionFailed
      case unsupportedReader, readerBusy, rebootFailed, storeCorrupt, storeUnavailable, commandRejected
      case bluetoothUnsupported, cancelFailedAlreadyCompleted
      case readerSoftwareUpdateFailed, readerSoftwareUpdateFailedBatteryLow, readerSoftwareUpdateFailedInterrupted
      case readerSoftwareUpdateFailedReaderError, readerSoftwareUpdateFailedServerError
      case readerSoftwareUpdateFailedExpiredUpdate, unsupportedReaderVersion, invalidSoftwareVersion
      case updateCatalogInvalid, updateCatalogUnavailable, updateCatalogTimedOut, firmwareImageRejected
    }
    private let wrapped: Wrapped
    private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

    /// The operation was cancelled, through its `Cancelable` or through `Task` cancellation.
    public static let canceled = Code(.canceled)
    /// A configuration or argument was invalid; `context["field"]` names it.
    public static let invalidConfiguration = Code(.invalidConfiguration)
    /// A Bluetooth scan with a timeout ended without finding any reader.
    public static let bluetoothScanTimedOut = Code(.bluetoothScanTimedOut)
    /// A connection or reconnection did not complete before its deadline.
    public static let bluetoothConnectTimedOut = Code(.bluetoothConnectTimedOut)
    /// The host's Bluetooth radio is off.
    public static let bluetoothDisabled = Code(.bluetoothDisabled)
    /// A reader is already connected; disconnect it first.
    public static let alreadyConnected = Code(.alreadyConnected)
    /// The operation needs a connected reader and there is none.
    public static let notConnected = Code(.notConnected)
    /// The reader is unknown or has stopped advertising.
    public static let readerNotFound = Code(.readerNotFound)
    /// The link to the reader failed while connecting.
    public static let connectionFailed = Code(.connectionFailed)
    /// The reader's model does not support the operation (e.g. proximity discovery on an M2).
    public static let unsupportedReader = Code(.unsupportedReader)
    /// The reader refused a command because it is doing something else (e.g. installing an update).
    public static let readerBusy = Code(.readerBusy)
    /// The reader did not accept the reboot request.
    public static let rebootFailed = Code(.rebootFailed)
    /// A persisted file exists but cannot be decoded; it is left untouched.
    public static let storeCorrupt = Code(.storeCorrupt)
    /// A persisted file cannot be read or written.
    public static let storeUnavailable = Code(.storeUnavailable)
    /// The reader rejected a command.
    public static let commandRejected = Code(.commandRejected)
    /// The terminal has no Bluetooth backend for real readers on this platform (`Terminal.shared`
    /// on Linux); simulated readers work.
    public static let bluetoothUnsupported = Code(.bluetoothUnsupported)
    /// `Cancelable.cancel(_:)` found the operation already completed on its own: there was nothing to
    /// cancel (Stripe's `cancelFailedAlreadyCompleted`). Usually benign: the operation finished first.
    public static let cancelFailedAlreadyCompleted = Code(.cancelFailedAlreadyCompleted)

    // Software updates. The first seven carry the anchor SDK's names and meanings.

    /// A software update failed for a reason no more specific code describes.
    public static let readerSoftwareUpdateFailed = Code(.readerSoftwareUpdateFailed)
    /// A software update could not start or go on because the reader's battery is too low; charge it
    /// and try again.
    public static let readerSoftwareUpdateFailedBatteryLow = Code(.readerSoftwareUpdateFailedBatteryLow)
    /// A software update stopped before it finished: the reader went out of range, was switched off or
    /// its battery died. The reader keeps its previous version.
    public static let readerSoftwareUpdateFailedInterrupted = Code(.readerSoftwareUpdateFailedInterrupted)
    /// The reader reported an error while installing a software update.
    public static let readerSoftwareUpdateFailedReaderError = Code(.readerSoftwareUpdateFailedReaderError)
    /// The update could not be obtained: the update catalog or the server holding the image failed.
    public static let readerSoftwareUpdateFailedServerError = Code(.readerSoftwareUpdateFailedServerError)
    /// The update expired (`ReaderSoftwareUpdate.expiresAt` passed) before it was installed; disconnect
    /// and connect again to get a current one.
    public static let readerSoftwareUpdateFailedExpiredUpdate = Code(.readerSoftwareUpdateFailedExpiredUpdate)
    /// The reader's software is too old to be used: a required update was cancelled or could not be
    /// installed.
    public static let unsupportedReaderVersion = Code(.unsupportedReaderVersion)
    /// A software version is not a dotted list of decimal numbers; `context["value"]` holds it.
    public static let invalidSoftwareVersion = Code(.invalidSoftwareVersion)
    /// An update manifest is malformed. `context["field"]` names the field as a JSON path (e.g.
    /// `releases[2].image.sha256`) and `context["value"]` the offending value; `context["offset"]` is the
    /// byte offset of a JSON syntax error; `context["limit"]` is the size bound a manifest exceeded
    /// (it is not read past the bound); `context["url"]` is the manifest's location.
    public static let updateCatalogInvalid = Code(.updateCatalogInvalid)
    /// An update manifest or firmware image could not be fetched: the server refused the connection,
    /// answered with an HTTP error (`context["status"]`), or the file is missing or unreadable
    /// (`context["errno"]`). `context["url"]` names what was fetched.
    public static let updateCatalogUnavailable = Code(.updateCatalogUnavailable)
    /// The server holding an update manifest or image accepted the request but did not answer within
    /// the catalog's timeout (`context["timeout"]`, in seconds). `context["url"]` names what was fetched.
    public static let updateCatalogTimedOut = Code(.updateCatalogTimedOut)
    /// A firmware image does not match its manifest entry: `context["field"]` is `size` or `sha256`, with
    /// `context["expected"]` and `context["actual"]`. Nothing of the image is used. An MCUboot image for a
    /// reader updated over SMP is also refused when it is malformed (`context["field"]` `mcuboot`) or does
    /// not hash to its own SHA-256 TLV (`mcuboot.sha256`).
    public static let firmwareImageRejected = Code(.firmwareImageRejected)

    /// The stable name of the code, e.g. `"bluetoothScanTimedOut"`.
    public var description: String { wrapped.rawValue }

    /// The code named `name` (its `description`), if there is one: for reading errors back from a file.
    package init?(name: String) {
      guard let wrapped = Wrapped(rawValue: name) else { return nil }
      self.wrapped = wrapped
    }
  }

  /// What went wrong.
  public var code: Code
  /// A sentence for people.
  public var message: String
  /// Machine-readable details, e.g. `["field": "locationId"]` or `["serialNumber": "CHB20-0001"]`. A
  /// duration (`timeout`, `deadline`, `listened`, the `value` of a duration setting) is a plain number
  /// of seconds: `["timeout": "15"]`, `["value": "0.5"]`.
  public var context: [String: String]
  /// The underlying fault, when one is known: an `errno`, an HTTP status, a D-Bus error name.
  public var cause: ErrorCause?

  /// Creates an error.
  public init(_ code: Code, _ message: String, context: [String: String] = [:], cause: ErrorCause? = nil) {
    self.code = code
    self.message = message
    self.context = context
    self.cause = cause
  }

  /// `code: message (key=value, …) [cause]`, with the context keys sorted.
  public var description: String { "\(code): \(message)\(renderedContext)\(renderedCause)" }

  /// The code's stable name (`code.description`).
  public var codeName: String { code.description }

  /// Shorthand for the error a cancelled operation completes with.
  public static func canceled(_ operation: String) -> ReaderError {
    ReaderError(.canceled, "\(operation) was canceled", context: ["operation": operation])
  }

  /// The error of a command that needs a connected reader while the status is `status`.
  package static func notConnected(status: ConnectionStatus) -> ReaderError {
    ReaderError(.notConnected, "no reader is connected", context: ["status": status.rawValue])
  }
}
