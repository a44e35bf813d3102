import Foundation
public import ReaderCore
import Synchronization

/// A device's NFC reading system: the one place reader sessions run, one at a time.
///
/// It owns the radio and a FIFO line of sessions (`NFCSystemStateMachine`): a session begun while
/// another runs waits its turn; the radio's `NFCSystemPolicy` sets the time limit and whether a second
/// session waits or is refused. Every session call — `begin()` from many threads at once included — is
/// submitted to the system's scheduler, where the system handles them one at a time in submission
/// order; so the line's order is the order in which the calls took effect.
///
/// **One per process by default.** `NFCReaderSystem.shared` is what `NFCNDEFReaderSession`'s Core NFC
/// initializer and `readingAvailable` use. Until an app installs another with `install(_:)`, it runs on
/// the host's own NFC: on Linux a `PCSCNFCRadio` when the pcsc-lite library can be loaded (its
/// `readingAvailable` is true while pcscd runs with a reader plugged in), following the host's
/// `NFCSystemConfiguration` (its defaults when there is no file; when there is one that cannot be
/// used, no radio at all: `readingAvailable` is false and a session ends with
/// `readerErrorUnsupportedFeature` naming the file and line in its message and context, so an
/// administrator's rules are never silently replaced by the defaults); elsewhere, or without
/// pcsc-lite, an `UnavailableNFCRadio` (no capability: `readingAvailable` is false and a session begun
/// anyway ends with `readerErrorUnsupportedFeature`). Tests and simulations pass their own system to
/// the session initializer instead.
///
/// ```swift
/// let (system, radio) = NFCReaderSystem.simulated(seed: 1)       // ReaderSimulator
/// let session = NFCNDEFReaderSession(delegate: reader, invalidateAfterFirstRead: true, system: system)
/// session.begin()
/// ```
public final class NFCReaderSystem: Sendable {
  let engine: NFCSystemEngine
  private let sessionCounter = Atomic<UInt64>(0)
  private static let installed = Locked<NFCReaderSystem?>(nil)

  /// Creates a system over `radio`, running on `scheduler`; the radio must deliver its events on the
  /// same scheduler.
  public init(radio: any NFCRadio, scheduler: any Scheduler) {
    engine = NFCSystemEngine(radio: radio, scheduler: scheduler)
    radio.setEventHandler { [engine] event in engine.handle(event) }
  }

  /// The per-process system: the one installed with `install(_:)`, or one with no NFC capability.
  public static var shared: NFCReaderSystem {
    installed.withLock { installed in
      if let system = installed { return system }
      let scheduler = LiveScheduler<ContinuousClock>(label: "NFCKit.NFCReaderSystem")
      let system = NFCReaderSystem(radio: hostRadio(scheduler: scheduler), scheduler: scheduler)
      installed = system
      return system
    }
  }

  /// The host's NFC radio: PC/SC on Linux when pcsc-lite loads and the configuration file (looked up
  /// under `environment`) can be used, none otherwise.
  static func hostRadio(
    scheduler: any Scheduler, environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> any NFCRadio {
    #if os(Linux)
      let configuration: NFCSystemConfiguration
      do {
        configuration = try NFCSystemConfiguration.load(environment: environment)
      } catch {
        return UnavailableNFCRadio(scheduler: scheduler, reason: configurationFailure(error))
      }
      if let radio = PCSCNFCRadio(configuration: configuration, scheduler: scheduler) { return radio }
    #endif
    return UnavailableNFCRadio(scheduler: scheduler)
  }

  /// Why no session can run on a host whose NFC configuration file cannot be used.
  static func configurationFailure(_ error: NFCSystemConfiguration.Error) -> NFCRadioFailure {
    var context = ["reason": "configuration", "configuration": error.path]
    if error.line > 0 { context["line"] = String(error.line) }
    return .detailed(
      .unsupported, message: "the NFC configuration cannot be used: \(error)", cause: nil, context: context)
  }

  /// Makes `system` the per-process one: sessions created afterwards with Core NFC's initializer run on
  /// it. Sessions already created stay on the system they were created on.
  public static func install(_ system: NFCReaderSystem) {
    installed.withLock { $0 = system }
  }

  /// The radio the system drives.
  public var radio: any NFCRadio { engine.radio }

  /// The scheduler everything runs on.
  public var scheduler: any Scheduler { engine.scheduler }

  /// Whether the system can read NDEF tags at all (a capability; see `NFCNDEFReaderSession.readingAvailable`).
  public var readingAvailable: Bool { engine.radio.isReadingAvailable }

  /// The identifier of the session holding the radio (starting or polling), if any.
  public var runningSession: UInt64? {
    let running = engine.runningSnapshot.load(ordering: .acquiring)
    return running == 0 ? nil : running
  }

  /// How many sessions wait in line.
  public var waitingSessionCount: Int { engine.waitingSnapshot.load(ordering: .acquiring) }

  /// Calls `observer` with every event of every session, on the scheduler, synchronously and in order
  /// — before the delegate call it mirrors. For logs that must be deterministic; returns a token for
  /// `removeEventObserver(_:)`.
  @discardableResult
  public func addEventObserver(_ observer: @escaping @Sendable (NFCReaderEvent) -> Void) -> UInt64 {
    guard let token = engine.addObserver(observer) else { preconditionFailure("a system's events never end") }
    return token
  }

  /// Stops calling an observer.
  public func removeEventObserver(_ token: UInt64) {
    engine.removeObserver(token)
  }

  /// An ordered stream of every session's events from now on; ends when the consumer stops iterating.
  public func events() -> AsyncStream<NFCReaderEvent> {
    let (stream, continuation) = AsyncStream.makeStream(of: NFCReaderEvent.self)
    let token = addEventObserver { continuation.yield($0) }
    continuation.onTermination = { [engine] _ in engine.removeObserver(token) }
    return stream
  }

  func nextSessionID() -> UInt64 {
    sessionCounter.add(1, ordering: .relaxed).newValue
  }
}
