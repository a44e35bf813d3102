/// Receives a connected Bluetooth reader's events, as Stripe's `MobileReaderDelegate`: what
/// `ReaderDelegate` reports (disconnects, reconnection), plus battery, software updates and the
/// reader's requests to the app. Every method has an empty default, so implement only what the app
/// shows; each has Stripe's exact signature, so a method written for Stripe's SDK is the one called.
/// Main-actor isolated, like `DiscoveryDelegate`, and called on the terminal's `DelegateExecutor`.
///
/// Not called: `reader(_:didRequestReaderInput:)`, `reader(_:didRequestReaderDisplayMessage:)` and
/// `reader(_:didReportReaderEvent:info:)` belong to collecting payments, which ReaderKit does not do;
/// they are here so a delegate written for Stripe's SDK compiles unchanged.
@MainActor
public protocol MobileReaderDelegate: ReaderDelegate {
  /// The connected reader reported its battery: `batteryLevel` in `0...1` (a `Float`, as in Stripe's
  /// SDK), its `status`, and whether it is charging.
  func reader(_ reader: Reader, didReportBatteryLevel batteryLevel: Float, status: BatteryStatus, isCharging: Bool)
  /// The battery fell below the warning level (15 %): ask the merchant to charge the reader.
  func readerDidReportLowBatteryWarning(_ reader: Reader)
  /// An optional software update is available (`reader.availableUpdate` holds it): right after a
  /// connection, or any time the catalog offers one while the reader is connected and idle. Nothing
  /// is installed until the app calls `installAvailableUpdate()`; once its `requiredAt` passes, it is
  /// installed at the next connection.
  func reader(_ reader: Reader, didReportAvailableUpdate update: ReaderSoftwareUpdate)
  /// An install started: a required update while connecting (the connect completes after it), or the
  /// app's `installAvailableUpdate()`. `cancelable` stops it; it is nil for an incremental-only update.
  /// Cancelling a required update fails the connection with `unsupportedReaderVersion`.
  func reader(_ reader: Reader, didStartInstallingUpdate update: ReaderSoftwareUpdate, cancelable: Cancelable?)
  /// How far the install got, in `0...1`: it starts at 0, never goes back, ends at exactly 1 on
  /// success, and is reported a few times a second at most.
  func reader(_ reader: Reader, didReportReaderSoftwareUpdateProgress progress: Float)
  /// The install ended, exactly once per start: `error` nil is success (the reader runs the update's
  /// version); otherwise it keeps its previous version. `update` is nil when `installAvailableUpdate()`
  /// found nothing to install. Errors: `readerSoftwareUpdateFailedBatteryLow`,
  /// `readerSoftwareUpdateFailedInterrupted`, `readerSoftwareUpdateFailedReaderError`,
  /// `readerSoftwareUpdateFailedServerError`, `readerSoftwareUpdateFailedExpiredUpdate`, `canceled`.
  func reader(_ reader: Reader, didFinishInstallingUpdate update: ReaderSoftwareUpdate?, error: (any Error)?)
  /// The reader waits for a card (payments). Never called: ReaderKit does not collect payments.
  func reader(_ reader: Reader, didRequestReaderInput inputOptions: ReaderInputOptions)
  /// The reader asks the app to show a prompt (payments). Never called: ReaderKit does not collect
  /// payments.
  func reader(_ reader: Reader, didRequestReaderDisplayMessage displayMessage: ReaderDisplayMessage)
  /// A card was inserted or removed (payments). Never called: ReaderKit does not collect payments.
  func reader(_ reader: Reader, didReportReaderEvent event: ReaderEvent, info: [AnyHashable: Any]?)
}

extension MobileReaderDelegate {
  public func reader(
    _ reader: Reader, didReportBatteryLevel batteryLevel: Float, status: BatteryStatus, isCharging: Bool
  ) {}
  public func readerDidReportLowBatteryWarning(_ reader: Reader) {}
  public func reader(_ reader: Reader, didReportAvailableUpdate update: ReaderSoftwareUpdate) {}
  public func reader(_ reader: Reader, didStartInstallingUpdate update: ReaderSoftwareUpdate, cancelable: Cancelable?) {
  }
  public func reader(_ reader: Reader, didReportReaderSoftwareUpdateProgress progress: Float) {}
  public func reader(_ reader: Reader, didFinishInstallingUpdate update: ReaderSoftwareUpdate?, error: (any Error)?) {}
  public func reader(_ reader: Reader, didRequestReaderInput inputOptions: ReaderInputOptions) {}
  public func reader(_ reader: Reader, didRequestReaderDisplayMessage displayMessage: ReaderDisplayMessage) {}
  public func reader(_ reader: Reader, didReportReaderEvent event: ReaderEvent, info: [AnyHashable: Any]?) {}
}
