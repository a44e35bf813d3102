import Foundation
import ReaderCore
import ReaderSimulator

/// The entry point: discovers Bluetooth readers, connects one, keeps it connected.
///
/// Every operation is queued: an operation issued while another runs waits its turn (FIFO) and can
/// be cancelled while it waits; nothing fails with "busy". Only an operation that contradicts the
/// state (connect while connected, disconnect with nothing connected) fails, with a `ReaderError`
/// naming why. Completions and delegate calls run on the terminal's scheduler, in the order the
/// event stream (`events()`) reports them.
///
/// The engine runs on one `Scheduler`. With the simulator that is a `VirtualClock`, and the whole
/// run — terminal, readers, radio — is a deterministic function of the seed and the script.
///
/// ```swift
/// let world = SimulatedBluetoothCentral(clock: clock, seed: 42)
/// let terminal = Terminal(central: world, scheduler: clock, store: InMemoryReaderStore())
/// let scan = try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(true).build()
/// let discovery = terminal.discoverReaders(scan, delegate: self) { error in … }
/// ```
///
/// To restart a scan: `discovery.cancel { _ in terminal.discoverReaders(…) }` — the cancel
/// completion runs once the first scan has stopped, so the second starts at once.
public final class Terminal: Sendable {
  let engine: TerminalEngine
  private let jobCounter = Locked<UInt64>(0)
  private let terminalDelegate = Locked<(any TerminalDelegate)?>(nil)

  /// The simulator's settings (Stripe's `simulatorConfiguration`): change them in place, e.g.
  /// `Terminal.shared.simulatorConfiguration.availableReaderUpdate = .required`. They apply to
  /// simulated readers only.
  public let simulatorConfiguration: SimulatorConfiguration

  /// Creates a terminal over a transport that is both the radio and the reader link (the
  /// simulator, `SimulatedBluetoothCentral`, is), and a scheduler.
  /// - Parameters:
  ///   - central: the Bluetooth transport (simulated or real).
  ///   - scheduler: where everything runs; the central must deliver its events on it.
  ///   - store: where the last connected reader is remembered for `reconnectToSavedReader`; by
  ///     default the platform's persistent store (`Terminal.platformStore()`). Pass an
  ///     `InMemoryReaderStore` in tests and simulations that must leave no trace on disk.
  ///   - tuning: discovery timings.
  ///   - seed: the seed of the terminal's own randomness (reconnect jitter).
  ///   - delegateExecutor: where delegates and completions run; by default `.scheduler` on a
  ///     deterministic scheduler (`Scheduler.isDeterministic`, a `VirtualClock`) and `.mainActor` on
  ///     any other. Dates (an update's `requiredAt`) come from `Scheduler.epoch`.
  ///   - updateCatalog: where reader software updates come from (`ManifestUpdateCatalog`,
  ///     `HTTPUpdateCatalog`, `InMemoryUpdateCatalog`); without one, only a connection's test update
  ///     (`setTestReaderUpdate`) is ever installed.
  ///   - updatePolicy: the update rules (required or optional, the grace rule); this version's by default.
  ///   - updateCheckInterval: how often the catalog is asked again while a reader is connected and idle.
  public convenience init(
    central: some BluetoothCentral & ReaderLink, scheduler: any Scheduler,
    store: any ReaderStore = Terminal.platformStore(), tuning: DiscoveryTuning = DiscoveryTuning(), seed: UInt64 = 0,
    delegateExecutor: DelegateExecutor? = nil, updateCatalog: (any UpdateCatalog)? = nil,
    updatePolicy: UpdatePolicy = UpdatePolicy(), updateCheckInterval: Duration = .seconds(3600)
  ) {
    self.init(
      central: central, readerLink: central, scheduler: scheduler, store: store, tuning: tuning, seed: seed,
      delegateExecutor: delegateExecutor, updateCatalog: updateCatalog, updatePolicy: updatePolicy,
      updateCheckInterval: updateCheckInterval)
  }

  /// Creates a terminal over a Bluetooth radio, the channel to its readers, and a scheduler; see
  /// `init(central:scheduler:store:tuning:seed:delegateExecutor:)`.
  public convenience init(
    central: any BluetoothCentral, readerLink: any ReaderLink, scheduler: any Scheduler,
    store: any ReaderStore = Terminal.platformStore(), tuning: DiscoveryTuning = DiscoveryTuning(), seed: UInt64 = 0,
    delegateExecutor: DelegateExecutor? = nil, updateCatalog: (any UpdateCatalog)? = nil,
    updatePolicy: UpdatePolicy = UpdatePolicy(), updateCheckInterval: Duration = .seconds(3600)
  ) {
    let updates = TerminalStateMachine.UpdateSettings(
      hasCatalog: updateCatalog != nil, policy: updatePolicy, checkInterval: updateCheckInterval,
      epoch: scheduler.epoch)
    self.init(
      central: central, readerLink: readerLink, scheduler: scheduler, store: store, updateCatalog: updateCatalog,
      delegateExecutor: delegateExecutor ?? (scheduler.isDeterministic ? .scheduler : .mainActor),
      machine: TerminalStateMachine(tuning: tuning, seed: seed, updates: updates, radioOn: central.isPoweredOn))
  }

  init(
    central: any BluetoothCentral, readerLink: any ReaderLink, scheduler: any Scheduler, store: any ReaderStore,
    updateCatalog: (any UpdateCatalog)? = nil, delegateExecutor: DelegateExecutor, machine: TerminalStateMachine,
    simulatedReaderUpdate: SimulateReaderUpdate = .none
  ) {
    let engine = TerminalEngine(
      scheduler: scheduler, central: central, readerLink: readerLink, store: store, catalog: updateCatalog,
      executor: delegateExecutor, machine: machine)
    self.engine = engine
    let feed: @Sendable (SimulateReaderUpdate) -> Void = { update in
      engine.scheduler.execute { engine.feed(.simulatedReaderUpdate(update.testReaderUpdate)) }
    }
    simulatorConfiguration = SimulatorConfiguration(availableReaderUpdate: simulatedReaderUpdate, onChange: feed)
    if simulatedReaderUpdate != .none { feed(simulatedReaderUpdate) }
    engine.terminal = self
    central.setEventHandler { [engine] event in engine.feed(event) }
    readerLink.setLinkEventHandler { [engine] event in engine.feed(.readerLink(event)) }
  }

  /// The terminal an app shares, as `Terminal.shared` in Stripe's SDK: created on first use, kept for
  /// the life of the process.
  ///
  /// What backs it: simulated readers — discovery configurations with `simulated` set — come from the
  /// built-in simulator (three readers from `SimulatedFleet`) running on the real clock, as Stripe's
  /// simulated readers do. Real readers come from BlueZ on Linux when, at first use, the D-Bus system
  /// bus answers (`DBUS_SYSTEM_BUS_ADDRESS`, else the well-known socket), `bluetoothd` is on it and it
  /// has an adapter (the first one; use `Terminal(bluezAdapter:)` to pick one): that check takes at
  /// most a second. Elsewhere, and without those, discovering or connecting a real reader fails with
  /// `bluetoothUnsupported`. Delegates and completions run on the main actor; the last reader is kept
  /// in `Terminal.platformStore()`. As in Stripe's SDK, its simulated readers report an optional update
  /// (`simulatorConfiguration`'s `availableReaderUpdate` starts at `available`).
  public static let shared: Terminal = {
    let clock = VirtualClock()
    let world = SimulatedBluetoothCentral(clock: clock, seed: UInt64.random(in: 1...UInt64.max))
    for reader in SimulatedFleet.readers(count: 3, seed: 1) { world.add(reader) }
    let seed = UInt64.random(in: 0...UInt64.max)
    let terminal: Terminal
    if let real = realBackend(scheduler: clock) {
      let router = RoutingBluetoothCentral(world: world, real: real.central, realLink: real.link)
      terminal = Terminal(
        central: router, readerLink: router, scheduler: clock, store: platformStore(), delegateExecutor: .mainActor,
        machine: TerminalStateMachine(seed: seed, realReadersSupported: true, radioOn: router.isPoweredOn), simulatedReaderUpdate: .available)
    } else {
      terminal = Terminal(
        central: world, readerLink: world, scheduler: clock, store: platformStore(), delegateExecutor: .mainActor,
        machine: TerminalStateMachine(seed: seed, realReadersSupported: false, radioOn: world.isPoweredOn), simulatedReaderUpdate: .available)
    }
    sharedDriver.withLock { $0 = RealTimeDriver(clock: clock) }
    sharedDriver.withLock { $0?.start() }
    return terminal
  }()

  private static let sharedDriver = Locked<RealTimeDriver?>(nil)

  /// The date a simulation on a `VirtualClock` starts at (2026-01-01 00:00 UTC), so dates in a seeded
  /// run — an update's `requiredAt`, the grace window — replay exactly. Build catalog releases for a
  /// simulation relative to it.
  public static let simulationEpoch = VirtualClock.simulationEpoch

  /// The persistent store a terminal uses unless given one: `UserDefaultsReaderStore()` (the
  /// app's standard defaults) on Apple platforms, elsewhere a `FileReaderStore` at
  /// `FileReaderStore.defaultLocation()` (`$XDG_DATA_HOME/readerkit/last-reader.json`).
  public static func platformStore() -> any ReaderStore {
    #if canImport(Darwin)
      UserDefaultsReaderStore()
    #else
      FileReaderStore(fileURL: FileReaderStore.defaultLocation())
    #endif
  }

  /// A terminal on the built-in simulator: a `VirtualClock` and a seeded world with `readers`
  /// readers from `SimulatedFleet`. Drive time with `world.clock`. The store is in memory unless
  /// given, so simulations leave nothing on disk.
  public static func simulated(
    seed: UInt64, readers: Int = 3, store: any ReaderStore = InMemoryReaderStore(),
    updateCatalog: (any UpdateCatalog)? = nil
  ) -> (terminal: Terminal, world: SimulatedBluetoothCentral) {
    let clock = VirtualClock()
    let world = SimulatedBluetoothCentral(clock: clock, seed: seed)
    for reader in SimulatedFleet.readers(count: readers, seed: seed) { world.add(reader) }
    let terminal = Terminal(
      central: world, scheduler: clock, store: store, seed: seed, delegateExecutor: .scheduler,
      updateCatalog: updateCatalog)
    return (terminal, world)
  }

  /// The current connection status. `delegate` hears every change.
  public var connectionStatus: ConnectionStatus { engine.snapshot.withLock { $0.status } }

  /// Whether a payment can start: always `notReady`, since ReaderKit does not collect payments (Stripe's
  /// `paymentStatus`, there so code written for Stripe's SDK compiles).
  public var paymentStatus: PaymentStatus { .notReady }

  /// Observes the terminal as a whole, as Stripe's `Terminal.shared.delegate`: it hears every change
  /// of `connectionStatus` (`terminal(_:didChangeConnectionStatus:)`), on the `DelegateExecutor`, in
  /// order with the other delegates. Held strongly, so a delegate object created in place keeps
  /// hearing; set `nil` to stop.
  public var delegate: (any TerminalDelegate)? {
    get { terminalDelegate.withLock { $0 } }
    set { terminalDelegate.withLock { $0 = newValue } }
  }

  /// The connected reader; `nil` until a connection is complete (and while reconnecting).
  public var connectedReader: Reader? { engine.snapshot.withLock { $0.connectedReader } }

  // MARK: Events

  /// Calls `observer` with every event, on the scheduler, synchronously and in order. Use it for
  /// logs that must be deterministic; returns a token for `removeEventObserver(_:)`.
  @discardableResult
  public func addEventObserver(_ observer: @escaping @Sendable (TerminalEvent) -> Void) -> UInt64 {
    guard let token = engine.observers.add(observer) else { preconditionFailure("a terminal's events never end") }
    return token
  }

  /// Stops calling an observer.
  public func removeEventObserver(_ token: UInt64) {
    engine.observers.remove(token)
  }

  /// An ordered stream of every event from now on; ends when the consumer stops iterating.
  public func events(bufferingPolicy: AsyncStream<TerminalEvent>.Continuation.BufferingPolicy = .unbounded)
    -> AsyncStream<TerminalEvent>
  {
    let (stream, continuation) = AsyncStream.makeStream(of: TerminalEvent.self, bufferingPolicy: bufferingPolicy)
    let token = addEventObserver { continuation.yield($0) }
    continuation.onTermination = { [engine] _ in engine.observers.remove(token) }
    return stream
  }

  // MARK: Discovery

  /// Starts discovering readers.
  ///
  /// While it runs the status is `discovering` and `delegate` receives the latest list whenever it
  /// changes. It ends when cancelled (`canceled`), when `connectReader` is called (success), when the
  /// scan's timeout fires (success if any reader was found, `bluetoothScanTimedOut` otherwise), or
  /// when Bluetooth is turned off (`bluetoothDisabled`). A second discovery waits for the first.
  @discardableResult
  public func discoverReaders(
    _ configuration: any DiscoveryConfiguration, delegate: any DiscoveryDelegate,
    completion: @escaping @Sendable (ReaderError?) -> Void
  ) -> Cancelable {
    submit(.discover(configuration.method, simulated: configuration.simulated), .discover(delegate, completion))
  }

  /// Discovers readers as an asynchronous sequence of lists; the sequence finishes when the discovery
  /// does, throwing its `ReaderError`. Ending the iteration (or cancelling its task) cancels it.
  public func discoverReaders(_ configuration: any DiscoveryConfiguration) -> AsyncThrowingStream<[Reader], any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: [Reader].self, throwing: (any Error).self)
    let delegate = StreamDiscoveryDelegate(continuation: continuation)
    let cancelable = discoverReaders(configuration, delegate: delegate) { error in
      continuation.finish(throwing: error)
    }
    continuation.onTermination = { _ in cancelable.cancel() }
    return stream
  }

  // MARK: Connection

  /// Connects to a discovered reader at the configuration's location; see
  /// `connectReader(_:connectionConfig:completion:)` with a `Result`. This form's completion gets the
  /// reader or the error, as Stripe's does: `{ reader, error in … }`.
  @discardableResult
  public func connectReader(
    _ reader: Reader, connectionConfig: BluetoothConnectionConfiguration,
    completion: @escaping @Sendable (Reader?, (any Error)?) -> Void
  ) -> Cancelable {
    connectReader(reader, connectionConfig: connectionConfig) { (result: Result<Reader, ReaderError>) in
      switch result {
      case .success(let reader): completion(reader, nil)
      case .failure(let error): completion(nil, error)
      }
    }
  }

  /// Connects to a discovered reader at the configuration's location.
  ///
  /// The status moves `connecting → connected`; on success the reader carries `locationId` and is
  /// saved for reconnect at launch. A running discovery ends first (its completion reports success).
  /// A reader discovered earlier but not heard within the staleness window (the discovery ended a
  /// while ago) is listened for first — the status is `connecting` meanwhile — and connected once
  /// heard; if it stays silent for the window the connect fails with `readerNotFound`. The reader is
  /// saved before the completion runs (`didSaveReader` comes first).
  /// Fails with `alreadyConnected`, `readerNotFound` (never discovered, or no longer advertising),
  /// `bluetoothConnectTimedOut`, `connectionFailed`, `bluetoothDisabled`, `bluetoothUnsupported` (a
  /// real reader on `Terminal.shared`) or `canceled`.
  @discardableResult
  public func connectReader(
    _ reader: Reader, connectionConfig: BluetoothConnectionConfiguration,
    completion: @escaping @Sendable (Result<Reader, ReaderError>) -> Void
  ) -> Cancelable {
    submit(.connect(reader, connectionConfig.settings), .connect(connectionConfig.delegate, completion))
  }

  /// Connects to a discovered reader; see `connectReader(_:connectionConfig:completion:)`.
  /// Cancelling the task cancels the connection attempt.
  public func connectReader(_ reader: Reader, connectionConfig: BluetoothConnectionConfiguration)
    async throws(ReaderError)
    -> Reader
  {
    try await awaitResult { completion in
      connectReader(reader, connectionConfig: connectionConfig, completion: completion)
    }
  }

  /// Disconnects the connected reader (reason `disconnectRequested`; no reconnection follows).
  /// Fails with `notConnected`. The saved reader is kept for reconnect at launch.
  ///
  /// Like every command it waits its turn: behind a running reconnection (which it does not stop —
  /// cancel the `Cancelable` from `didStartReconnect` for that) and behind a running discovery, so
  /// cancel a scan without a timeout first. While it waits, the returned `Cancelable` withdraws it
  /// (the completion gets `canceled`); once sent to the reader it runs to the end, and `cancel`
  /// waits for that and reports `nothingToCancel`. A reader that does not close the link within 10
  /// seconds is let go of all the same, and the disconnect succeeds.
  @discardableResult
  public func disconnectReader(completion: @escaping @Sendable (ReaderError?) -> Void) -> Cancelable {
    submit(.disconnect, .command(completion))
  }

  /// Disconnects the connected reader; see `disconnectReader(completion:)`. Cancelling the task
  /// withdraws the disconnect while it waits its turn.
  public func disconnectReader() async throws(ReaderError) {
    try await awaitResult { completion in
      disconnectReader { error in completion(error.map { .failure($0) } ?? .success(())) }
    }
  }

  /// Reboots the connected reader. The completion reports success once the reader accepted; it then
  /// disconnects (`rebootRequested`), restarts, and — with automatic reconnection — is reconnected.
  /// For M2 and WisePad 3 this restarts the 24-hour security reboot count. Commands issued after it
  /// start once the reader has dropped the link: a `disconnectReader()` right after a reboot waits
  /// for the reconnection and then disconnects (if the reader accepts but keeps the link for 10
  /// seconds, they start anyway). Fails with `notConnected`, `rebootFailed` (refused, the reader
  /// dropped before answering, or no answer within 10 seconds) or `canceled`. The returned
  /// `Cancelable` withdraws the reboot while it waits its turn; once sent, it cannot be taken back.
  @discardableResult
  public func rebootReader(completion: @escaping @Sendable (ReaderError?) -> Void) -> Cancelable {
    submit(.reboot, .command(completion))
  }

  /// Reboots the connected reader; see `rebootReader(completion:)`. Cancelling the task withdraws
  /// the reboot while it waits its turn.
  public func rebootReader() async throws(ReaderError) {
    try await awaitResult { completion in
      rebootReader { error in completion(error.map { .failure($0) } ?? .success(())) }
    }
  }

  // MARK: Software updates

  /// Installs the connected reader's available update (`connectedReader?.availableUpdate`), as
  /// Stripe's `installAvailableUpdate()`: the reader delegate hears `didStartInstallingUpdate`
  /// (with a `Cancelable` unless the update is incremental only), progress, then
  /// `didFinishInstallingUpdate`; the reader stays connected and reports its new version. With
  /// nothing available, `didFinishInstallingUpdate(nil, nil)` follows at once. Like every command it
  /// waits its turn, and commands issued during the install wait for it. The completion gets the
  /// install's error (see `MobileReaderDelegate.reader(_:didFinishInstallingUpdate:error:)`), or
  /// `notConnected`; the returned `Cancelable` withdraws the command while it waits (cancel a running
  /// install with the `Cancelable` from `didStartInstallingUpdate`).
  @discardableResult
  public func installAvailableUpdate(completion: @escaping @Sendable (ReaderError?) -> Void = { _ in }) -> Cancelable {
    submit(.installUpdate, .command(completion))
  }

  /// Installs the connected reader's available update; see `installAvailableUpdate(completion:)`.
  public func installAvailableUpdate() async throws(ReaderError) {
    try await awaitResult { completion in
      installAvailableUpdate { error in completion(error.map { .failure($0) } ?? .success(())) }
    }
  }

  // MARK: Reconnect at launch

  /// Reconnects to the reader saved by the last successful connection, in one call: looks the
  /// serial number up in the store, discovers, connects to the reader with that serial number at
  /// the saved location. `timeout` bounds the search: a reader not found within it ends the launch
  /// with `readerNotFound`; once found, the connect has its own 15-second timeout (plus the install of a
  /// required update, which can take minutes).
  ///
  /// Events: `didStartLaunchReconnect` (or `didFindNoSavedReader`), `didFindSavedReader`, the usual
  /// connection events, then `didFinishLaunchReconnect`. The completion gets the reader, `nil` when
  /// nothing was saved, or `readerNotFound` (not found in time), `storeCorrupt`/`storeUnavailable`,
  /// `canceled`, or the connection's error.
  /// - Parameter delegate: the delegate for the connection, whose other settings are the defaults.
  @discardableResult
  public func reconnectToSavedReader(
    delegate: any MobileReaderDelegate, autoReconnectOnUnexpectedDisconnect: Bool = true,
    timeout: Duration = .seconds(30), completion: @escaping @Sendable (Result<Reader?, ReaderError>) -> Void
  ) -> Cancelable {
    submit(
      .launch(timeout: timeout, autoReconnect: autoReconnectOnUnexpectedDisconnect), .launch(delegate, completion))
  }

  /// Reconnects to the saved reader; see `reconnectToSavedReader(delegate:…completion:)`.
  public func reconnectToSavedReader(
    delegate: any MobileReaderDelegate, autoReconnectOnUnexpectedDisconnect: Bool = true,
    timeout: Duration = .seconds(30)
  ) async throws(ReaderError) -> Reader? {
    try await awaitResult { completion in
      reconnectToSavedReader(
        delegate: delegate, autoReconnectOnUnexpectedDisconnect: autoReconnectOnUnexpectedDisconnect, timeout: timeout,
        completion: completion)
    }
  }

  /// Forgets the saved reader, so the next launch does not reconnect.
  /// - Throws: `storeUnavailable`.
  public func forgetSavedReader() throws(ReaderError) {
    try engine.store.clearLastReader()
  }

  // MARK: Plumbing

  private func submit(_ command: TerminalStateMachine.Command, _ callbacks: TerminalEngine.Callbacks) -> Cancelable {
    let id = jobCounter.withLock { value -> UInt64 in
      defer { value += 1 }
      return value
    }
    let engine = self.engine
    let handle = Cancelable { engine.scheduler.execute { engine.feed(.cancel(id)) } }
    engine.scheduler.execute { engine.submit(id, command, callbacks, cancelable: handle) }
    return handle
  }

  private func awaitResult<T: Sendable>(
    _ start: (@escaping @Sendable (Result<T, ReaderError>) -> Void) -> Cancelable
  ) async throws(ReaderError) -> T {
    let slot = CancelableSlot()
    let result = await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, ReaderError>, Never>) in
        slot.set(start { continuation.resume(returning: $0) })
      }
    } onCancel: {
      slot.cancel()
    }
    return try result.get()
  }
}

/// Bridges task cancellation to a `Cancelable` that may not exist yet when the task is cancelled.
private final class CancelableSlot: Sendable {
  private let state = Locked<(cancelable: Cancelable?, canceled: Bool)>((nil, false))

  func set(_ cancelable: Cancelable) {
    let cancelNow = state.withLock { state -> Bool in
      state.cancelable = cancelable
      return state.canceled
    }
    if cancelNow { cancelable.cancel() }
  }

  func cancel() {
    let cancelable = state.withLock { state -> Cancelable? in
      state.canceled = true
      return state.cancelable
    }
    cancelable?.cancel()
  }
}

/// Feeds discovery updates into an `AsyncThrowingStream`.
private nonisolated final class StreamDiscoveryDelegate: DiscoveryDelegate {
  let continuation: AsyncThrowingStream<[Reader], any Error>.Continuation
  init(continuation: AsyncThrowingStream<[Reader], any Error>.Continuation) { self.continuation = continuation }
  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) { continuation.yield(readers) }
}
