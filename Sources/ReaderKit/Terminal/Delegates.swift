/// Receives the discovered readers of a running discovery.
///
/// Main-actor isolated, as the methods of a view controller are, so a `@MainActor` class adopts it
/// as it is; a class that is not tied to the main actor declares itself `nonisolated`. Where the
/// calls run is the terminal's `DelegateExecutor`: on the main actor for live terminals, in order
/// on the terminal's scheduler for simulations on a `VirtualClock`.
@MainActor
public protocol DiscoveryDelegate: AnyObject, Sendable {
  /// The latest complete list of nearby readers, nearest first. Called whenever it changes (see
  /// `DiscoveryTuning` for the coalescing rule); proximity discovery calls it with one reader, twice.
  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader])
}

/// Receives a connected reader's events. Every method has an empty default, so implement only what
/// the app shows. Main-actor isolated, like `DiscoveryDelegate`, and called on the terminal's
/// `DelegateExecutor`.
///
/// Ordering guarantees: `readerDidFailReconnect` is always followed by `reader(_:didDisconnect:)`;
/// nothing is delivered for a connection after its final `didDisconnect`.
///
/// A disconnect for a critically low battery (`criticallyLowBattery`) or an idle power-down
/// (`idlePowerDown`) is not followed by automatic reconnection: the reader has switched itself off
/// and will not answer until a person charges it or switches it on (Stripe's iOS SDK behaves the
/// same since 4.4.0). `reader(_:didDisconnect:)` reports it at once.
@MainActor
public protocol MobileReaderDelegate: AnyObject, Sendable {
  /// The reader disconnected without the app asking (`disconnectReader()` reports through its
  /// completion instead). After a reconnection that failed, this follows `readerDidFailReconnect`.
  func reader(_ reader: Reader, didDisconnect reason: DisconnectReason)
  /// Automatic reconnection started after an unexpected disconnect; `cancelable` stops it.
  func reader(_ reader: Reader, didStartReconnect cancelable: Cancelable, disconnectReason: DisconnectReason)
  /// Automatic reconnection won the reader back; the status is `connected` again.
  func readerDidSucceedReconnect(_ reader: Reader)
  /// Automatic reconnection gave up or was cancelled; `reader(_:didDisconnect:)` follows. While this
  /// runs the status still reads `reconnecting`; by `didDisconnect` it reads `notConnected`.
  func readerDidFailReconnect(_ reader: Reader)
  /// The reader reported its battery.
  func reader(_ reader: Reader, didReportBatteryLevel batteryLevel: Double, status: BatteryStatus, isCharging: Bool)
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
}

extension MobileReaderDelegate {
  public func reader(_ reader: Reader, didDisconnect reason: DisconnectReason) {}
  public func reader(_ reader: Reader, didStartReconnect cancelable: Cancelable, disconnectReason: DisconnectReason) {}
  public func readerDidSucceedReconnect(_ reader: Reader) {}
  public func readerDidFailReconnect(_ reader: Reader) {}
  public func reader(
    _ reader: Reader, didReportBatteryLevel batteryLevel: Double, status: BatteryStatus, isCharging: Bool
  ) {}
  public func readerDidReportLowBatteryWarning(_ reader: Reader) {}
  public func reader(_ reader: Reader, didReportAvailableUpdate update: ReaderSoftwareUpdate) {}
  public func reader(_ reader: Reader, didStartInstallingUpdate update: ReaderSoftwareUpdate, cancelable: Cancelable?) {
  }
  public func reader(_ reader: Reader, didReportReaderSoftwareUpdateProgress progress: Float) {}
  public func reader(_ reader: Reader, didFinishInstallingUpdate update: ReaderSoftwareUpdate?, error: (any Error)?) {}
}
