import ReaderCore

/// Settings of the built-in simulator that an app changes to test its handling of scenarios, as
/// Stripe's `SimulatorConfiguration`: not created by the app, but reached through a terminal
/// (`Terminal.shared.simulatorConfiguration`) and changed in place.
///
/// ```swift
/// Terminal.shared.simulatorConfiguration.availableReaderUpdate = .required
/// ```
///
/// A change applies to the connections that start after it (a connection already running keeps the
/// update it saw); it reaches the terminal in order with the commands issued after it.
public final class SimulatorConfiguration: Sendable {
  private let update: Locked<SimulateReaderUpdate>
  private let onChange: @Sendable (SimulateReaderUpdate) -> Void

  init(availableReaderUpdate: SimulateReaderUpdate, onChange: @escaping @Sendable (SimulateReaderUpdate) -> Void) {
    update = Locked(availableReaderUpdate)
    self.onChange = onChange
  }

  /// The software update every connection to a simulated reader sees, unless its configuration names
  /// a test update of its own (`BluetoothConnectionConfigurationBuilder.setTestReaderUpdate`, which
  /// Stripe prefers since 5.5.0). `available` on `Terminal.shared`, as in Stripe's SDK; `none` on a
  /// terminal created by the app, whose world and catalog are its own.
  public var availableReaderUpdate: SimulateReaderUpdate {
    get { update.withLock { $0 } }
    set {
      // Under the lock, so concurrent sets reach the terminal in the order they were stored.
      update.withLock { stored in
        stored = newValue
        onChange(newValue)
      }
    }
  }
}
