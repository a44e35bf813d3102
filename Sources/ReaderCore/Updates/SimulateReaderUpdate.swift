/// The software update simulated readers report, set through
/// `Terminal.shared.simulatorConfiguration.availableReaderUpdate`, as Stripe's `SimulateReaderUpdate`
/// (same cases, same order). A connection whose configuration names a test update of its own
/// (`setTestReaderUpdate`) sees that one instead; readers that are not simulated are never affected.
public enum SimulateReaderUpdate: UInt, Sendable, Hashable, CaseIterable, CustomStringConvertible {
  /// An optional update, required 7 days after the connection: reported, installed with
  /// `installAvailableUpdate()`. Stripe's default, and `Terminal.shared`'s.
  case available
  /// No update: the terminal's catalog, if it has one, answers as usual.
  case none
  /// A full required update, installed while connecting (about a simulated minute, with progress).
  case required
  /// Offline connections are not modelled, so this behaves as `required`: the connect installs the
  /// update, then connects.
  case requiredForOffline
  /// A required update the reader cannot start for a low battery: the connect fails.
  case lowBattery
  /// A required update the reader cannot start for a low battery, on a reader recent enough that the
  /// connect succeeds with the update still pending.
  case lowBatterySucceedConnect
  /// One of the above (or no update), drawn from the terminal's seed at each connection.
  case random

  /// The case name, e.g. `available`.
  public var description: String {
    switch self {
    case .available: "available"
    case .none: "none"
    case .required: "required"
    case .requiredForOffline: "requiredForOffline"
    case .lowBattery: "lowBattery"
    case .lowBatterySucceedConnect: "lowBatterySucceedConnect"
    case .random: "random"
    }
  }

  /// The test update a connection to a simulated reader sees for this choice; nil for `none`.
  package var testReaderUpdate: TestReaderUpdate? {
    switch self {
    case .available: .available(TestReaderUpdate.fullUpdate)
    case .none: nil
    case .required, .requiredForOffline: .required(TestReaderUpdate.fullUpdate)
    case .lowBattery: .lowBattery()
    case .lowBatterySucceedConnect: .lowBatterySucceedConnect()
    case .random: .random()
    }
  }
}
