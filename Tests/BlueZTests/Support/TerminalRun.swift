import BlueZ
import Foundation
import ReaderCore
import ReaderKit
import Testing

/// A `Terminal` over a `BlueZCentral` on the real clock, against a `BlueZPeer`, with every event it
/// publishes kept in order so a test can wait (bounded) for the one it expects.
final class TerminalRun: Sendable {
  let peer: BlueZPeer
  let central: BlueZCentral
  let terminal: Terminal
  let scheduler = LiveScheduler(label: "BlueZTests")
  private let log = Recorder<TerminalEvent.Kind>()

  /// Short windows so vanishing and staleness take a fraction of a second.
  static let configuration = BlueZConfiguration(
    connectTimeout: .seconds(3), vanishAfter: .milliseconds(600), refreshInterval: .milliseconds(150),
    callTimeout: .seconds(5), busRetryInterval: .milliseconds(200))

  /// The delegate of every connection: it keeps the update cancelables the terminal hands out.
  let delegate = Delegate()

  init(
    peer: BlueZPeer, configuration: BlueZConfiguration = TerminalRun.configuration,
    store: any ReaderStore = InMemoryReaderStore(), updateCatalog: (any UpdateCatalog)? = nil
  ) throws {
    self.peer = peer
    central = try BlueZCentral.open(
      configuration: configuration, scheduler: scheduler, environment: peer.environment,
      sha256: { SHA256Checksum.compute($0) })
    var tuning = DiscoveryTuning()
    tuning.updateInterval = .milliseconds(100)
    tuning.stalenessWindow = .milliseconds(800)
    terminal = Terminal(
      central: central, readerLink: central, scheduler: scheduler, store: store, tuning: tuning,
      delegateExecutor: .scheduler, updateCatalog: updateCatalog)
    terminal.addEventObserver { [log] event in log.append(event.kind) }
  }

  var events: [TerminalEvent.Kind] { log.values }

  /// Waits (without blocking a thread: the scheduler's timers need the cooperative pool) until an event
  /// satisfies `predicate`, within `timeout`, and returns it.
  @discardableResult
  func wait(
    for what: String, after mark: Int = 0, timeout: Duration = .seconds(8),
    _ predicate: @escaping @Sendable (TerminalEvent.Kind) -> Bool
  ) async throws -> TerminalEvent.Kind {
    guard let event = await log.first(after: mark, timeout: timeout, scheduler: scheduler, where: predicate) else {
      let names = events.map { "\($0)".prefix(60) }.joined(separator: "; ")
      throw BlueZPeer.Failure(description: "no \(what) within \(timeout); events: \(names)")
    }
    return event
  }

  /// Discovers until `serials` are all listed, and returns them.
  func discover(_ serials: Set<String>) async throws -> [Reader] {
    let configuration = try BluetoothScanDiscoveryConfiguration.Builder().build()
    let mark = events.count
    terminal.discoverReaders(configuration, delegate: Delegate()) { _ in }
    let event = try await wait(for: "readers \(serials.sorted())", after: mark) { event in
      guard case .didUpdateDiscoveredReaders(let readers) = event else { return false }
      return Set(readers.map(\.serialNumber)).isSuperset(of: serials)
    }
    guard case .didUpdateDiscoveredReaders(let readers) = event else { return [] }
    return readers
  }

  /// Discovers `serial` and connects to it.
  func connect(_ serial: String, autoReconnect: Bool = true, policy: ReconnectPolicy = .default) async throws
    -> Reader
  {
    try await outcome(of: startConnect(serial, autoReconnect: autoReconnect, policy: policy)).get()
  }

  /// Discovers `serial` and starts connecting to it; the connect's outcome lands in the returned recorder.
  func startConnect(_ serial: String, autoReconnect: Bool = true, policy: ReconnectPolicy = .default) async throws
    -> Recorder<Result<Reader, ReaderError>>
  {
    let reader = try #require(try await discover([serial]).first { $0.serialNumber == serial })
    let configuration = try BluetoothConnectionConfiguration.Builder(delegate: delegate, locationId: "tml_1")
      .setAutoReconnectOnUnexpectedDisconnect(autoReconnect).setReconnectPolicy(policy).build()
    let outcome = Recorder<Result<Reader, ReaderError>>()
    terminal.connectReader(reader, connectionConfig: configuration) { outcome.append($0) }
    return outcome
  }

  /// Waits (bounded) for a completion that reports into `recorder`, and returns what it reported.
  func outcome<Value: Sendable>(of recorder: Recorder<Value>, timeout: Duration = .seconds(30)) async throws -> Value {
    guard let value = await recorder.first(timeout: timeout, scheduler: scheduler, where: { _ in true }) else {
      let names = events.map { "\($0)".prefix(60) }.joined(separator: "; ")
      throw BlueZPeer.Failure(description: "no completion within \(timeout); events: \(names)")
    }
    return value
  }

  /// Lets `duration` pass on the scheduler (to see that nothing more happens), without blocking a thread.
  func idle(for duration: Duration) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      scheduler.schedule(after: duration) { continuation.resume() }
    }
  }

  func stop() {
    central.close()
    peer.stop()
  }
}

/// A delegate that keeps the cancelables of installs; the tests read the event log for the rest.
nonisolated final class Delegate: DiscoveryDelegate, MobileReaderDelegate {
  private let cancelables = Locked<[Cancelable]>([])

  /// The cancelable of the latest install, if it had one.
  var installCancelable: Cancelable? { cancelables.withLock { $0.last } }

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {}

  func reader(_ reader: Reader, didStartInstallingUpdate update: ReaderSoftwareUpdate, cancelable: Cancelable?) {
    if let cancelable { cancelables.withLock { $0.append(cancelable) } }
  }
}
