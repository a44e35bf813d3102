/// Observes the terminal as a whole, as Stripe's `TerminalDelegate`: set `Terminal.shared.delegate`.
/// Both methods have an empty default. Main-actor isolated, like the other delegates, and called on
/// the terminal's `DelegateExecutor`, in order with them.
///
/// As Stripe's header warns, do not infer an unexpected disconnect from a status change: the status
/// also leaves `connected` when the app disconnects. `ReaderDelegate.reader(_:didDisconnect:)` is
/// the call for that.
@MainActor
public protocol TerminalDelegate: AnyObject, Sendable {
  /// `connectionStatus` changed; `status` is the new one. Called for every change, in order; the
  /// terminal's status may already be further on when a live terminal's call runs.
  func terminal(_ terminal: Terminal, didChangeConnectionStatus status: ConnectionStatus)
  /// `paymentStatus` changed. Never called: ReaderKit does not collect payments, so the payment
  /// status stays `notReady`.
  func terminal(_ terminal: Terminal, didChangePaymentStatus status: PaymentStatus)
}

extension TerminalDelegate {
  public func terminal(_ terminal: Terminal, didChangeConnectionStatus status: ConnectionStatus) {}
  public func terminal(_ terminal: Terminal, didChangePaymentStatus status: PaymentStatus) {}
}
