/// Receives what happens to a connection: disconnects and automatic reconnection. Stripe's
/// `ReaderDelegate`, which `MobileReaderDelegate` refines; every method has an empty default.
///
/// Main-actor isolated, like `DiscoveryDelegate`, and called on the terminal's `DelegateExecutor`.
///
/// Ordering guarantees: `readerDidFailReconnect` is always followed by `reader(_:didDisconnect:)`;
/// nothing is delivered for a connection after its final `didDisconnect`.
///
/// A disconnect for a critically low battery (`criticallyLowBattery`) or an idle power-down
/// (`idlePowerDown`) is not followed by automatic reconnection: the reader has switched itself off
/// and will not answer until a person charges it or switches it on (Stripe's iOS SDK behaves the
/// same since 4.4.0). `reader(_:didDisconnect:)` reports it at once.
@MainActor
public protocol ReaderDelegate: AnyObject, Sendable {
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
}

extension ReaderDelegate {
  public func reader(_ reader: Reader, didDisconnect reason: DisconnectReason) {}
  public func reader(_ reader: Reader, didStartReconnect cancelable: Cancelable, disconnectReason: DisconnectReason) {}
  public func readerDidSucceedReconnect(_ reader: Reader) {}
  public func readerDidFailReconnect(_ reader: Reader) {}
}
