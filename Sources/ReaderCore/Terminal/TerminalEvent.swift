/// One entry of the terminal's ordered event stream: every status change and delegate call.
public struct TerminalEvent: Sendable, Hashable {
  /// When it happened: scheduler time since the terminal's scheduler started.
  public var time: Duration
  /// What happened.
  public var kind: Kind

  /// Creates an event.
  public init(time: Duration, kind: Kind) {
    self.time = time
    self.kind = kind
  }

  /// The events, named after the delegate method or status they mirror.
  public enum Kind: Sendable, Hashable {
    /// `connectionStatus` changed.
    case didChangeConnectionStatus(ConnectionStatus)
    /// `DiscoveryDelegate.terminal(_:didUpdateDiscoveredReaders:)`.
    case didUpdateDiscoveredReaders([Reader])
    /// A discovery ended; `nil` is success.
    case didFinishDiscovery(ReaderError?)
    /// The simulator or hardware was asked to flash a reader's LEDs (proximity discovery).
    case didRequestLEDFlash(serialNumber: String)
    /// A command waits behind others; `position` counts from 1.
    case didQueueCommand(command: String, position: Int)
    /// `connectReader` succeeded.
    case didConnect(Reader)
    /// `connectReader` failed.
    case didFailToConnect(serialNumber: String, error: ReaderError)
    /// `MobileReaderDelegate.reader(_:didDisconnect:)`, or the completion of `disconnectReader()`
    /// (reason `disconnectRequested`).
    case didDisconnect(Reader, reason: DisconnectReason)
    /// `MobileReaderDelegate.reader(_:didStartReconnect:disconnectReason:)`.
    case didStartReconnect(Reader, reason: DisconnectReason)
    /// `MobileReaderDelegate.readerDidSucceedReconnect(_:)`.
    case readerDidSucceedReconnect(Reader)
    /// `MobileReaderDelegate.readerDidFailReconnect(_:)`.
    case readerDidFailReconnect(Reader, error: ReaderError)
    /// `MobileReaderDelegate.reader(_:didReportBatteryLevel:status:isCharging:)`.
    case didReportBatteryLevel(Reader)
    /// `MobileReaderDelegate.readerDidReportLowBatteryWarning(_:)`.
    case readerDidReportLowBatteryWarning(Reader)
    /// `rebootReader` was answered; `nil` means the reader accepted.
    case didRespondToReboot(serialNumber: String, error: ReaderError?)
    /// Launch reconnect found a saved reader and starts looking for it.
    case didStartLaunchReconnect(serialNumber: String)
    /// Launch reconnect had nothing saved.
    case didFindNoSavedReader
    /// Launch reconnect spotted the saved reader and connects to it.
    case didFindSavedReader(Reader)
    /// Launch reconnect ended; `nil` is success.
    case didFinishLaunchReconnect(ReaderError?)
    /// The connected reader was saved for reconnect at launch (or saving failed).
    case didSaveReader(serialNumber: String, error: ReaderError?)
    /// `MobileReaderDelegate.reader(_:didReportAvailableUpdate:)`: an optional update the reader can
    /// install with `installAvailableUpdate()`.
    case didReportAvailableUpdate(Reader, update: ReaderSoftwareUpdate)
    /// `MobileReaderDelegate.reader(_:didStartInstallingUpdate:cancelable:)`; `cancelable` is false for
    /// an incremental-only update.
    case didStartInstallingUpdate(Reader, update: ReaderSoftwareUpdate, cancelable: Bool)
    /// `MobileReaderDelegate.reader(_:didReportReaderSoftwareUpdateProgress:)`, in `0...1`.
    case didReportReaderSoftwareUpdateProgress(Reader, progress: Double)
    /// `MobileReaderDelegate.reader(_:didFinishInstallingUpdate:error:)`; `update` is nil when
    /// `installAvailableUpdate()` found nothing to install, `error` nil on success.
    case didFinishInstallingUpdate(Reader, update: ReaderSoftwareUpdate?, error: ReaderError?)
  }

  /// The event's name as used in logs and the CLI's JSON: the delegate method or status it mirrors.
  public var name: String {
    switch kind {
    case .didChangeConnectionStatus: "didChangeConnectionStatus"
    case .didUpdateDiscoveredReaders: "didUpdateDiscoveredReaders"
    case .didFinishDiscovery: "didFinishDiscovery"
    case .didRequestLEDFlash: "didRequestLEDFlash"
    case .didQueueCommand: "didQueueCommand"
    case .didConnect: "didConnect"
    case .didFailToConnect: "didFailToConnect"
    case .didDisconnect: "didDisconnect"
    case .didStartReconnect: "didStartReconnect"
    case .readerDidSucceedReconnect: "readerDidSucceedReconnect"
    case .readerDidFailReconnect: "readerDidFailReconnect"
    case .didReportBatteryLevel: "didReportBatteryLevel"
    case .readerDidReportLowBatteryWarning: "readerDidReportLowBatteryWarning"
    case .didRespondToReboot: "didRespondToReboot"
    case .didStartLaunchReconnect: "didStartLaunchReconnect"
    case .didFindNoSavedReader: "didFindNoSavedReader"
    case .didFindSavedReader: "didFindSavedReader"
    case .didFinishLaunchReconnect: "didFinishLaunchReconnect"
    case .didSaveReader: "didSaveReader"
    case .didReportAvailableUpdate: "didReportAvailableUpdate"
    case .didStartInstallingUpdate: "didStartInstallingUpdate"
    case .didReportReaderSoftwareUpdateProgress: "didReportReaderSoftwareUpdateProgress"
    case .didFinishInstallingUpdate: "didFinishInstallingUpdate"
    }
  }
}
