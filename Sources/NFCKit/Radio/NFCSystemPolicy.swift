/// How a device's NFC system runs reader sessions. It belongs to the system, not to the app: the
/// simulated radio carries one, a real backend takes one from its configuration, and no session API
/// sets or reads it.
public struct NFCSystemPolicy: Sendable, Hashable {
  /// What a session begun while another runs gets.
  public enum BusyBehavior: String, Sendable, Hashable, CaseIterable {
    /// It waits in a FIFO queue and becomes active when the sessions before it have ended (what
    /// Core NFC's class documentation describes).
    case queue
    /// It is invalidated at once with `readerSessionInvalidationErrorSystemIsBusy` (what the
    /// initializer's header discussion describes).
    case refuse
  }

  /// The time limit of a session, counted from its `begin()` — so time spent waiting in the queue
  /// counts — after which it ends with `readerSessionInvalidationErrorSessionTimeout`; `nil` for none.
  public var sessionTimeout: Duration?
  /// What a session begun while another runs gets.
  public var whenBusy: BusyBehavior

  /// Creates a policy.
  public init(sessionTimeout: Duration?, whenBusy: BusyBehavior = .queue) {
    self.sessionTimeout = sessionTimeout
    self.whenBusy = whenBusy
  }
}
