import Foundation
import ReaderSoak

/// `reader-bench soak [--days D] [--seed N] [--faults RATE] [--stations K] [--readers R] [--runs M]
/// [--keep IDS] [--no-shrink] [--trace] [--sabotage WHAT]`: the ground-truth soak (see `GroundTruthSoak`).
///
/// Runs `M` seeds from `N` (one by default), each for `D` simulated days with `RATE` faults a station-hour,
/// and prints for each its faults per state, what it saw, its violations and its simulated time against
/// wall-clock time. A run with violations is shrunk to a short fault schedule, printed with the command
/// that replays it (`--keep`). `--trace` prints the event log; `--sabotage` breaks the path from the world
/// to the terminals on purpose, to see the soak catch it. Exits 0 without violations, 1 with.
func runSoakCommand(_ arguments: [String]) -> Int32 {
  var configuration = SoakConfiguration()
  var runs = 1
  var shrinks = true
  var trace = false
  var iterator = arguments.makeIterator()
  func value(_ option: String) -> String {
    guard let value = iterator.next() else { usageError("\(option) needs a value") }
    return value
  }
  while let argument = iterator.next() {
    switch argument {
    case "--days":
      guard let days = Double(value(argument)), days > 0, days <= 3650 else { usageError("--days takes 0 to 3650") }
      configuration.days = days
    case "--seed":
      guard let seed = UInt64(value(argument)) else { usageError("--seed takes a whole number") }
      configuration.seed = seed
    case "--faults":
      guard let rate = Double(value(argument)), rate >= 0, rate <= 3600 else {
        usageError("--faults takes faults an hour a station, 0 to 3600")
      }
      configuration.faultsPerHour = rate
    case "--stations":
      guard let count = Int(value(argument)), (1...64).contains(count) else { usageError("--stations takes 1 to 64") }
      configuration.stations = count
    case "--readers":
      guard let count = Int(value(argument)), (1...32).contains(count) else { usageError("--readers takes 1 to 32") }
      configuration.readersPerStation = count
    case "--runs":
      guard let count = Int(value(argument)), (1...100_000).contains(count) else {
        usageError("--runs takes 1 to 100000")
      }
      runs = count
    case "--keep":
      let ids = value(argument).split(separator: ",").compactMap { Int($0) }
      configuration.keep = Set(ids)
    case "--no-shrink":
      shrinks = false
    case "--trace":
      trace = true
    case "--sabotage":
      // Breaks the path from the world to the terminals, to see the soak catch it.
      switch value(argument) {
      case "lose-link-losses": configuration.sabotage = .loseEveryLinkLoss
      case "lose-every-second-link-loss": configuration.sabotage = .loseEverySecondLinkLoss
      default: usageError("--sabotage takes lose-link-losses or lose-every-second-link-loss")
      }
    default:
      usageError("soak: unknown option '\(argument)'")
    }
  }
  #if DEBUG
    print("reader-bench soak: a debug build; its speed means little (swift run -c release reader-bench soak)\n")
  #endif
  configuration.keepsLog = trace
  var failures = 0
  var simulated = Duration.zero
  var wall = Duration.zero
  let first = configuration.seed
  for offset in 0..<UInt64(runs) {
    var run = configuration
    run.seed = first &+ offset
    let report = GroundTruthSoak.run(run)
    simulated += report.simulated
    wall += report.wall
    print(report.rendered)
    if trace { print(report.log.joined(separator: "\n")) }
    guard let violation = report.violations.first else {
      print("")
      continue
    }
    failures += 1
    guard shrinks else { continue }
    print("  shrinking to a short fault schedule that still breaks [\(violation.invariant.rawValue)]…")
    guard let shrunk = GroundTruthSoak.shrink(run, failing: violation) else {
      print("  the schedule alone no longer breaks it (a fault-free run shows it)\n")
      continue
    }
    print("  \(shrunk.faults.count) fault(s) left after \(shrunk.runs) runs:")
    for fault in shrunk.faults { print("    \(fault)") }
    for found in shrunk.reproduction.violations.prefix(3) { print("    → \(found)") }
    let ids = shrunk.faults.map { String($0.id) }.joined(separator: ",")
    print(
      "  replay: reader-bench soak --seed \(run.seed) --days \(run.days) --faults \(run.faultsPerHour) "
        + "--stations \(run.stations) --readers \(run.readersPerStation) --keep \(ids.isEmpty ? "none" : ids)\n")
  }
  if runs > 1 {
    print(
      "\(runs) runs, \(failures) with violations; \(Int(simulated / .seconds(1))) simulated s in "
        + "\(String(format: "%.2f", wall / .seconds(1))) wall s: \(String(format: "%.3g", simulated / wall))× real time"
    )
  }
  return failures == 0 ? 0 : 1
}
