import Testing

@testable import ReaderCore

private typealias Action = ConnectionStateMachine.Action

private let serial = "STRM2-0001"
private let stranger = "WPC32-0009"
private let location = "tml_123"
private let discovered = Reader(serialNumber: serial, deviceType: .stripeM2, signalStrength: -40)
private let info = ReaderInfo(deviceSoftwareVersion: "2.3.1", batteryLevel: 0.8, isCharging: false, label: "Counter")
/// `discovered` after connecting with `info` at `location`, built field by field.
private let connectedReader = Reader(
  serialNumber: serial, deviceType: .stripeM2, label: "Counter", deviceSoftwareVersion: "2.3.1", batteryLevel: 0.8,
  isCharging: false, locationId: location, signalStrength: -40)
/// A policy without jitter, so backoff delays are exact: 1, 2, 4, 8, 8, … seconds.
private let exact = ReconnectPolicy(jitter: 0)
private let linkError = ReaderError(.connectionFailed, "the link failed")

private func makeMachine(
  autoReconnect: Bool = true, policy: ReconnectPolicy = exact, seed: UInt64 = 1
) -> ConnectionStateMachine {
  ConnectionStateMachine(autoReconnect: autoReconnect, policy: policy, random: SeededRandom(seed: seed))
}

/// The actions of a command that must succeed; records an issue and returns [] when it fails.
private func succeeded(
  _ result: Result<[Action], ReaderError>, sourceLocation: SourceLocation = #_sourceLocation
) -> [Action] {
  switch result {
  case .success(let actions): return actions
  case .failure(let error):
    Issue.record("expected success, got \(error)", sourceLocation: sourceLocation)
    return []
  }
}

/// The error of a command that must fail.
private func failed(
  _ result: Result<[Action], ReaderError>, sourceLocation: SourceLocation = #_sourceLocation
) -> ReaderError? {
  switch result {
  case .success(let actions):
    Issue.record("expected a failure, got \(actions)", sourceLocation: sourceLocation)
    return nil
  case .failure(let error): return error
  }
}

private func connectedMachine(
  autoReconnect: Bool = true, policy: ReconnectPolicy = exact, seed: UInt64 = 1
) -> ConnectionStateMachine {
  var machine = makeMachine(autoReconnect: autoReconnect, policy: policy, seed: seed)
  _ = machine.connect(discovered, locationId: location)
  _ = machine.linkUp(serialNumber: serial, info: info)
  if machine.connectedReader != connectedReader { Issue.record("test setup: connect did not complete") }
  return machine
}

/// A machine reconnecting after `reason`, with its first attempt under way.
private func reconnectingMachine(
  reason: DisconnectReason = .bluetoothSignalLost, policy: ReconnectPolicy = exact, seed: UInt64 = 1
) -> ConnectionStateMachine {
  var machine = connectedMachine(policy: policy, seed: seed)
  _ = machine.linkDown(serialNumber: serial, reason: reason)
  if !machine.isReconnecting { Issue.record("test setup: no reconnection started") }
  return machine
}

private func reconnectStart(reason: DisconnectReason = .bluetoothSignalLost, policy: ReconnectPolicy = exact)
  -> [Action]
{
  [
    .reconnectStarted(connectedReader, reason: reason), .arm(.reconnectDeadline, after: policy.deadline),
    .openLink(serialNumber: serial), .arm(.reconnectAttempt, after: policy.attemptTimeout),
  ]
}

private func failedReconnect(_ actions: [Action]) -> ReaderError? {
  for case .reconnectFailed(_, let error) in actions { return error }
  return nil
}

private func failedConnect(_ actions: [Action]) -> ReaderError? {
  for case .connectFailed(let error) in actions { return error }
  return nil
}

// MARK: - First connection

@Suite struct ConnectionStateMachineConnectTests {
  @Test func aNewMachineIsNotConnected() {
    let machine = makeMachine()
    #expect(machine.status == .notConnected)
    #expect(machine.connectedReader == nil)
    #expect(!machine.isReconnecting)
  }

  @Test func connectOpensTheLinkAndArmsTheConnectTimer() {
    var machine = makeMachine()
    let actions = succeeded(machine.connect(discovered, locationId: location))
    #expect(actions == [.openLink(serialNumber: serial), .arm(.connect, after: .seconds(15))])
    #expect(machine.status == .connecting)
    #expect(machine.connectedReader == nil, "not connected until the link is up")
  }

  @Test func theConnectTimeoutIsConfigurable() {
    var machine = ConnectionStateMachine(
      autoReconnect: true, policy: exact, connectTimeout: .seconds(3), random: SeededRandom(seed: 1))
    #expect(succeeded(machine.connect(discovered, locationId: location)).last == .arm(.connect, after: .seconds(3)))
  }

  @Test func theLinkComingUpConnectsTheReaderAtItsLocationWithItsDetails() {
    var machine = makeMachine()
    _ = machine.connect(discovered, locationId: location)
    #expect(machine.linkUp(serialNumber: serial, info: info) == [.disarm(.connect), .connected(connectedReader)])
    #expect(machine.status == .connected)
    #expect(machine.connectedReader == connectedReader)
    #expect(machine.connectedReader?.locationId == location)
  }

  @Test func detailsTheReaderDoesNotReportAreKept() {
    var machine = makeMachine()
    var known = discovered
    known.label = "From discovery"
    known.batteryLevel = 0.4
    _ = machine.connect(known, locationId: location)
    _ = machine.linkUp(serialNumber: serial, info: ReaderInfo(deviceSoftwareVersion: "3.0"))
    #expect(machine.connectedReader?.label == "From discovery")
    #expect(machine.connectedReader?.batteryLevel == 0.4)
    #expect(machine.connectedReader?.deviceSoftwareVersion == "3.0")
  }

  @Test func connectWhileConnectedFailsWithAlreadyConnectedAndChangesNothing() {
    var machine = connectedMachine()
    let other = Reader(serialNumber: stranger, deviceType: .wisePad3)
    let error = failed(machine.connect(other, locationId: "tml_other"))
    #expect(error?.code == .alreadyConnected)
    #expect(error?.context["serialNumber"] == serial)
    #expect(machine.status == .connected)
    #expect(machine.connectedReader == connectedReader)
  }

  @Test func connectWhileConnectingFailsWithAlreadyConnected() {
    var machine = makeMachine()
    _ = machine.connect(discovered, locationId: location)
    let error = failed(machine.connect(discovered, locationId: location))
    #expect(error?.code == .alreadyConnected)
    #expect(error?.context["serialNumber"] == serial, "the error names the reader being connected")
    #expect(machine.status == .connecting)
    #expect(machine.linkUp(serialNumber: serial, info: info) == [.disarm(.connect), .connected(connectedReader)])
  }

  @Test func connectWhileReconnectingFailsWithAlreadyConnected() {
    var machine = reconnectingMachine()
    let error = failed(machine.connect(discovered, locationId: location))
    #expect(error?.code == .alreadyConnected)
    #expect(error?.context["serialNumber"] == serial)
    #expect(machine.isReconnecting)
  }

  @Test func theConnectTimeoutAbandonsTheLinkAndFails() {
    var machine = makeMachine()
    _ = machine.connect(discovered, locationId: location)
    let actions = machine.timerFired(.connect)
    #expect(actions.first == .abandonLink(serialNumber: serial))
    #expect(actions.count == 2)
    let error = failedConnect(actions)
    #expect(error?.code == .bluetoothConnectTimedOut)
    #expect(error?.context == ["serialNumber": serial, "timeout": "15"])
    #expect(machine.status == .notConnected)
  }

  @Test func aLinkThatComesUpAfterTheTimeoutIsClosed() {
    var machine = makeMachine()
    _ = machine.connect(discovered, locationId: location)
    _ = machine.timerFired(.connect)
    #expect(machine.linkUp(serialNumber: serial, info: info) == [.closeLink(serialNumber: serial)])
    #expect(machine.status == .notConnected)
  }

  @Test func aLinkFailureFailsTheConnectWithTheLinksError() {
    var machine = makeMachine()
    _ = machine.connect(discovered, locationId: location)
    #expect(
      machine.linkFailed(serialNumber: serial, error: linkError) == [.disarm(.connect), .connectFailed(linkError)])
    #expect(machine.status == .notConnected)
    #expect(machine.timerFired(.connect) == [], "the timer outlived its state")
  }

  @Test func aLinkDropWhileConnectingFailsWithConnectionFailed() {
    var machine = makeMachine()
    _ = machine.connect(discovered, locationId: location)
    let actions = machine.linkDown(serialNumber: serial, reason: .poweredOff)
    #expect(actions.first == .disarm(.connect))
    #expect(failedConnect(actions)?.code == .connectionFailed)
    #expect(failedConnect(actions)?.context["reason"] == "poweredOff")
    #expect(machine.status == .notConnected)
  }

  @Test func linkEventsOfAnotherReaderDoNotDisturbTheConnect() {
    var machine = makeMachine()
    _ = machine.connect(discovered, locationId: location)
    #expect(machine.linkFailed(serialNumber: stranger, error: linkError) == [])
    #expect(machine.linkDown(serialNumber: stranger, reason: .bluetoothSignalLost) == [])
    #expect(machine.linkUp(serialNumber: stranger, info: info) == [.closeLink(serialNumber: stranger)])
    #expect(machine.status == .connecting)
  }

  @Test func cancelConnectAbandonsTheLinkAndFailsWithCanceled() {
    var machine = makeMachine()
    _ = machine.connect(discovered, locationId: location)
    #expect(
      machine.cancelConnect() == [
        .disarm(.connect), .abandonLink(serialNumber: serial), .connectFailed(.canceled("connectReader")),
      ])
    #expect(machine.status == .notConnected)
    #expect(machine.cancelConnect() == nil, "a second cancel has nothing to cancel")
    #expect(machine.linkUp(serialNumber: serial, info: info) == [.closeLink(serialNumber: serial)])
    #expect(machine.timerFired(.connect) == [])
  }

  @Test func cancelConnectWithoutAConnectIsNil() {
    var idle = makeMachine()
    #expect(idle.cancelConnect() == nil)
    var connected = connectedMachine()
    #expect(connected.cancelConnect() == nil)
    #expect(connected.status == .connected)
    var reconnecting = reconnectingMachine()
    #expect(reconnecting.cancelConnect() == nil)
    #expect(reconnecting.isReconnecting)
  }

  @Test func aFailedConnectCanBeRetried() {
    var machine = makeMachine()
    _ = machine.connect(discovered, locationId: location)
    _ = machine.linkFailed(serialNumber: serial, error: linkError)
    #expect(succeeded(machine.connect(discovered, locationId: location)).first == .openLink(serialNumber: serial))
    #expect(machine.linkUp(serialNumber: serial, info: info).last == .connected(connectedReader))
  }
}

// MARK: - Disconnect and reboot

@Suite struct ConnectionStateMachineDisconnectTests {
  @Test func disconnectClosesTheLinkAndCompletesWhenItIsDown() {
    var machine = connectedMachine()
    #expect(
      succeeded(machine.disconnect()) == [
        .closeLink(serialNumber: serial), .arm(.disconnectReply, after: ConnectionStateMachine.replyTimeout),
      ])
    #expect(machine.status == .connected, "connected until the link is really down")
    #expect(
      machine.linkDown(serialNumber: serial, reason: .disconnectRequested) == [
        .disarm(.disconnectReply), .disconnectCompleted(connectedReader),
      ])
    #expect(machine.status == .notConnected)
    #expect(machine.connectedReader == nil)
  }

  @Test func anyLinkDropWhileDisconnectingCompletesTheDisconnectWithoutReconnecting() {
    var machine = connectedMachine()
    _ = machine.disconnect()
    #expect(
      machine.linkDown(serialNumber: serial, reason: .bluetoothSignalLost) == [
        .disarm(.disconnectReply), .disconnectCompleted(connectedReader),
      ])
    #expect(!machine.isReconnecting)
  }

  @Test func disconnectWithoutAReaderFailsWithNotConnected() {
    var machine = makeMachine()
    let error = failed(machine.disconnect())
    #expect(error?.code == .notConnected)
    #expect(error?.context["status"] == "notConnected")
  }

  @Test func disconnectWhileConnectingOrReconnectingFailsWithNotConnected() {
    var connecting = makeMachine()
    _ = connecting.connect(discovered, locationId: location)
    #expect(failed(connecting.disconnect())?.code == .notConnected)
    #expect(connecting.status == .connecting)
    var reconnecting = reconnectingMachine()
    #expect(failed(reconnecting.disconnect())?.context["status"] == "reconnecting")
    #expect(reconnecting.isReconnecting)
  }

  @Test func aLateLinkDropAfterTheDisconnectIsAbsorbed() {
    var machine = connectedMachine()
    _ = machine.disconnect()
    _ = machine.linkDown(serialNumber: serial, reason: .disconnectRequested)
    #expect(machine.linkDown(serialNumber: serial, reason: .disconnectRequested) == [])
    #expect(machine.linkFailed(serialNumber: serial, error: linkError) == [])
    #expect(machine.status == .notConnected)
  }

  @Test func linkEventsOfAnotherReaderWhileConnectedAreIgnored() {
    var machine = connectedMachine()
    #expect(machine.linkDown(serialNumber: stranger, reason: .bluetoothSignalLost) == [])
    #expect(machine.linkFailed(serialNumber: stranger, error: linkError) == [])
    #expect(machine.linkUp(serialNumber: stranger, info: info) == [.closeLink(serialNumber: stranger)])
    #expect(machine.linkUp(serialNumber: serial, info: info) == [], "a duplicate link-up of our own reader")
    #expect(machine.linkFailed(serialNumber: serial, error: linkError) == [])
    #expect(machine.status == .connected)
  }

  @Test func rebootSendsTheRequestAndAnAcceptedRebootReconnectsAfterTheDrop() {
    var machine = connectedMachine()
    #expect(succeeded(machine.reboot()) == rebootRequest)
    #expect(machine.status == .connected)
    #expect(machine.rebootResponse(serialNumber: serial, error: nil) == rebootAccepted)
    #expect(machine.status == .connected)
    #expect(
      machine.linkDown(serialNumber: serial, reason: .rebootRequested)
        == [.disarm(.rebootDrop)] + reconnectStart(reason: .rebootRequested))
    #expect(machine.status == .reconnecting)
  }

  @Test func anAcceptedRebootThatDropsForAnUnknownReasonCountsAsTheReboot() {
    var machine = connectedMachine()
    _ = machine.reboot()
    _ = machine.rebootResponse(serialNumber: serial, error: nil)
    #expect(
      machine.linkDown(serialNumber: serial, reason: .unknown)
        == [.disarm(.rebootDrop)] + reconnectStart(reason: .rebootRequested))
  }

  @Test func anAcceptedRebootWithoutAutoReconnectEndsInDisconnected() {
    var machine = connectedMachine(autoReconnect: false)
    _ = machine.reboot()
    _ = machine.rebootResponse(serialNumber: serial, error: nil)
    #expect(
      machine.linkDown(serialNumber: serial, reason: .rebootRequested) == [
        .disarm(.rebootDrop), .disconnected(connectedReader, reason: .rebootRequested),
      ])
    #expect(machine.status == .notConnected)
  }

  @Test func aRefusedRebootLeavesTheReaderConnected() {
    var machine = connectedMachine()
    _ = machine.reboot()
    let refusal = ReaderError(.readerBusy, "installing an update")
    #expect(
      machine.rebootResponse(serialNumber: serial, error: refusal) == [.disarm(.rebootReply), .rebootAnswered(refusal)])
    #expect(machine.status == .connected)
    #expect(machine.connectedReader == connectedReader)
    #expect(succeeded(machine.reboot()) == rebootRequest, "it can be asked again")
  }

  @Test func aLinkDropBeforeTheRebootAnswerFailsTheRebootThenReconnects() {
    var machine = connectedMachine()
    _ = machine.reboot()
    let actions = machine.linkDown(serialNumber: serial, reason: .bluetoothSignalLost)
    guard actions.first == .disarm(.rebootReply), actions.count > 1, case .rebootAnswered(let error?) = actions[1]
    else {
      Issue.record("expected the reply timer disarmed and a failed reboot answer first, got \(actions)")
      return
    }
    #expect(error.code == .rebootFailed)
    #expect(Array(actions.dropFirst(2)) == reconnectStart())
    #expect(machine.rebootResponse(serialNumber: serial, error: nil) == [], "a late answer is absorbed")
  }

  @Test func aLinkDropBeforeTheRebootAnswerWithoutAutoReconnectDisconnects() {
    var machine = connectedMachine(autoReconnect: false)
    _ = machine.reboot()
    let actions = machine.linkDown(serialNumber: serial, reason: .poweredOff)
    #expect(actions.count == 3)
    #expect(actions.last == .disconnected(connectedReader, reason: .poweredOff))
    #expect(machine.status == .notConnected)
  }

  @Test func rebootWithoutAConnectedReaderFailsWithNotConnected() {
    var machine = makeMachine()
    #expect(failed(machine.reboot())?.code == .notConnected)
    var rebooting = connectedMachine()
    _ = rebooting.reboot()
    #expect(failed(rebooting.reboot())?.code == .notConnected, "one reboot at a time")
  }

  @Test func rebootAnswersThatNobodyWaitsForAreIgnored() {
    var machine = connectedMachine()
    #expect(machine.rebootResponse(serialNumber: serial, error: nil) == [])
    _ = machine.reboot()
    #expect(machine.rebootResponse(serialNumber: stranger, error: nil) == [])
    #expect(machine.rebootResponse(serialNumber: serial, error: nil) == rebootAccepted)
    #expect(machine.rebootResponse(serialNumber: serial, error: nil) == [], "answered once")
  }

  @Test func aRebootRequestTheReaderNeverAnswersFailsAfterTheReplyTimeout() {
    var machine = connectedMachine()
    _ = machine.reboot()
    let actions = machine.timerFired(.rebootReply)
    guard case .rebootAnswered(let error?) = actions.first, actions.count == 1 else {
      Issue.record("expected one failed reboot answer, got \(actions)")
      return
    }
    #expect(error.code == .rebootFailed)
    #expect(error.context["timeout"] == "10")
    #expect(machine.status == .connected)
    #expect(succeeded(machine.reboot()) == rebootRequest, "it can be asked again")
  }

  @Test func aDisconnectTheReaderNeverConfirmsCompletesAfterTheReplyTimeout() {
    var machine = connectedMachine()
    _ = machine.disconnect()
    #expect(
      machine.timerFired(.disconnectReply) == [
        .abandonLink(serialNumber: serial), .disconnectCompleted(connectedReader),
      ])
    #expect(machine.status == .notConnected)
    #expect(machine.linkDown(serialNumber: serial, reason: .disconnectRequested) == [], "a late drop is absorbed")
  }

  @Test func anAcceptedRebootThatNeverDropsCountsAsConnectedAgain() {
    var machine = connectedMachine()
    _ = machine.reboot()
    _ = machine.rebootResponse(serialNumber: serial, error: nil)
    #expect(machine.timerFired(.rebootDrop) == [.rebootNotCarriedOut(connectedReader)])
    #expect(machine.status == .connected)
    #expect(succeeded(machine.disconnect()).first == .closeLink(serialNumber: serial), "commands work on it again")
  }

  @Test func aReconnectionAfterBluetoothDisabledAttemptsAtOnceWhenTheRadioIsAlreadyBack() {
    var machine = connectedMachine()
    let actions = machine.linkDown(serialNumber: serial, reason: .bluetoothDisabled, isRadioOn: true)
    #expect(actions == reconnectStart(reason: .bluetoothDisabled))
    var waiting = connectedMachine()
    let offActions = waiting.linkDown(serialNumber: serial, reason: .bluetoothDisabled, isRadioOn: false)
    #expect(!offActions.contains(.openLink(serialNumber: serial)), "waits for the radio while it is off")
  }
}

private let rebootRequest: [ConnectionStateMachine.Action] = [
  .sendReboot(serialNumber: serial), .arm(.rebootReply, after: ConnectionStateMachine.replyTimeout),
]
private let rebootAccepted: [ConnectionStateMachine.Action] = [
  .disarm(.rebootReply), .rebootAnswered(nil), .arm(.rebootDrop, after: ConnectionStateMachine.replyTimeout),
]

// MARK: - Unexpected disconnects and reconnection

@Suite struct ConnectionStateMachineReconnectTests {
  @Test func anUnexpectedDisconnectStartsReconnecting() {
    var machine = connectedMachine()
    #expect(machine.linkDown(serialNumber: serial, reason: .bluetoothSignalLost) == reconnectStart())
    #expect(machine.status == .reconnecting)
    #expect(machine.isReconnecting)
    #expect(machine.connectedReader == nil)
  }

  @Test(arguments: [DisconnectReason.unknown, .rebootRequested, .securityReboot, .poweredOff, .bluetoothSignalLost])
  func disconnectsTheReaderMayComeBackFromAreReconnected(reason: DisconnectReason) {
    var machine = connectedMachine()
    #expect(ConnectionStateMachine.reconnects(after: reason))
    #expect(machine.linkDown(serialNumber: serial, reason: reason) == reconnectStart(reason: reason))
  }

  @Test(arguments: [DisconnectReason.disconnectRequested, .criticallyLowBattery, .idlePowerDown])
  func disconnectsTheReaderCannotComeBackFromAreNotReconnected(reason: DisconnectReason) {
    var machine = connectedMachine()
    #expect(!ConnectionStateMachine.reconnects(after: reason))
    #expect(machine.linkDown(serialNumber: serial, reason: reason) == [.disconnected(connectedReader, reason: reason)])
    #expect(machine.status == .notConnected)
  }

  @Test(arguments: DisconnectReason.allCases)
  func withoutAutoReconnectEveryDisconnectIsFinal(reason: DisconnectReason) {
    var machine = connectedMachine(autoReconnect: false)
    #expect(machine.linkDown(serialNumber: serial, reason: reason) == [.disconnected(connectedReader, reason: reason)])
    #expect(machine.status == .notConnected)
    #expect(!machine.isReconnecting)
  }

  @Test func aSuccessfulAttemptWinsTheReaderBackAtTheSameLocation() {
    var machine = reconnectingMachine()
    let fresher = ReaderInfo(batteryLevel: 0.7, isCharging: true)
    var expected = connectedReader
    expected.batteryLevel = 0.7
    expected.isCharging = true
    #expect(
      machine.linkUp(serialNumber: serial, info: fresher) == [
        .disarm(.reconnectAttempt), .disarm(.reconnectDeadline), .reconnectSucceeded(expected),
      ])
    #expect(machine.status == .connected)
    #expect(machine.connectedReader == expected)
    #expect(machine.connectedReader?.locationId == location)
  }

  @Test func failedAttemptsBackOffDoublingUpToTheMaximum() {
    var machine = reconnectingMachine(policy: ReconnectPolicy(deadline: .seconds(600), jitter: 0))
    var delays: [Duration] = []
    for attempt in 0..<6 {
      // Alternate the three ways an attempt fails.
      let actions: [Action]
      switch attempt % 3 {
      case 0: actions = machine.linkFailed(serialNumber: serial, error: linkError)
      case 1: actions = machine.timerFired(.reconnectAttempt)
      default: actions = machine.linkDown(serialNumber: serial, reason: .bluetoothSignalLost)
      }
      guard case .arm(.reconnectBackoff, let delay) = actions.last else {
        Issue.record("attempt \(attempt): expected a backoff, got \(actions)")
        return
      }
      delays.append(delay)
      #expect(
        machine.timerFired(.reconnectBackoff) == [
          .openLink(serialNumber: serial), .arm(.reconnectAttempt, after: .seconds(10)),
        ])
    }
    #expect(delays == [1, 2, 4, 8, 8, 8].map { Duration.seconds($0) })
  }

  @Test func eachWayAnAttemptFailsStopsItsTimerOrItsLink() {
    var failing = reconnectingMachine()
    #expect(
      failing.linkFailed(serialNumber: serial, error: linkError) == [
        .disarm(.reconnectAttempt), .arm(.reconnectBackoff, after: .seconds(1)),
      ])
    var timingOut = reconnectingMachine()
    #expect(
      timingOut.timerFired(.reconnectAttempt) == [
        .abandonLink(serialNumber: serial), .arm(.reconnectBackoff, after: .seconds(1)),
      ])
    var dropping = reconnectingMachine()
    #expect(
      dropping.linkDown(serialNumber: serial, reason: .bluetoothSignalLost) == [
        .disarm(.reconnectAttempt), .arm(.reconnectBackoff, after: .seconds(1)),
      ])
  }

  @Test func backoffDelaysDrawTheirJitterFromTheSeededRandomInOrder() {
    let policy = ReconnectPolicy(deadline: .seconds(600))
    for seed: UInt64 in [1, 2, 99] {
      var machine = reconnectingMachine(policy: policy, seed: seed)
      var random = SeededRandom(seed: seed)
      for attempt in 0..<8 {
        let actions = machine.linkFailed(serialNumber: serial, error: linkError)
        let expected = policy.delay(afterAttempt: attempt, unit: random.nextUnit())
        #expect(actions.last == .arm(.reconnectBackoff, after: expected), "seed \(seed), attempt \(attempt)")
        _ = machine.timerFired(.reconnectBackoff)
      }
    }
  }

  @Test func theSameSeedReplaysTheSameReconnection() {
    func run(seed: UInt64) -> [Action] {
      var machine = reconnectingMachine(policy: .default, seed: seed)
      var log: [Action] = []
      for _ in 0..<5 {
        log += machine.linkFailed(serialNumber: serial, error: linkError)
        log += machine.timerFired(.reconnectBackoff)
      }
      return log
    }
    #expect(run(seed: 42) == run(seed: 42))
    #expect(run(seed: 42) != run(seed: 43))
  }

  @Test func theDeadlineDuringAnAttemptFailsTheReconnectThenDisconnects() {
    var machine = reconnectingMachine()
    _ = machine.linkFailed(serialNumber: serial, error: linkError)
    _ = machine.timerFired(.reconnectBackoff)
    let actions = machine.timerFired(.reconnectDeadline)
    #expect(
      Array(actions.prefix(4)) == [
        .disarm(.reconnectAttempt), .disarm(.reconnectBackoff), .disarm(.reconnectDeadline),
        .abandonLink(serialNumber: serial),
      ])
    #expect(actions.count == 6)
    guard case .reconnectFailed(let reader, let error) = actions[4] else {
      Issue.record("expected reconnectFailed before the end, got \(actions)")
      return
    }
    #expect(reader == connectedReader)
    #expect(error.code == .bluetoothConnectTimedOut)
    #expect(error.context["attempts"] == "1")
    #expect(error.context["deadline"] == "60")
    #expect(actions[5] == .disconnected(connectedReader, reason: .bluetoothSignalLost))
    #expect(machine.status == .notConnected)
  }

  @Test func theDeadlineDuringABackoffHasNoLinkToAbandon() {
    var machine = reconnectingMachine()
    _ = machine.linkFailed(serialNumber: serial, error: linkError)
    let actions = machine.timerFired(.reconnectDeadline)
    #expect(!actions.contains(.abandonLink(serialNumber: serial)))
    #expect(failedReconnect(actions)?.code == .bluetoothConnectTimedOut)
    #expect(actions.suffix(1) == [.disconnected(connectedReader, reason: .bluetoothSignalLost)])
  }

  @Test func cancelReconnectFailsWithCanceledThenDisconnectsAndASecondCancelIsNil() {
    var machine = reconnectingMachine()
    #expect(
      machine.cancelReconnect() == [
        .disarm(.reconnectAttempt), .disarm(.reconnectBackoff), .disarm(.reconnectDeadline),
        .abandonLink(serialNumber: serial), .reconnectFailed(connectedReader, .canceled("reconnect")),
        .disconnected(connectedReader, reason: .bluetoothSignalLost),
      ])
    #expect(machine.status == .notConnected)
    #expect(machine.cancelReconnect() == nil)
  }

  @Test func cancelReconnectWithoutAReconnectionIsNil() {
    var idle = makeMachine()
    #expect(idle.cancelReconnect() == nil)
    var connected = connectedMachine()
    #expect(connected.cancelReconnect() == nil)
    #expect(connected.status == .connected)
    var connecting = makeMachine()
    _ = connecting.connect(discovered, locationId: location)
    #expect(connecting.cancelReconnect() == nil)
    #expect(connecting.status == .connecting)
  }

  @Test func lateEventsAfterAGiveUpAreAbsorbed() {
    var machine = reconnectingMachine()
    _ = machine.cancelReconnect()
    #expect(machine.linkUp(serialNumber: serial, info: info) == [.closeLink(serialNumber: serial)])
    #expect(machine.linkDown(serialNumber: serial, reason: .bluetoothSignalLost) == [])
    #expect(machine.linkFailed(serialNumber: serial, error: linkError) == [])
    #expect(machine.radio(isPoweredOn: true) == [])
    for timer in [ConnectionStateMachine.Timer.connect, .reconnectAttempt, .reconnectBackoff, .reconnectDeadline] {
      #expect(machine.timerFired(timer) == [], "\(timer)")
    }
    #expect(machine.status == .notConnected)
  }

  @Test func aLinkUpForAnAbandonedAttemptIsClosedAndTheBackoffGoesOn() {
    var machine = reconnectingMachine()
    _ = machine.timerFired(.reconnectAttempt)
    #expect(machine.linkUp(serialNumber: serial, info: info) == [.closeLink(serialNumber: serial)])
    #expect(machine.status == .reconnecting)
    #expect(machine.timerFired(.reconnectBackoff).first == .openLink(serialNumber: serial))
  }

  @Test func linkEventsOutsideAnAttemptDoNotAdvanceTheReconnection() {
    var machine = reconnectingMachine()
    _ = machine.linkFailed(serialNumber: serial, error: linkError)
    #expect(machine.linkFailed(serialNumber: serial, error: linkError) == [])
    #expect(machine.linkDown(serialNumber: serial, reason: .bluetoothSignalLost) == [])
    #expect(machine.timerFired(.reconnectAttempt) == [])
    #expect(machine.linkFailed(serialNumber: stranger, error: linkError) == [])
    #expect(machine.linkUp(serialNumber: stranger, info: info) == [.closeLink(serialNumber: stranger)])
    #expect(machine.timerFired(.reconnectBackoff).first == .openLink(serialNumber: serial))
    #expect(machine.timerFired(.reconnectBackoff) == [], "the backoff already ended")
  }

  @Test func aLaterDisconnectStartsAFreshReconnection() {
    var machine = reconnectingMachine()
    for _ in 0..<3 {
      _ = machine.linkFailed(serialNumber: serial, error: linkError)
      _ = machine.timerFired(.reconnectBackoff)
    }
    _ = machine.linkUp(serialNumber: serial, info: ReaderInfo())
    #expect(machine.linkDown(serialNumber: serial, reason: .securityReboot) == reconnectStart(reason: .securityReboot))
    #expect(
      machine.linkFailed(serialNumber: serial, error: linkError).last == .arm(.reconnectBackoff, after: .seconds(1)),
      "the backoff starts over")
  }

  @Test func batteryReportsAreIgnoredWhileReconnecting() {
    var machine = reconnectingMachine()
    #expect(machine.battery(serialNumber: serial, level: 0.1, isCharging: false) == [])
  }
}

// MARK: - Bluetooth radio

@Suite struct ConnectionStateMachineRadioTests {
  @Test func aDisconnectBecauseTheRadioIsOffWaitsForTheRadioWithoutAttempting() {
    var machine = connectedMachine()
    #expect(
      machine.linkDown(serialNumber: serial, reason: .bluetoothDisabled) == [
        .reconnectStarted(connectedReader, reason: .bluetoothDisabled), .arm(.reconnectDeadline, after: .seconds(60)),
      ])
    #expect(machine.status == .reconnecting)
    #expect(machine.radio(isPoweredOn: false) == [], "still off: nothing to do")
    #expect(machine.timerFired(.reconnectAttempt) == [])
    #expect(machine.timerFired(.reconnectBackoff) == [])
  }

  @Test func theRadioComingBackStartsAnAttempt() {
    var machine = connectedMachine()
    _ = machine.linkDown(serialNumber: serial, reason: .bluetoothDisabled)
    #expect(
      machine.radio(isPoweredOn: true) == [
        .openLink(serialNumber: serial), .arm(.reconnectAttempt, after: .seconds(10)),
      ])
    #expect(machine.radio(isPoweredOn: true) == [], "already attempting")
    _ = machine.linkUp(serialNumber: serial, info: info)
    #expect(machine.status == .connected)
  }

  @Test func theDeadlineWhileWaitingForTheRadioFailsThenDisconnects() {
    var machine = connectedMachine()
    _ = machine.linkDown(serialNumber: serial, reason: .bluetoothDisabled)
    let actions = machine.timerFired(.reconnectDeadline)
    #expect(!actions.contains(.abandonLink(serialNumber: serial)))
    #expect(failedReconnect(actions)?.code == .bluetoothConnectTimedOut)
    #expect(actions.last == .disconnected(connectedReader, reason: .bluetoothDisabled))
  }

  @Test func theRadioGoingOffDuringAnAttemptAbandonsIt() {
    var machine = reconnectingMachine()
    #expect(machine.radio(isPoweredOn: false) == [.disarm(.reconnectAttempt), .abandonLink(serialNumber: serial)])
    #expect(machine.linkUp(serialNumber: serial, info: info) == [.closeLink(serialNumber: serial)])
    #expect(machine.radio(isPoweredOn: true).first == .openLink(serialNumber: serial))
  }

  @Test func theRadioGoingOffDuringABackoffStopsIt() {
    var machine = reconnectingMachine()
    _ = machine.linkFailed(serialNumber: serial, error: linkError)
    #expect(machine.radio(isPoweredOn: false) == [.disarm(.reconnectBackoff)])
    #expect(machine.timerFired(.reconnectBackoff) == [])
    #expect(machine.radio(isPoweredOn: true).first == .openLink(serialNumber: serial))
  }

  @Test func theRadioOnlyMattersWhileReconnecting() {
    var idle = makeMachine()
    #expect(idle.radio(isPoweredOn: false) == [])
    var connected = connectedMachine()
    #expect(connected.radio(isPoweredOn: false) == [])
    #expect(connected.radio(isPoweredOn: true) == [])
    #expect(connected.status == .connected)
  }

  @Test func cancellingWhileWaitingForTheRadioHasNoLinkToAbandon() {
    var machine = connectedMachine()
    _ = machine.linkDown(serialNumber: serial, reason: .bluetoothDisabled)
    #expect(
      machine.cancelReconnect() == [
        .disarm(.reconnectAttempt), .disarm(.reconnectBackoff), .disarm(.reconnectDeadline),
        .reconnectFailed(connectedReader, .canceled("reconnect")),
        .disconnected(connectedReader, reason: .bluetoothDisabled),
      ])
  }
}

// MARK: - Battery

@Suite struct ConnectionStateMachineBatteryTests {
  private func updated(_ level: Double, charging: Bool = false) -> Reader {
    var reader = connectedReader
    reader.batteryLevel = level
    reader.isCharging = charging
    return reader
  }

  @Test func batteryReportsUpdateTheReader() {
    var machine = connectedMachine()
    #expect(
      machine.battery(serialNumber: serial, level: 0.5, isCharging: true) == [
        .readerUpdated(updated(0.5, charging: true))
      ])
    #expect(machine.connectedReader == updated(0.5, charging: true))
    #expect(machine.connectedReader?.batteryStatus == .nominal)
  }

  @Test func theLowBatteryWarningFiresOnceWhenTheLevelCrossesFifteenPercent() {
    var machine = connectedMachine()
    #expect(machine.battery(serialNumber: serial, level: 0.20, isCharging: false) == [.readerUpdated(updated(0.20))])
    #expect(
      machine.battery(serialNumber: serial, level: 0.14, isCharging: false) == [
        .readerUpdated(updated(0.14)), .lowBatteryWarning(updated(0.14)),
      ])
    #expect(machine.battery(serialNumber: serial, level: 0.10, isCharging: false) == [.readerUpdated(updated(0.10))])
    #expect(machine.battery(serialNumber: serial, level: 0.03, isCharging: false) == [.readerUpdated(updated(0.03))])
  }

  @Test func theWarningFiresAgainAfterTheBatteryRecoveredAndCrossesAgain() {
    var machine = connectedMachine()
    _ = machine.battery(serialNumber: serial, level: 0.12, isCharging: false)
    #expect(
      machine.battery(serialNumber: serial, level: 0.40, isCharging: true) == [
        .readerUpdated(updated(0.40, charging: true))
      ])
    #expect(
      machine.battery(serialNumber: serial, level: 0.11, isCharging: false).last == .lowBatteryWarning(updated(0.11)))
  }

  @Test func aFirstReadingAlreadyBelowTheWarningLevelWarns() {
    var machine = makeMachine()
    _ = machine.connect(discovered, locationId: location)
    _ = machine.linkUp(serialNumber: serial, info: ReaderInfo())
    #expect(machine.battery(serialNumber: serial, level: 0.08, isCharging: false).count == 2)
  }

  @Test func aReaderThatConnectsAlreadyLowWarnsAtOnce() {
    var machine = makeMachine()
    var low = discovered
    low.batteryLevel = 0.1  // What discovery saw does not count as a previous reading of this connection.
    _ = machine.connect(low, locationId: location)
    var expected = connectedReader
    expected.batteryLevel = 0.12
    #expect(
      machine.linkUp(
        serialNumber: serial,
        info: ReaderInfo(deviceSoftwareVersion: "2.3.1", batteryLevel: 0.12, isCharging: false, label: "Counter"))
        == [.disarm(.connect), .connected(expected), .lowBatteryWarning(expected)])
    #expect(machine.battery(serialNumber: serial, level: 0.11, isCharging: false) == [.readerUpdated(updated(0.11))])
  }

  @Test func batteryReportsStillCountWhileADisconnectOrRebootIsPending() {
    var disconnecting = connectedMachine()
    _ = disconnecting.disconnect()
    #expect(
      disconnecting.battery(serialNumber: serial, level: 0.14, isCharging: false) == [
        .readerUpdated(updated(0.14)), .lowBatteryWarning(updated(0.14)),
      ])
    #expect(disconnecting.connectedReader == updated(0.14))
    #expect(
      disconnecting.linkDown(serialNumber: serial, reason: .disconnectRequested) == [
        .disarm(.disconnectReply), .disconnectCompleted(updated(0.14)),
      ])

    var rebooting = connectedMachine()
    _ = rebooting.reboot()
    #expect(
      rebooting.battery(serialNumber: serial, level: 0.5, isCharging: true) == [
        .readerUpdated(updated(0.5, charging: true))
      ])
    _ = rebooting.rebootResponse(serialNumber: serial, error: nil)
    #expect(
      rebooting.battery(serialNumber: serial, level: 0.6, isCharging: true) == [
        .readerUpdated(updated(0.6, charging: true))
      ])
    #expect(rebooting.status == .connected)
  }

  @Test func batteryReportsOfOtherReadersOrWithoutAConnectionAreIgnored() {
    var connected = connectedMachine()
    #expect(connected.battery(serialNumber: stranger, level: 0.1, isCharging: false) == [])
    #expect(connected.connectedReader == connectedReader)
    var idle = makeMachine()
    #expect(idle.battery(serialNumber: serial, level: 0.1, isCharging: false) == [])
    var connecting = makeMachine()
    _ = connecting.connect(discovered, locationId: location)
    #expect(connecting.battery(serialNumber: serial, level: 0.1, isCharging: false) == [])
  }

  @Test func theLatestLevelSurvivesAReconnection() {
    var machine = connectedMachine()
    _ = machine.battery(serialNumber: serial, level: 0.33, isCharging: true)
    _ = machine.linkDown(serialNumber: serial, reason: .bluetoothSignalLost)
    _ = machine.linkUp(serialNumber: serial, info: ReaderInfo())
    #expect(machine.connectedReader == updated(0.33, charging: true))
  }
}
