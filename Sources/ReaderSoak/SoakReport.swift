import Foundation

/// What a soak saw: the violations, the faults it injected and in which states, what happened, the
/// event log's digest, and simulated against wall-clock time.
public struct SoakReport: Sendable {
  /// The configuration that ran.
  public var configuration: SoakConfiguration
  /// The violations, in the order they were seen (at most 200 kept).
  public var violations: [SoakViolation]
  /// How many violations there were in all.
  public var violationCount: Int
  /// Faults in the schedule that ran (after `keep`).
  public var faultsScheduled: Int
  /// Faults that struck (aimed ones still waiting at the end did not).
  public var faultsStruck: Int
  /// Faults that struck while their station was in the state they aimed at.
  public var aimedHits: Int
  /// Faults that struck with companions at the same instant.
  public var sameInstantFaults: Int
  /// How many actions of each kind struck in each state.
  public var actionsPerState: [SoakAction.Kind: [SoakState: Int]]
  /// Simulated time run.
  public var simulated: Duration
  /// Wall-clock time it took.
  public var wall: Duration
  /// Simulated instants checked (each after all the work due then had run).
  public var instants: Int
  /// Entries of the event log.
  public var events: Int
  /// The event log's digest: the same configuration gives the same digest.
  public var digest: UInt64
  /// What happened, counted: connections, reconnections won and failed, installs, disconnects by
  /// reason, NFC sessions and calls, app deaths, reads of the disk.
  public var counts: [String: Int]
  /// The event log's lines, when the configuration keeps them.
  public var log: [String]
  /// The faults that ran.
  public var schedule: [SoakFault]

  /// Simulated seconds per wall-clock second.
  public var speedup: Double { simulated / max(wall, .nanoseconds(1)) }

  /// The digest in hexadecimal, as printed.
  public var digestText: String { "0x" + String(digest, radix: 16, uppercase: false) }

  /// The states with at least one action struck in them.
  public var statesReached: Set<SoakState> {
    Set(actionsPerState.values.flatMap { $0.filter { $0.value > 0 }.keys })
  }

  /// How many (kind, state) pairs of a side were hit, out of how many there are.
  public func coverage(nfc: Bool) -> (hit: Int, of: Int) {
    let kinds = SoakAction.Kind.allCases.filter { $0.isNFC == nfc }
    let states = nfc ? SoakState.nfc : SoakState.aimable.filter { !$0.isNFC }
    let hit = kinds.reduce(0) { sum, kind in
      sum + states.filter { (actionsPerState[kind]?[$0] ?? 0) > 0 }.count
    }
    return (hit, kinds.count * states.count)
  }

  /// The report as printed by `reader-bench soak`.
  public var rendered: String {
    let c = configuration
    var lines: [String] = []
    lines.append(
      "Soak: seed \(c.seed), \(format(c.days)) simulated days, \(c.stations) stations × \(c.readersPerStation) readers "
        + "+ NFC, \(format(c.faultsPerHour)) faults an hour a station\(c.keep.map { ", only faults \(ids($0))" } ?? "")"
    )
    lines.append(
      "  faults: \(faultsStruck) struck of \(faultsScheduled) scheduled; \(aimedHits) in the state they aimed at, "
        + "\(sameInstantFaults) with companions at the same instant")
    let bluetooth = coverage(nfc: false)
    let nfc = coverage(nfc: true)
    lines.append(
      "  fault kinds × states hit: Bluetooth side \(bluetooth.hit) of \(bluetooth.of), NFC side \(nfc.hit) of \(nfc.of)"
    )
    lines.append("  faults per state (actions struck while the station was in each state):")
    lines += matrix()
    let interesting = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
    lines.append("  seen: " + interesting.joined(separator: ", "))
    lines.append(
      "  checked: \(instants) instants, \(events) events; event log digest \(digestText)")
    lines.append(
      "  time: \(format(simulated / .seconds(1))) simulated s in \(String(format: "%.3f", wall / .seconds(1))) wall s: "
        + "\(String(format: "%.3g", speedup))× real time")
    lines.append("  violations: \(violationCount)")
    for violation in violations.prefix(20) { lines.append("    \(violation)") }
    if violationCount > 20 { lines.append("    … and \(violationCount - 20) more") }
    return lines.joined(separator: "\n")
  }

  private func matrix() -> [String] {
    let states = SoakState.bluetooth + SoakState.nfc
    let width = 11
    func cell(_ text: String) -> String {
      String(repeating: " ", count: max(0, width - text.count)) + text
    }
    let names = states.map(\.column)
    var lines = ["    " + "".padding(toLength: 18, withPad: " ", startingAt: 0) + names.map(cell).joined()]
    for kind in SoakAction.Kind.allCases {
      let row = states.map { state -> String in
        let count = actionsPerState[kind]?[state] ?? 0
        return count == 0 ? "·" : "\(count)"
      }
      lines.append("    " + kind.rawValue.padding(toLength: 18, withPad: " ", startingAt: 0) + row.map(cell).joined())
    }
    return lines
  }

  private func format(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(format: "%.2f", value)
  }

  private func ids(_ set: Set<Int>) -> String { set.sorted().map(String.init).joined(separator: ",") }
}
