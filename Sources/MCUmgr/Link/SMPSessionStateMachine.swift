import ReaderCore

/// Everything ReaderKit does with one reader over SMP, as a pure machine: the SMP client, the one
/// operation running (a reboot or an install) and the operations waiting behind it (in order), and the
/// link as the transport reports it. `SMPReaderLink` feeds it the terminal's commands, the transport's
/// events and its timers, and performs what comes back.
///
/// - Reboot: the link loss is declared expected (`.reboot`), then the OS reset is sent. Its answer is
///   `rebootResponse(nil)`; a refusal, a malformed answer or no answer is `rebootResponse(error)` with
///   `rebootFailed` and the expectation withdrawn. A link that drops while the reset is in flight counts
///   as accepted (the reader went down as asked; the transport reports `.down` before the radio reports
///   the loss, so the answer comes first).
/// - Install: see `ImageUpgradeStateMachine`; its progress and its end are reported as
///   `updateProgress` and `updateFinished`, and nothing when it ends with the link.
/// - A cancel stops an install running (as far as it can) or drops one still waiting, which then
///   finishes with `canceled`.
package struct SMPSessionStateMachine {
  package enum Timer: Hashable, Sendable {
    /// The timeout of the request in flight.
    case response
    /// How long a reader restarting into a new image has to come back.
    case restart
  }

  package enum Action: Equatable, Sendable {
    /// One write to the transport.
    case send([UInt8])
    case arm(Timer, after: Duration)
    case disarm(Timer)
    /// Tell the transport how to read the next loss of the link.
    case expectLinkLoss(SMPLinkLossExpectation?)
    /// Hand the terminal this event.
    case report(ReaderLinkEvent)
    /// Something worth a line in a log (a frame that was dropped, and why).
    case note(String)
  }

  private enum Operation {
    case reboot(SMPClientStateMachine.RequestID?)
    case install(ImageUpgradeStateMachine, request: SMPClientStateMachine.RequestID?)
  }

  private enum Waiting {
    case reboot
    case install(image: [UInt8]?, version: String)
  }

  package let serialNumber: String
  private let timings: ImageUpgradeTimings
  private let sha256: @Sendable ([UInt8]) -> SHA256Checksum
  private var client: SMPClientStateMachine
  private var current: Operation?
  private var waiting: [Waiting] = []

  /// A session with the reader `serialNumber`.
  package init(
    serialNumber: String, timings: ImageUpgradeTimings, sha256: @escaping @Sendable ([UInt8]) -> SHA256Checksum,
    firstSequence: UInt8 = 0
  ) {
    self.serialNumber = serialNumber
    self.timings = timings
    self.sha256 = sha256
    client = SMPClientStateMachine(firstSequence: firstSequence)
  }

  /// Whether nothing runs or waits.
  package var isIdle: Bool { current == nil && waiting.isEmpty }

  // MARK: Commands

  package mutating func reboot() -> [Action] {
    waiting.append(.reboot)
    return startNext()
  }

  package mutating func install(image: [UInt8]?, version: String) -> [Action] {
    waiting.append(.install(image: image, version: version))
    return startNext()
  }

  package mutating func cancelInstall() -> [Action] {
    if let index = waiting.firstIndex(where: { if case .install = $0 { true } else { false } }) {
      waiting.remove(at: index)
      return [.report(.updateFinished(serialNumber: serialNumber, error: ReaderError.canceled("installUpdate")))]
    }
    guard case .install(var machine, let request) = current else { return [] }
    let steps = machine.cancel()
    current = .install(machine, request: request)
    return run(steps)
  }

  // MARK: Transport and timers

  package mutating func transport(_ event: SMPTransportEvent) -> [Action] {
    switch event {
    case .ready(let writeLength):
      var actions = perform(client.linkReady(maximumWriteLength: writeLength))
      if case .install(var machine, let request) = current {
        let steps = machine.linkReady(writeLength: writeLength)
        current = .install(machine, request: request)
        actions += run(steps)
      }
      return actions + startNext()
    case .received(let bytes):
      return perform(client.received(bytes))
    case .sendFailed(let bytes, let cause):
      return perform(client.writeFailed(bytes, cause: cause))
    case .down:
      var actions = perform(client.linkDown())
      switch current {
      case .reboot(.some):
        // The reader went down with the reset in flight: it did as asked.
        current = nil
        actions.append(.report(.rebootResponse(serialNumber: serialNumber, error: nil)))
      case .install(var machine, let request):
        let steps = machine.linkDown()
        current = .install(machine, request: request)
        actions += run(steps)
      case .reboot(nil), nil:
        break
      }
      return actions + startNext()
    }
  }

  package mutating func timerFired(_ timer: Timer) -> [Action] {
    switch timer {
    case .response:
      return perform(client.timeoutFired())
    case .restart:
      guard case .install(var machine, let request) = current else { return [] }
      let steps = machine.restartTimerFired()
      current = .install(machine, request: request)
      return run(steps)
    }
  }

  // MARK: Operations

  private mutating func startNext() -> [Action] {
    guard current == nil, !waiting.isEmpty else { return [] }
    switch waiting.removeFirst() {
    case .reboot:
      guard client.isLinkUp else {
        return [.report(.rebootResponse(serialNumber: serialNumber, error: notReady(.rebootFailed)))] + startNext()
      }
      current = .reboot(nil)
      let (id, steps) = client.submit(.reset(timeout: timings.request))
      current = .reboot(id)
      return [.expectLinkLoss(.reboot)] + perform(steps)
    case .install(let image, let version):
      var machine = ImageUpgradeStateMachine(
        timings: timings, sha256: sha256, context: ["serialNumber": serialNumber, "version": version])
      let steps = machine.start(image: image, writeLength: client.linkWriteLength)
      current = .install(machine, request: nil)
      return run(steps)
    }
  }

  /// Performs the client's actions; completions go to the operation that made the request.
  private mutating func perform(_ steps: [SMPClientStateMachine.Action]) -> [Action] {
    var actions: [Action] = []
    for step in steps {
      switch step {
      case .send(let bytes): actions.append(.send(bytes))
      case .armTimeout(let after): actions.append(.arm(.response, after: after))
      case .disarmTimeout: actions.append(.disarm(.response))
      case .discarded(let why): actions.append(.note("dropped from \(serialNumber): \(why)"))
      case .completed(let id, let result): actions += completed(id, result)
      }
    }
    return actions
  }

  private mutating func completed(
    _ id: SMPClientStateMachine.RequestID, _ result: Result<CBORValue, SMPFailure>
  ) -> [Action] {
    // A link loss reaches the operation through `.down`, not through the requests it fails.
    if case .failure(.linkDown) = result { return [] }
    switch current {
    case .reboot(id?):
      current = nil
      switch result {
      case .success:
        return [.report(.rebootResponse(serialNumber: serialNumber, error: nil))] + startNext()
      case .failure(let failure):
        let error = failure.readerError(.rebootFailed, "the reset", context: ["serialNumber": serialNumber])
        return [.expectLinkLoss(nil), .report(.rebootResponse(serialNumber: serialNumber, error: error))]
          + startNext()
      }
    case .install(var machine, let request) where request == id:
      let steps = machine.answered(result)
      current = .install(machine, request: nil)
      return run(steps)
    default:
      return []
    }
  }

  /// Performs the install machine's actions.
  private mutating func run(_ steps: [ImageUpgradeStateMachine.Action]) -> [Action] {
    var actions: [Action] = []
    var ended = false
    for step in steps {
      switch step {
      case .request(let request):
        let (id, clientSteps) = client.submit(request)
        if case .install(let machine, _) = current { current = .install(machine, request: id) }
        actions += perform(clientSteps)
      case .progress(let value):
        actions.append(.report(.updateProgress(serialNumber: serialNumber, progress: value)))
      case .expectLinkLoss(let expectation): actions.append(.expectLinkLoss(expectation))
      case .armRestartTimer(let after): actions.append(.arm(.restart, after: after))
      case .disarmRestartTimer: actions.append(.disarm(.restart))
      case .finished(let error):
        actions.append(.report(.updateFinished(serialNumber: serialNumber, error: error)))
        ended = true
      case .abandoned:
        ended = true
      }
    }
    if ended {
      current = nil
      actions += startNext()
    }
    return actions
  }

  private func notReady(_ code: ReaderError.Code) -> ReaderError {
    ReaderError(code, "the reader's SMP channel is not ready (no link)", context: ["serialNumber": serialNumber])
  }
}
