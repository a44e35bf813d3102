#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
import ReaderCore

/// The `ReaderLink` of readers that speak MCUmgr's SMP over Bluetooth LE (Zephyr, nRF Connect SDK,
/// Mynewt): reboot is the OS group's reset; a software update is an MCUboot image uploaded through the
/// image group, marked for test, booted with a reset and confirmed once the reader runs it.
///
/// It reaches each reader through the `SMPTransport` the Bluetooth backend hands out for its serial
/// number (`SMPTransportProvider`), and runs one `SMPSessionStateMachine` per reader; every decision is
/// in those machines, this class only performs their actions. Everything runs on `scheduler`: the
/// terminal calls the `ReaderLink` methods there, and transports deliver their events there.
///
/// What the terminal sees:
/// - `reboot`: `rebootResponse` once the reader answers the reset (then the radio's
///   `didDisconnect(reason: .rebootRequested)`, which the backend reports because the link loss was
///   declared expected).
/// - `installUpdate`: `updateProgress` (0 to 0.98, never backwards) then exactly one `updateFinished`.
///   The reset that boots the new image is hidden from the terminal by the backend (the `.restart`
///   expectation): the reader stays "connected" while it restarts, and the update finishes once it runs
///   and confirms the new image. A link loss the update did not ask for ends it without `updateFinished`
///   (the radio reports the loss; the reader keeps its old version, and the next install resumes the
///   upload from the reader's offset).
/// - `cancelUpdate`: honoured until the image is marked for test; `updateFinished(canceled)` comes once
///   the chunk in flight is answered, so the reader has stopped taking chunks. Later, the install runs
///   to its end and reports that.
/// - `flashLEDs` does nothing: SMP has no command for it (a reader could add one in a user group).
public final class SMPReaderLink: ReaderLink, @unchecked Sendable {
  private struct Session {
    var machine: SMPSessionStateMachine
    var transport: any SMPTransport
    var timers: [SMPSessionStateMachine.Timer: ScheduledWork] = [:]
  }

  private let transports: any SMPTransportProvider
  private let scheduler: any Scheduler
  private let sha256: @Sendable ([UInt8]) -> SHA256Checksum
  private let timings: ImageUpgradeTimings
  private let log: (@Sendable (String) -> Void)?
  private var handler: (@Sendable (ReaderLinkEvent) -> Void)?
  private var sessions: [String: Session] = [:]

  /// A link over the transports `transports` hands out, on `scheduler`.
  /// - Parameters:
  ///   - sha256: computes SHA-256 digests (pass `SHA256Checksum.compute` from ReaderKit).
  ///   - timings: how long each step may take.
  ///   - log: receives a line for every frame dropped (a stale or foreign answer), if given.
  public init(
    transports: any SMPTransportProvider, scheduler: any Scheduler,
    sha256: @escaping @Sendable ([UInt8]) -> SHA256Checksum, timings: ImageUpgradeTimings = ImageUpgradeTimings(),
    log: (@Sendable (String) -> Void)? = nil
  ) {
    self.transports = transports
    self.scheduler = scheduler
    self.sha256 = sha256
    self.timings = timings
    self.log = log
  }

  public func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {
    self.handler = handler
  }

  /// Does nothing: SMP has no command to flash a reader's LEDs.
  public func flashLEDs(serialNumber: String) {}

  public func reboot(serialNumber: String) {
    command(serialNumber) { session in
      guard var session else {
        return [.rebootResponse(serialNumber: serialNumber, error: Self.unknown(serialNumber, .rebootFailed))]
      }
      return step(&session) { $0.reboot() }
    }
  }

  public func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?) {
    command(serialNumber) { session in
      guard var session else {
        return [
          .updateFinished(
            serialNumber: serialNumber, error: Self.unknown(serialNumber, .readerSoftwareUpdateFailedInterrupted))
        ]
      }
      let bytes = image.map { [UInt8]($0) }
      return step(&session) { $0.install(image: bytes, version: update.deviceSoftwareVersion) }
    }
  }

  public func cancelUpdate(serialNumber: String) {
    command(serialNumber) { session in
      guard var session else { return [] }
      return step(&session) { $0.cancelInstall() }
    }
  }

  // MARK: Driving

  /// Runs a terminal command against the session of `serialNumber` (created on first use); the events
  /// it yields are delivered as work items of the scheduler, after the command (never from inside it).
  private func command(_ serialNumber: String, _ body: (Session?) -> [ReaderLinkEvent]) {
    assert(scheduler.isCurrent, "the SMP link runs on the terminal's scheduler")
    for event in body(session(for: serialNumber)) {
      scheduler.execute { [weak self] in self?.deliver(event) }
    }
  }

  private func session(for serialNumber: String) -> Session? {
    if let existing = sessions[serialNumber] { return existing }
    guard let transport = transports.smpTransport(forSerialNumber: serialNumber) else { return nil }
    var session = Session(
      machine: SMPSessionStateMachine(serialNumber: serialNumber, timings: timings, sha256: sha256),
      transport: transport)
    sessions[serialNumber] = session
    transport.setEventHandler { [weak self] event in self?.transportEvent(serialNumber, event) }
    if let writeLength = transport.maximumWriteLength {
      _ = step(&session) { $0.transport(.ready(maximumWriteLength: writeLength)) }
    }
    return sessions[serialNumber]
  }

  /// A transport event, in a work item of its own: what it yields is delivered at once, so that (say) the
  /// answer to a reset reaches the terminal before the radio reports the link loss that follows.
  private func transportEvent(_ serialNumber: String, _ event: SMPTransportEvent) {
    assert(scheduler.isCurrent, "transports deliver their events on the terminal's scheduler")
    guard var session = sessions[serialNumber] else { return }
    for event in step(&session, { $0.transport(event) }) { deliver(event) }
  }

  private func timerFired(_ serialNumber: String, _ timer: SMPSessionStateMachine.Timer) {
    guard var session = sessions[serialNumber], session.timers.removeValue(forKey: timer) != nil else { return }
    sessions[serialNumber] = session
    for event in step(&session, { $0.timerFired(timer) }) { deliver(event) }
  }

  /// Feeds one input to the session's machine, performs its actions, stores the session back, and
  /// returns the events to deliver.
  private func step(
    _ session: inout Session, _ input: (inout SMPSessionStateMachine) -> [SMPSessionStateMachine.Action]
  ) -> [ReaderLinkEvent] {
    let serialNumber = session.machine.serialNumber
    let actions = input(&session.machine)
    var events: [ReaderLinkEvent] = []
    for action in actions {
      switch action {
      case .send(let bytes): session.transport.send(bytes)
      case .expectLinkLoss(let expectation): session.transport.expectLinkLoss(expectation)
      case .report(let event): events.append(event)
      case .note(let text): log?(text)
      case .arm(let timer, let delay):
        if let old = session.timers[timer] { scheduler.cancel(old) }
        session.timers[timer] = scheduler.schedule(after: delay) { [weak self] in self?.timerFired(serialNumber, timer)
        }
      case .disarm(let timer):
        if let work = session.timers.removeValue(forKey: timer) { scheduler.cancel(work) }
      }
    }
    sessions[serialNumber] = session
    return events
  }

  private func deliver(_ event: ReaderLinkEvent) {
    handler?(event)
  }

  private static func unknown(_ serialNumber: String, _ code: ReaderError.Code) -> ReaderError {
    ReaderError(
      code, "the Bluetooth backend has no SMP channel to this reader", context: ["serialNumber": serialNumber])
  }
}
