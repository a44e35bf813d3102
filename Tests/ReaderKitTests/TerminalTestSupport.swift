import ReaderCore
import ReaderKit
import ReaderSimulator
import Testing

// Shared scaffolding for the scenario tests: a terminal on a `VirtualClock` over a small, fixed
// simulated world, recorders for delegates and completions, and a deterministic event log.

/// The readers of the fixed test world: a Chipper 2X at arm's length, an M2 on its dock and a
/// WisePad 3 across the room. Fixed serial numbers keep the assertions readable.
enum Fixture {
  static let chipper = "CHB20-0001"
  static let m2 = "STRM2-0002"
  static let wisePad = "WPC32-0003"
  static let location = "tml_front"

  static func readers() -> [SimulatedReader] {
    [
      SimulatedReader(serialNumber: chipper, deviceType: .chipper2X, label: "Counter", distance: 0.3),
      SimulatedReader(serialNumber: m2, deviceType: .stripeM2, label: "Dock", distance: 2, isCharging: true),
      SimulatedReader(serialNumber: wisePad, deviceType: .wisePad3, label: "Patio", distance: 8, batteryLevel: 0.6),
    ]
  }
}

extension Cancelable {
  /// Cancels through Stripe's `cancel(_:)` and hands `report` what its completion said, as a
  /// `CancelResult`: no error is `canceled`, `cancelFailedAlreadyCompleted` is `nothingToCancel` (any
  /// other error is a test failure).
  func cancelAndReport(
    _ report: @escaping @Sendable (CancelResult) -> Void, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    cancel { error in
      guard let error else { return report(.canceled) }
      if (error as? ReaderError)?.code == .cancelFailedAlreadyCompleted { return report(.nothingToCancel) }
      Issue.record("cancel reported \(error)", sourceLocation: sourceLocation)
    }
  }
}

/// Collects the values handed to a completion, from any thread.
final class Outcome<Value: Sendable>: Sendable {
  private let values = Locked<[Value]>([])

  init() {}

  /// The completion to hand to the terminal.
  var record: @Sendable (Value) -> Void { { value in self.values.withLock { $0.append(value) } } }
  /// Every value received, in order.
  var all: [Value] { values.withLock { $0 } }
  /// How many times the completion ran.
  var count: Int { all.count }
  /// The only value received; nil when none (or several) arrived.
  var value: Value? {
    let all = self.all
    return all.count == 1 ? all[0] : nil
  }
}

/// A `DiscoveryDelegate` that keeps every list it is given.
nonisolated final class DiscoveryRecorder: DiscoveryDelegate {
  private let lists = Locked<[(time: Duration, readers: [Reader])]>([])
  private let clock: VirtualClock

  init(clock: VirtualClock) { self.clock = clock }

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    let now = clock.elapsed
    lists.withLock { $0.append((now, readers)) }
  }

  /// Every update, in order.
  var updates: [[Reader]] { lists.withLock { $0.map(\.readers) } }
  /// When each update arrived.
  var times: [Duration] { lists.withLock { $0.map(\.time) } }
  /// The serial numbers of the latest update.
  var latestSerials: [String] { updates.last?.map(\.serialNumber) ?? [] }
}

/// A `MobileReaderDelegate` that writes every call down, and can react to the start of a reconnection.
nonisolated final class ReaderRecorder: MobileReaderDelegate {
  enum Call: Hashable, Sendable, CustomStringConvertible {
    case didDisconnect(String, DisconnectReason)
    case didStartReconnect(String, DisconnectReason)
    case didSucceedReconnect(String)
    case didFailReconnect(String)
    case didReportBattery(String, Double)
    case lowBatteryWarning(String)

    var description: String {
      switch self {
      case .didDisconnect(let serial, let reason): "didDisconnect(\(serial), \(reason))"
      case .didStartReconnect(let serial, let reason): "didStartReconnect(\(serial), \(reason))"
      case .didSucceedReconnect(let serial): "readerDidSucceedReconnect(\(serial))"
      case .didFailReconnect(let serial): "readerDidFailReconnect(\(serial))"
      case .didReportBattery(let serial, let level): "didReportBatteryLevel(\(serial), \(level))"
      case .lowBatteryWarning(let serial): "readerDidReportLowBatteryWarning(\(serial))"
      }
    }
  }

  private struct State {
    var calls: [Call] = []
    var reconnects: [Cancelable] = []
    var readers: [Reader] = []
    var onStartReconnect: (@Sendable (Cancelable) -> Void)?
    var onSucceedReconnect: (@Sendable () -> Void)?
  }

  private let state = Locked(State())

  init() {}

  /// Every call, in order.
  var calls: [Call] { state.withLock { $0.calls } }
  /// The handles given with each `didStartReconnect`, in order.
  var reconnectCancelables: [Cancelable] { state.withLock { $0.reconnects } }
  /// The reader value passed with each call, in order.
  var readers: [Reader] { state.withLock { $0.readers } }

  /// Runs `body` (on the scheduler) with each reconnection's handle as it starts.
  func onStartReconnect(_ body: @escaping @Sendable (Cancelable) -> Void) {
    state.withLock { $0.onStartReconnect = body }
  }

  /// Runs `body` (on the scheduler) inside each `readerDidSucceedReconnect`.
  func onSucceedReconnect(_ body: @escaping @Sendable () -> Void) {
    state.withLock { $0.onSucceedReconnect = body }
  }

  private func note(_ call: Call, _ reader: Reader) {
    state.withLock {
      $0.calls.append(call)
      $0.readers.append(reader)
    }
  }

  func reader(_ reader: Reader, didDisconnect reason: DisconnectReason) {
    note(.didDisconnect(reader.serialNumber, reason), reader)
  }

  func reader(_ reader: Reader, didStartReconnect cancelable: Cancelable, disconnectReason: DisconnectReason) {
    note(.didStartReconnect(reader.serialNumber, disconnectReason), reader)
    let hook = state.withLock { state -> (@Sendable (Cancelable) -> Void)? in
      state.reconnects.append(cancelable)
      return state.onStartReconnect
    }
    hook?(cancelable)
  }

  func readerDidSucceedReconnect(_ reader: Reader) {
    note(.didSucceedReconnect(reader.serialNumber), reader)
    state.withLock { $0.onSucceedReconnect }?()
  }
  func readerDidFailReconnect(_ reader: Reader) { note(.didFailReconnect(reader.serialNumber), reader) }

  func reader(_ reader: Reader, didReportBatteryLevel batteryLevel: Float, status: BatteryStatus, isCharging: Bool) {
    #expect(batteryLevel == Float(reader.batteryLevel ?? 0), "the level passed is the reader's")
    note(.didReportBattery(reader.serialNumber, reader.batteryLevel ?? 0), reader)
  }

  func readerDidReportLowBatteryWarning(_ reader: Reader) { note(.lowBatteryWarning(reader.serialNumber), reader) }
}

/// Every event of one terminal, in order, as values and as a deterministic text rendering.
final class EventLog: Sendable {
  private let events = Locked<[TerminalEvent]>([])
  private let statuses = Locked<[(ConnectionStatus, ConnectionStatus)]>([])

  /// Starts recording `terminal`'s events. Also samples `connectionStatus` at each status event, so
  /// tests can check that what the property says matches what the stream said.
  init(_ terminal: Terminal) {
    terminal.addEventObserver { [self, weak terminal] event in
      events.withLock { $0.append(event) }
      if case .didChangeConnectionStatus(let status) = event.kind, let terminal {
        let seen = terminal.connectionStatus
        statuses.withLock { $0.append((status, seen)) }
      }
    }
  }

  /// Every event so far.
  var all: [TerminalEvent] { events.withLock { $0 } }
  /// Every event's kind so far.
  var kinds: [TerminalEvent.Kind] { all.map(\.kind) }
  /// Every event's name so far.
  var names: [String] { all.map(\.name) }
  /// The names, without the status changes.
  var namesWithoutStatus: [String] { names.filter { $0 != "didChangeConnectionStatus" } }
  /// The statuses reported on the stream, in order.
  var statusChanges: [ConnectionStatus] { statusChanges(since: 0) }
  /// The statuses reported on the stream after the first `mark` events.
  func statusChanges(since mark: Int) -> [ConnectionStatus] {
    since(mark).compactMap { if case .didChangeConnectionStatus(let status) = $0.kind { status } else { nil } }
  }
  /// Pairs of (status on the stream, `connectionStatus` read in the same instant).
  var sampledStatuses: [(ConnectionStatus, ConnectionStatus)] { statuses.withLock { $0 } }

  /// How many events there are so far; pair with `since(_:)` to look at what came after a point.
  var count: Int { events.withLock { $0.count } }
  /// The events after the first `mark`.
  func since(_ mark: Int) -> [TerminalEvent] { Array(all.dropFirst(mark)) }

  /// One line per event: time, name and details, with every value spelled out in a fixed order.
  func rendered() -> String { all.map(render).joined(separator: "\n") }
}

/// A text form of an event that does not depend on hashing or memory layout.
func render(_ event: TerminalEvent) -> String {
  func reader(_ reader: Reader) -> String {
    [
      reader.serialNumber, reader.deviceType.rawValue, reader.label ?? "-", reader.deviceSoftwareVersion ?? "-",
      reader.batteryLevel.map { "\($0)" } ?? "-", reader.isCharging.map { "\($0)" } ?? "-", reader.locationId ?? "-",
      reader.signalStrength.map { "\($0)" } ?? "-",
    ].joined(separator: "/")
  }
  func error(_ error: ReaderError?) -> String { error?.description ?? "ok" }
  let details: String
  switch event.kind {
  case .didChangeConnectionStatus(let status): details = status.rawValue
  case .didUpdateDiscoveredReaders(let readers): details = readers.map(reader).joined(separator: ", ")
  case .didFinishDiscovery(let failure): details = error(failure)
  case .didRequestLEDFlash(let serial): details = serial
  case .didQueueCommand(let command, let position): details = "\(command) #\(position)"
  case .didConnect(let connected): details = reader(connected)
  case .didFailToConnect(let serial, let failure): details = "\(serial) \(error(failure))"
  case .didDisconnect(let gone, let reason): details = "\(reader(gone)) \(reason)"
  case .didStartReconnect(let lost, let reason): details = "\(reader(lost)) \(reason)"
  case .readerDidSucceedReconnect(let back): details = reader(back)
  case .readerDidFailReconnect(let lost, let failure): details = "\(reader(lost)) \(error(failure))"
  case .didReportBatteryLevel(let updated): details = reader(updated)
  case .readerDidReportLowBatteryWarning(let low): details = reader(low)
  case .didRespondToReboot(let serial, let failure): details = "\(serial) \(error(failure))"
  case .didStartLaunchReconnect(let serial): details = serial
  case .didFindNoSavedReader: details = ""
  case .didFindSavedReader(let found): details = reader(found)
  case .didFinishLaunchReconnect(let failure): details = error(failure)
  case .didSaveReader(let serial, let failure): details = "\(serial) \(error(failure))"
  case .didReportAvailableUpdate(let reader, let update):
    details = "\(reader.serialNumber) \(update.deviceSoftwareVersion)"
  case .didStartInstallingUpdate(let reader, let update, let cancelable):
    details = "\(reader.serialNumber) \(update.deviceSoftwareVersion) cancelable=\(cancelable)"
  case .didReportReaderSoftwareUpdateProgress(let reader, let progress): details = "\(reader.serialNumber) \(progress)"
  case .didFinishInstallingUpdate(let reader, let update, let failure):
    details = "\(reader.serialNumber) \(update?.deviceSoftwareVersion ?? "-") \(error(failure))"
  }
  return "\(event.time) \(event.name) \(details)"
}

/// A terminal, its world and its event log, on one virtual clock.
struct Harness {
  let clock: VirtualClock
  let world: SimulatedBluetoothCentral
  let terminal: Terminal
  let log: EventLog
  let store: InMemoryReaderStore

  /// A terminal over the fixed test world (or `readers`), with `seed` for both world and terminal.
  init(
    seed: UInt64 = 1, readers: [SimulatedReader] = Fixture.readers(),
    store: InMemoryReaderStore = InMemoryReaderStore(),
    tuning: DiscoveryTuning = DiscoveryTuning()
  ) {
    clock = VirtualClock()
    world = SimulatedBluetoothCentral(clock: clock, seed: seed)
    for reader in readers { world.add(reader) }
    self.store = store
    terminal = Terminal(central: world, scheduler: clock, store: store, tuning: tuning, seed: seed)
    log = EventLog(terminal)
  }

  /// A second "launch" of the app over the same world and store: the previous app's links are gone.
  func relaunch(seed: UInt64 = 2) -> (terminal: Terminal, log: EventLog) {
    world.terminateHostApp()
    let terminal = Terminal(central: world, scheduler: clock, store: store, seed: seed)
    return (terminal, EventLog(terminal))
  }

  static var scan: BluetoothScanDiscoveryConfiguration {
    get throws { try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(true).build() }
  }

  func scan(timeout seconds: UInt) throws -> BluetoothScanDiscoveryConfiguration {
    try BluetoothScanDiscoveryConfiguration.Builder().setTimeout(seconds).setSimulated(true).build()
  }

  /// A connection configuration for the fixed location.
  func configuration(
    _ delegate: ReaderRecorder, autoReconnect: Bool = true, policy: ReconnectPolicy = .default
  ) throws -> BluetoothConnectionConfiguration {
    try BluetoothConnectionConfiguration.Builder(delegate: delegate, locationId: Fixture.location)
      .setAutoReconnectOnUnexpectedDisconnect(autoReconnect).setReconnectPolicy(policy).build()
  }

  /// Scans until `serial` is listed, returning it as discovered (the scan keeps running).
  func discover(
    _ serial: String, within limit: Duration = .seconds(5), sourceLocation: SourceLocation = #_sourceLocation
  )
    -> (reader: Reader, discovery: Cancelable, completion: Outcome<ReaderError?>)?
  {
    let delegate = DiscoveryRecorder(clock: clock)
    let done = Outcome<ReaderError?>()
    let scan: BluetoothScanDiscoveryConfiguration
    do {
      scan = try Self.scan
    } catch {
      Issue.record(error, "test set-up: no scan configuration", sourceLocation: sourceLocation)
      return nil
    }
    let discovery = terminal.discoverReaders(scan, delegate: delegate, completion: done.record)
    // By steps rather than until the clock reads `end`: a clock that stops moving fails the test.
    for _ in 0..<Int((limit / .milliseconds(100)).rounded(.up)) {
      clock.advance(by: .milliseconds(100))
      if let reader = delegate.updates.last?.first(where: { $0.serialNumber == serial }) {
        return (reader, discovery, done)
      }
    }
    Issue.record("\(serial) was not discovered within \(limit)", sourceLocation: sourceLocation)
    return nil
  }

  /// Discovers and connects `serial`; returns the connected reader and the delegate that hears about it.
  @discardableResult
  func connect(
    _ serial: String, autoReconnect: Bool = true, policy: ReconnectPolicy = .default,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> (reader: Reader, delegate: ReaderRecorder)? {
    guard let found = discover(serial, sourceLocation: sourceLocation) else { return nil }
    let delegate = ReaderRecorder()
    let connected = Outcome<Result<Reader, ReaderError>>()
    terminal.connectReader(
      found.reader, connectionConfig: try configuration(delegate, autoReconnect: autoReconnect, policy: policy),
      completion: connected.record)
    clock.advance(by: .seconds(3))
    guard case .success(let reader)? = connected.value else {
      Issue.record("connecting \(serial) gave \(String(describing: connected.all))", sourceLocation: sourceLocation)
      return nil
    }
    return (reader, delegate)
  }

  /// Discovers `serial`, ends the scan, lets `meanwhile` change the world, waits `wait` (long past the
  /// staleness window), then connects: a connect to a reader last heard long ago. `mark` is the
  /// event count just before the connect.
  func connectLongAfterDiscovery(
    _ serial: String, wait: Duration = .seconds(30), meanwhile: () -> Void = {},
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> (result: Outcome<Result<Reader, ReaderError>>, connect: Cancelable, mark: Int)? {
    guard let found = discover(serial, sourceLocation: sourceLocation) else { return nil }
    found.discovery.cancel()
    meanwhile()
    clock.advance(by: wait)
    let mark = log.count
    let result = Outcome<Result<Reader, ReaderError>>()
    let connect = terminal.connectReader(
      found.reader, connectionConfig: try configuration(ReaderRecorder()), completion: result.record)
    return (result, connect, mark)
  }

  /// Whether the clock has nothing left to run, with a description of what is left otherwise.
  var pendingWorkDescription: String? { clock.checkNoPendingWork() }
}

extension Optional where Wrapped == ReaderError {
  /// The code of an optional error, for compact expectations (`nil` when there is no error).
  var code: ReaderError.Code? { self.map(\.code) }
}
