import BlueZ
import Foundation
import ReaderKit
import Synchronization
import Testing

/// A `Terminal` over a `BlueZCentral` on the real clock, against a `BlueZPeer`, with every event it
/// publishes kept in order so a test can wait (bounded) for the one it expects.
final class TerminalRun: Sendable {
  let peer: BlueZPeer
  let central: BlueZCentral
  let terminal: Terminal
  let scheduler = LiveScheduler(label: "BlueZTests")
  private let log = EventLog()

  /// Short windows so vanishing and staleness take a fraction of a second.
  static let configuration = BlueZConfiguration(
    connectTimeout: .seconds(3), vanishAfter: .milliseconds(600), refreshInterval: .milliseconds(150),
    callTimeout: .seconds(5), busRetryInterval: .milliseconds(200))

  init(peer: BlueZPeer, configuration: BlueZConfiguration = TerminalRun.configuration) throws {
    self.peer = peer
    central = try BlueZCentral.open(configuration: configuration, scheduler: scheduler, environment: peer.environment)
    var tuning = DiscoveryTuning()
    tuning.updateInterval = .milliseconds(100)
    tuning.stalenessWindow = .milliseconds(800)
    terminal = Terminal(
      central: central, readerLink: central, scheduler: scheduler, store: InMemoryReaderStore(), tuning: tuning,
      delegateExecutor: .scheduler)
    terminal.addEventObserver { [log] event in log.append(event.kind) }
  }

  var events: [TerminalEvent.Kind] { log.events }

  /// Waits (without blocking a thread: the scheduler's timers need the cooperative pool) until an event
  /// satisfies `predicate`, within `timeout`, and returns it.
  @discardableResult
  func wait(
    for what: String, after mark: Int = 0, timeout: Duration = .seconds(8),
    _ predicate: @escaping @Sendable (TerminalEvent.Kind) -> Bool
  ) async throws -> TerminalEvent.Kind {
    guard let event = await log.first(where: predicate, after: mark, timeout: timeout, scheduler: scheduler) else {
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
  func connect(_ serial: String, autoReconnect: Bool = true) async throws -> Reader {
    let reader = try #require(try await discover([serial]).first { $0.serialNumber == serial })
    let configuration = try BluetoothConnectionConfiguration.Builder(delegate: Delegate(), locationId: "tml_1")
      .setAutoReconnectOnUnexpectedDisconnect(autoReconnect).build()
    let mark = events.count
    terminal.connectReader(reader, connectionConfig: configuration) { (_: Result<Reader, ReaderError>) in }
    try await wait(for: "didConnect", after: mark) { if case .didConnect = $0 { true } else { false } }
    return reader
  }

  func stop() {
    central.close()
    peer.stop()
  }
}

/// Events in order, and the waiters for one that satisfies a predicate.
final class EventLog: Sendable {
  private struct Waiter {
    let predicate: @Sendable (TerminalEvent.Kind) -> Bool
    let continuation: CheckedContinuation<TerminalEvent.Kind?, Never>
  }

  private struct State {
    var events: [TerminalEvent.Kind] = []
    var waiters: [UInt64: Waiter] = [:]
    var next: UInt64 = 0
  }

  private let state = Mutex(State())

  func append(_ event: TerminalEvent.Kind) {
    let ready = state.withLock { state -> [Waiter] in
      state.events.append(event)
      let ids = state.waiters.filter { $0.value.predicate(event) }.map(\.key)
      return ids.compactMap { state.waiters.removeValue(forKey: $0) }
    }
    for waiter in ready { waiter.continuation.resume(returning: event) }
  }

  var events: [TerminalEvent.Kind] { state.withLock { $0.events } }

  /// The first event from index `mark` on, logged or to come, that satisfies `predicate`; nil after
  /// `timeout` on `scheduler`.
  func first(
    where predicate: @escaping @Sendable (TerminalEvent.Kind) -> Bool, after mark: Int, timeout: Duration,
    scheduler: any Scheduler
  ) async -> TerminalEvent.Kind? {
    await withCheckedContinuation { continuation in
      let id = state.withLock { state -> UInt64? in
        if let match = state.events.dropFirst(mark).first(where: predicate) {
          continuation.resume(returning: match)
          return nil
        }
        state.next += 1
        state.waiters[state.next] = Waiter(predicate: predicate, continuation: continuation)
        return state.next
      }
      guard let id else { return }
      scheduler.schedule(after: timeout) { [self] in
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
      }
    }
  }
}

/// A delegate that does nothing: the tests read the event log instead.
final class Delegate: DiscoveryDelegate, MobileReaderDelegate {
  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {}
}

extension Duration {
  fileprivate var inSecondsForWait: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }
}
