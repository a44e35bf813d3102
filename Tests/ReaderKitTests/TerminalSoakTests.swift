import ReaderCore
import ReaderSimulator
import Testing

@testable import ReaderKit

/// A merchant who keeps a terminal connected to one reader through a random fault schedule: scans
/// and connects, reconnects by hand after a final disconnect, and now and then reboots, disconnects
/// or cancels a reconnection. Every choice is drawn from the seed, and everything runs on the clock.
private final class Merchant: Sendable {
  private enum Phase { case idle, seeking, connected }

  private struct State {
    var random: SeededRandom
    var phase = Phase.idle
    var stopped = false
    var scan: Cancelable?
    var issued = 0
    var completions: [Int: Int] = [:]
  }

  let terminal: Terminal
  let clock: VirtualClock
  let target: String
  let delegate = ReaderRecorder()
  private let state: Locked<State>
  /// The configurations the merchant uses, built before the run so that a configuration the library
  /// refuses fails the test instead of trapping inside a callback.
  private let seekScan: BluetoothScanDiscoveryConfiguration
  private let browseScan: BluetoothScanDiscoveryConfiguration
  private let reconnecting: BluetoothConnectionConfiguration
  private let notReconnecting: BluetoothConnectionConfiguration
  private let elsewhere: BluetoothConnectionConfiguration

  init(terminal: Terminal, clock: VirtualClock, target: String, seed: UInt64) throws {
    self.terminal = terminal
    self.clock = clock
    self.target = target
    seekScan = try BluetoothScanDiscoveryConfiguration.Builder().setTimeout(30).setSimulated(true).build()
    browseScan = try BluetoothScanDiscoveryConfiguration.Builder().setTimeout(10).setSimulated(true).build()
    let soak = BluetoothConnectionConfiguration.Builder(delegate: delegate, locationId: "tml_soak")
    reconnecting = try soak.setAutoReconnectOnUnexpectedDisconnect(true).build()
    notReconnecting = try soak.setAutoReconnectOnUnexpectedDisconnect(false).build()
    elsewhere = try BluetoothConnectionConfiguration.Builder(delegate: delegate, locationId: "tml_other").build()
    self.state = Locked(State(random: SeededRandom(seed: seed ^ 0x3E4C_4A47)))
    terminal.addEventObserver { [self] event in observe(event) }
    delegate.onStartReconnect { [self] cancelable in
      // One reconnection in eight is cancelled by the merchant, at a random point.
      guard draw() < 0.125 else { return }
      after(.seconds(Int64(draw() * 70))) { cancelable.cancel() }
    }
  }

  /// Commands whose completion never ran, and commands whose completion ran more than once.
  var unbalancedCompletions: (missing: [Int], repeated: [Int]) {
    state.withLock { state in
      let missing = (0..<state.issued).filter { state.completions[$0] == nil }
      let repeated = state.completions.filter { $0.value > 1 }.map(\.key).sorted()
      return (missing, repeated)
    }
  }

  func start() { clock.execute { [self] in seek() } }

  /// Stops taking new initiatives and winds the terminal down.
  func stop() {
    let scan = state.withLock { state -> Cancelable? in
      state.stopped = true
      return state.scan
    }
    scan?.cancel()
    delegate.reconnectCancelables.last?.cancel()
    // A connect still under way is followed by the disconnect, which waits its turn behind it.
    if [.connected, .connecting].contains(terminal.connectionStatus) {
      terminal.disconnectReader(completion: completion())
    }
  }

  private func draw() -> Double { state.withLock { $0.random.nextUnit() } }
  private var stopped: Bool { state.withLock { $0.stopped } }

  private func after(_ delay: Duration, _ body: @escaping @Sendable () -> Void) {
    clock.schedule(after: delay) { [self] in if !stopped { body() } }
  }

  /// A completion that is counted, so a lost or repeated completion shows up.
  private func completion<T>(_ body: @escaping @Sendable (T) -> Void = { _ in }) -> @Sendable (T) -> Void {
    let id = state.withLock { state -> Int in
      defer { state.issued += 1 }
      return state.issued
    }
    return { [self] value in
      state.withLock { $0.completions[id, default: 0] += 1 }
      body(value)
    }
  }

  private func seek() {
    let start = state.withLock { state -> Bool in
      guard !state.stopped, state.phase == .idle else { return false }
      state.phase = .seeking
      return true
    }
    guard start else { return }
    let finder = Finder(target: target) { [self] reader in connect(reader) }
    let handle = terminal.discoverReaders(
      seekScan, delegate: finder,
      completion: completion { [self] (_: ReaderError?) in
        if !finder.claimed { retryLater() }
      })
    state.withLock { $0.scan = handle }
  }

  private func connect(_ reader: Reader) {
    terminal.connectReader(
      reader, connectionConfig: draw() < 0.9 ? reconnecting : notReconnecting,
      completion: completion { [self] (result: Result<Reader, ReaderError>) in
        switch result {
        case .success: connected()
        case .failure: retryLater()
        }
      })
  }

  private func connected() {
    state.withLock { $0.phase = .connected }
    let choice = draw()
    let delay = Duration.seconds(Int64(1 + draw() * 1800))
    if choice < 0.15 {
      after(delay) { [self] in terminal.rebootReader(completion: completion()) }
    } else if choice < 0.25 {
      after(delay) { [self] in terminal.disconnectReader(completion: completion()) }
    } else if choice < 0.32 {
      after(delay) { [self] in
        terminal.rebootReader(completion: completion())
        terminal.disconnectReader(completion: completion())
      }
    } else if choice < 0.42 {
      // Browsing while connected; sometimes tapping a reader, which must not disturb the connection.
      let tap = draw() < 0.5
      after(delay) { [self] in browse(thenTap: tap) }
    }
  }

  private func browse(thenTap tap: Bool) {
    let finder = Finder(target: target) { [self] reader in
      guard tap else { return }
      terminal.connectReader(reader, connectionConfig: elsewhere, completion: completion())
    }
    terminal.discoverReaders(browseScan, delegate: finder, completion: completion())
  }

  private func retryLater() {
    state.withLock { $0.phase = .idle }
    after(.seconds(Int64(10 + draw() * 600))) { [self] in seek() }
  }

  private func observe(_ event: TerminalEvent) {
    switch event.kind {
    case .didDisconnect: retryLater()
    case .readerDidSucceedReconnect: connected()
    default: break
    }
  }

  /// Connects to the target the first time it is listed.
  private nonisolated final class Finder: DiscoveryDelegate {
    private let found = Locked(false)
    private let onFound: @Sendable (Reader) -> Void
    private let target: String

    init(target: String, onFound: @escaping @Sendable (Reader) -> Void) {
      self.target = target
      self.onFound = onFound
    }

    var claimed: Bool { found.withLock { $0 } }

    func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
      guard let reader = readers.first(where: { $0.serialNumber == target }) else { return }
      guard
        found.withLock({ found in
          defer { found = true }; return !found
        })
      else { return }
      onFound(reader)
    }
  }
}

/// Checks the ordering guarantees of one event log; returns what was violated.
private func violations(in events: [TerminalEvent]) -> [String] {
  var problems: [String] = []
  var status = ConnectionStatus.notConnected
  var linked: String?
  var reconnecting = false
  var expectDisconnectOf: String?

  func concerned(_ kind: TerminalEvent.Kind) -> String? {
    switch kind {
    case .didDisconnect(let reader, _), .didStartReconnect(let reader, _), .readerDidSucceedReconnect(let reader),
      .readerDidFailReconnect(let reader, _), .didReportBatteryLevel(let reader),
      .readerDidReportLowBatteryWarning(let reader):
      reader.serialNumber
    case .didRespondToReboot(let serial, _): serial
    default: nil
    }
  }

  for (index, event) in events.enumerated() {
    let at = "#\(index) \(render(event))"
    if case .didChangeConnectionStatus(let next) = event.kind {
      if next == status { problems.append("\(at): status repeated") }
      status = next
      continue
    }
    if let serial = expectDisconnectOf {
      expectDisconnectOf = nil
      guard case .didDisconnect(let reader, _) = event.kind, reader.serialNumber == serial else {
        problems.append("\(at): readerDidFailReconnect not followed by didDisconnect")
        continue
      }
    }
    if let serial = concerned(event.kind), serial != linked {
      problems.append("\(at): event for \(serial) while \(linked ?? "nothing") is connected")
    }
    switch event.kind {
    case .didConnect(let reader):
      if linked != nil { problems.append("\(at): connected while \(linked!) still is") }
      if status != .connected { problems.append("\(at): status \(status)") }
      linked = reader.serialNumber
    case .didStartReconnect:
      if reconnecting { problems.append("\(at): reconnection started twice") }
      if status != .reconnecting { problems.append("\(at): status \(status)") }
      reconnecting = true
    case .readerDidSucceedReconnect:
      if !reconnecting { problems.append("\(at): success without a reconnection") }
      if status != .connected { problems.append("\(at): status \(status)") }
      reconnecting = false
    case .readerDidFailReconnect(let reader, _):
      if !reconnecting { problems.append("\(at): failure without a reconnection") }
      reconnecting = false
      expectDisconnectOf = reader.serialNumber
    case .didDisconnect:
      if reconnecting { problems.append("\(at): disconnected while a reconnection is open") }
      if status == .connected || status == .reconnecting || status == .connecting {
        problems.append("\(at): status \(status)")
      }
      linked = nil
    default:
      break
    }
  }
  if reconnecting { problems.append("a reconnection never ended") }
  if expectDisconnectOf != nil { problems.append("the log ends on readerDidFailReconnect") }
  return problems
}

@Suite struct TerminalSoakTests {
  /// What one run went through, to show that the schedules reach the paths they are meant to test.
  private struct Coverage {
    var reasons: Set<DisconnectReason> = []
    var succeeded = 0
    var failed = 0
    var canceled = 0
    var reboots = 0

    mutating func add(_ events: [TerminalEvent]) {
      for event in events {
        switch event.kind {
        case .didStartReconnect(_, let reason), .didDisconnect(_, let reason): reasons.insert(reason)
        case .readerDidSucceedReconnect: succeeded += 1
        case .readerDidFailReconnect(_, let error):
          failed += 1
          if error.code == .canceled { canceled += 1 }
        case .didRespondToReboot(_, nil): reboots += 1
        default: break
        }
      }
    }
  }

  /// One seed: a few simulated hours of random faults and merchant actions, then a wind-down.
  private static func run(seed: UInt64, hours: Int = 3, coverage: inout Coverage) throws -> [String] {
    let clock = VirtualClock()
    let world = SimulatedBluetoothCentral(clock: clock, seed: seed)
    let readers = SimulatedFleet.readers(count: 3, seed: seed)
    for reader in readers { world.add(reader) }
    let terminal = Terminal(central: world, scheduler: clock, store: InMemoryReaderStore(), seed: seed)
    let log = EventLog(terminal)
    let target = readers[Int(seed % 3)].serialNumber
    // The other readers stay out of range: the faults are all the target's.
    for reader in readers where reader.serialNumber != target { world.setInRange(reader.serialNumber, false) }
    let merchant = try Merchant(terminal: terminal, clock: clock, target: target, seed: seed)
    let schedule = SimulatedFaultSchedule.random(
      seed: seed, serialNumbers: [target], over: .seconds(Int64(hours) * 3600), meanInterval: .seconds(300))
    schedule.apply(to: world)
    merchant.start()

    clock.advance(to: max(.seconds(Int64(hours) * 3600), schedule.end) + .seconds(60))
    merchant.stop()
    clock.advance(by: .seconds(120))

    coverage.add(log.all)
    var problems = violations(in: log.all)
    if !log.sampledStatuses.allSatisfy({ $0.0 == $0.1 }) {
      problems.append("connectionStatus disagreed with the stream")
    }
    if log.delegateCalls != merchant.delegate.calls { problems.append("delegate calls differ from the stream") }
    if merchant.delegate.reconnectCancelables.contains(where: { !$0.isCompleted }) {
      problems.append("a reconnection's Cancelable never completed")
    }
    let (missing, repeated) = merchant.unbalancedCompletions
    if !missing.isEmpty { problems.append("completions never ran: \(missing)") }
    if !repeated.isEmpty { problems.append("completions ran twice: \(repeated)") }
    if terminal.connectionStatus != .notConnected { problems.append("still \(terminal.connectionStatus) at the end") }
    let timers = terminal.engine.armedTimers
    if !timers.isEmpty { problems.append("terminal timers left: \(timers)") }

    // With every reader switched off, the world has no clocks either: nothing may be left.
    for reader in readers { world.setPower(reader.serialNumber, on: false) }
    let events = log.count
    clock.runUntilQuiet(limit: clock.elapsed + .seconds(86_400))
    if let pending = clock.checkNoPendingWork() { problems.append(pending) }
    if log.count != events { problems.append("events after the end: \(log.since(events).map(render))") }
    if !log.names.contains("didConnect") { problems.append("never connected") }
    return problems
  }

  @Test func randomFaultSchedulesKeepTheReconnectionGuarantees() throws {
    var coverage = Coverage()
    for seed in UInt64(0)..<200 {
      let problems = try Self.run(seed: seed, coverage: &coverage)
      #expect(problems.isEmpty, "seed \(seed): \(problems.prefix(5).joined(separator: "; "))")
    }
    // The schedules must reach every path, or the run proves little.
    let expected: Set<DisconnectReason> = [
      .bluetoothSignalLost, .poweredOff, .bluetoothDisabled, .criticallyLowBattery, .securityReboot, .rebootRequested,
      .disconnectRequested, .unknown,
    ]
    #expect(coverage.reasons.isSuperset(of: expected), "reasons seen: \(coverage.reasons)")
    #expect(coverage.succeeded > 200 && coverage.failed > 50 && coverage.canceled > 10 && coverage.reboots > 20)
    print("soak coverage:", coverage)
  }
}
