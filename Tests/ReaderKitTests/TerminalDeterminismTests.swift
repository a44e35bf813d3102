import ReaderCore
import ReaderKit
import ReaderSimulator
import Testing

/// Connects to the nearest reader a scan lists, and scans again a minute after every final disconnect.
private nonisolated final class NearestConnector: DiscoveryDelegate {
  private let claimed = Locked(false)
  private let terminal: Terminal
  private let clock: VirtualClock
  private let scanConfiguration: BluetoothScanDiscoveryConfiguration
  private let connectionConfiguration: BluetoothConnectionConfiguration
  let delegate = ReaderRecorder()

  init(terminal: Terminal, clock: VirtualClock) throws {
    self.terminal = terminal
    self.clock = clock
    scanConfiguration = try BluetoothScanDiscoveryConfiguration.Builder().setTimeout(20).setSimulated(true).build()
    connectionConfiguration = try BluetoothConnectionConfiguration.Builder(delegate: delegate, locationId: "tml_det")
      .build()
    terminal.addEventObserver { [self] event in
      if case .didDisconnect = event.kind { clock.schedule(after: .seconds(60)) { [self] in scan() } }
    }
  }

  func scan() {
    claimed.withLock { $0 = false }
    terminal.discoverReaders(scanConfiguration, delegate: self) { [self] _ in
      if !claimed.withLock({ $0 }) { clock.schedule(after: .seconds(60)) { [self] in self.scan() } }
    }
  }

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    guard let nearest = readers.first,
      claimed.withLock({ claimed in
        defer { claimed = true }; return !claimed
      })
    else { return }
    terminal.connectReader(nearest, connectionConfig: connectionConfiguration) { [self] result in
      if case .failure = result { clock.schedule(after: .seconds(60)) { [self] in scan() } }
    }
  }
}

@Suite struct TerminalDeterminismTests {
  /// Three simulated hours of a seeded world: connect, random faults for every reader, an app reboot.
  private static func transcript(seed: UInt64) throws -> String {
    let (terminal, world) = Terminal.simulated(seed: seed, readers: 4)
    let clock = world.clock
    let log = EventLog(terminal)
    let connector = try NearestConnector(terminal: terminal, clock: clock)
    connector.scan()
    SimulatedFaultSchedule.random(
      seed: seed, serialNumbers: world.readers.map(\.serialNumber), over: .seconds(2 * 3600),
      meanInterval: .seconds(240)
    ).apply(to: world)
    clock.schedule(after: .seconds(1800)) { terminal.rebootReader { _ in } }
    clock.advance(to: .seconds(3 * 3600))
    let calls = connector.delegate.calls.map(\.description)
    let worldLog = world.worldEvents.map(\.description)
    return ([log.rendered(), "-- delegate"] + calls + ["-- world"] + worldLog).joined(separator: "\n")
  }

  @Test func sameSeedAndScriptGiveAByteIdenticalEventLog() throws {
    for seed: UInt64 in [1, 42, 2024] {
      let first = try Self.transcript(seed: seed)
      let second = try Self.transcript(seed: seed)
      #expect(Array(first.utf8) == Array(second.utf8), "seed \(seed)")
      #expect(first.contains("didConnect"), "seed \(seed)")
      #expect(first.contains("didStartReconnect"), "seed \(seed)")
      #expect(first.split(separator: "\n").count > 100, "seed \(seed)")
    }
  }

  @Test func differentSeedsGiveDifferentRuns() throws {
    let transcripts = Set(try (1...5).map { try Self.transcript(seed: UInt64($0)) })
    #expect(transcripts.count == 5)
  }

  @Test func sameSeedGivesTheSameFaultSchedule() {
    let serials = ["STRM2-1", "WPC32-2"]
    let schedule = SimulatedFaultSchedule.random(seed: 9, serialNumbers: serials, over: .seconds(36_000))
    #expect(schedule == SimulatedFaultSchedule.random(seed: 9, serialNumbers: serials, over: .seconds(36_000)))
    #expect(schedule != SimulatedFaultSchedule.random(seed: 10, serialNumbers: serials, over: .seconds(36_000)))
  }
}
