/// Receives the discovered readers of a running discovery, as Stripe's `DiscoveryDelegate`.
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
