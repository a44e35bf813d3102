/// Whether the terminal can take a payment, as Stripe's `PaymentStatus` (same cases, same order).
/// ReaderKit owns the reader lifecycle, not payments: `Terminal.paymentStatus` is always `notReady`.
public enum PaymentStatus: UInt, Sendable, Hashable, CaseIterable, CustomStringConvertible {
  /// No payment can start.
  case notReady
  /// A payment can start.
  case ready
  /// The reader waits for a card.
  case waitingForInput
  /// A payment is being processed.
  case processing

  /// The case name, e.g. `notReady`.
  public var description: String {
    switch self {
    case .notReady: "notReady"
    case .ready: "ready"
    case .waitingForInput: "waitingForInput"
    case .processing: "processing"
    }
  }
}
