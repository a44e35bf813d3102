/// Receives the discovered readers of a running discovery, on the terminal's scheduler.
public protocol DiscoveryDelegate: AnyObject, Sendable {
  /// The latest complete list of nearby readers, nearest first. Called whenever it changes (see
  /// `DiscoveryTuning` for the coalescing rule); proximity discovery calls it with one reader, twice.
  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader])
}

/// Receives a connected reader's events, on the terminal's scheduler. Every method has an empty
/// default, so implement only what the app shows.
///
/// Ordering guarantees: `readerDidFailReconnect` is always followed by `reader(_:didDisconnect:)`;
/// nothing is delivered for a connection after its final `didDisconnect`.
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
}
