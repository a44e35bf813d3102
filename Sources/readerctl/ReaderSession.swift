import Foundation
import ReaderKit

/// Where a command's readers are and how its time runs: the simulated world (`SimulationSession`), or
/// real readers through BlueZ, live or replayed from a recording (`BlueZSession`). The lifecycle
/// commands (`connect`, `reconnect`, `update --install`) run the same code on either, so their output
/// and exit statuses are the same.
protocol ReaderSession: AnyObject, Sendable {
  var console: Console { get }
  /// Whether events are printed as JSON lines (and narration is silent).
  var json: Bool { get }
  /// The screen narration and live tables go to.
  var screen: LiveRegion { get }
  /// Time since the session started (simulated, or the wall clock's for real readers).
  var now: Duration { get }
  /// The date the session's terminals see now.
  var date: Date { get }
  /// Whether the readers are simulated (scans look for simulated readers).
  var simulated: Bool { get }
  /// A terminal on the session's readers, with `updateCatalog` if given; with `--json` every event it
  /// publishes is printed as one line.
  func makeTerminal(store: any ReaderStore, updateCatalog: (any UpdateCatalog)?) -> Terminal
  /// Runs the session's clock until `condition` holds (checked between instants) or `limit` has passed,
  /// or Ctrl-C unless not `interruptible`; returns whether `condition` holds. `paced` and `pace` apply
  /// to simulated time only.
  @discardableResult
  func run(until condition: () -> Bool, limit: Duration, paced: Bool, interruptible: Bool, pace: () -> Double) -> Bool
  /// Prints a narration line stamped with the session's time; silent with `--json`.
  func say(_ text: String)
  /// Ends the command: with `--json` prints its outcome as the last line; returns the status.
  func finish(_ outcome: CommandOutcome) -> Int32
}

extension ReaderSession {
  /// Runs until `condition` holds or `limit` has passed (see the requirement).
  @discardableResult
  func run(
    until condition: () -> Bool, limit: Duration, paced: Bool = true, interruptible: Bool = true
  ) -> Bool {
    run(until: condition, limit: limit, paced: paced, interruptible: interruptible, pace: { 1 })
  }

  /// A scan for the session's kind of reader, ending after `timeout`.
  func scanConfiguration(timeout: Duration) throws(ReaderError) -> BluetoothScanDiscoveryConfiguration {
    try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(simulated).setTimeout(timeout).build()
  }
}

extension SimulationSession: ReaderSession {
  var simulated: Bool { true }
}
