import Foundation
import ReaderKit
import ReaderSimulator

/// Benchmarks the terminal engine on the simulator: an M2 connected for `days` simulated days, carried out of
/// range for 30 s every hour and rebooting itself every 24 hours; reports simulated time over wall time in each
/// round, and checks that every reconnection succeeded. (The scheduler under it has a benchmark of its own.)
func runTerminalBenchmark(days: Int) -> [Ratio] {
  let soak = TerminalSoak(days: max(1, days))
  let timings = Comparison([.init("terminal.soak") { soak.run() }]).measure()
  let simulated = Double(max(1, days) * 86_400)
  let ratios = [
    Ratio(
      name: "terminal.soak: simulated time / wall time",
      samples: timings.times("terminal.soak").map { simulated / $0 }, goal: nil)
  ]
  print(
    """
    Terminal benchmark: \(BenchOptions.current.rounds) rounds
      soak: \(max(1, days)) simulated days of an M2 (walk-away every hour, security reboot every day) in \
    \(format(timings.median("terminal.soak") * 1000)) ms of wall time (median), \
    \(soak.reconnections) reconnections, \(soak.failures) failed, \(soak.events) events
    """)
  print(ratios.map(\.line).joined(separator: "\n"))
  return ratios
}

private func format(_ value: Double) -> String {
  value >= 1e6
    ? String(format: "%.1fM", value / 1e6)
    : value >= 1e3 ? String(format: "%.1fk", value / 1e3) : String(format: "%.1f", value)
}

/// One long simulated run; counts what it saw.
private final class TerminalSoak: @unchecked Sendable {
  // Only touched on the thread that drives the virtual clock.
  private(set) var events = 0
  private(set) var reconnections = 0
  private(set) var failures = 0
  private let days: Int

  init(days: Int) { self.days = days }

  func run() {
    events = 0
    reconnections = 0
    failures = 0
    let clock = VirtualClock()
    let world = SimulatedBluetoothCentral(clock: clock, seed: 99)
    let serial = "STRM2-90001"
    world.add(SimulatedReader(serialNumber: serial, deviceType: .stripeM2, isCharging: true))
    let terminal = Terminal(central: world, scheduler: clock, store: InMemoryReaderStore(), seed: 99)
    terminal.addEventObserver { [self] event in
      events += 1
      switch event.kind {
      case .readerDidSucceedReconnect: reconnections += 1
      case .readerDidFailReconnect: failures += 1
      default: break
      }
    }
    let scan = try! BluetoothScanDiscoveryConfiguration.Builder().setSimulated(true).setTimeout(10).build()
    let finder = Finder()
    terminal.discoverReaders(scan, delegate: finder) { _ in }
    clock.advance(by: .seconds(3))
    guard let reader = finder.readers.first else { preconditionFailure("the soak reader was not found") }
    let config = try! BluetoothConnectionConfiguration.Builder(delegate: finder, locationId: "tml_soak").build()
    terminal.connectReader(reader, connectionConfig: config) { _ in }
    clock.advance(by: .seconds(5))
    for hour in 0..<(days * 24) {
      clock.schedule(after: .seconds(Int64(hour) * 3600 + 1800)) { world.walkAway(serial, for: .seconds(30)) }
    }
    clock.advance(by: .seconds(Int64(days) * 86_400))
  }
}

private nonisolated final class Finder: DiscoveryDelegate, MobileReaderDelegate, @unchecked Sendable {
  // Only touched on the thread that drives the virtual clock.
  var readers: [Reader] = []
  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) { self.readers = readers }
}
