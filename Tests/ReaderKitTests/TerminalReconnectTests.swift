import ReaderKit
import ReaderSimulator
import Testing

/// A way to lose a connected reader, with the reader it is tried on.
enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case bluetoothSignalLost, poweredOff, bluetoothDisabled, criticallyLowBattery, securityReboot, idlePowerDown, unknown

  var testDescription: String { rawValue }

  var reason: DisconnectReason {
    switch self {
    case .bluetoothSignalLost: .bluetoothSignalLost
    case .poweredOff: .poweredOff
    case .bluetoothDisabled: .bluetoothDisabled
    case .criticallyLowBattery: .criticallyLowBattery
    case .securityReboot: .securityReboot
    case .idlePowerDown: .idlePowerDown
    case .unknown: .unknown
    }
  }

  /// The WisePad 3 runs on battery (it can drain and idle); the M2 sits on its dock.
  var serial: String {
    switch self {
    case .criticallyLowBattery, .idlePowerDown: Fixture.wisePad
    default: Fixture.m2
    }
  }

  /// Whether the reader is still there to be won back after the fault.
  var readerComesBack: Bool { self != .criticallyLowBattery && self != .idlePowerDown }

  /// Inflicts the fault and runs the clock until the reader has dropped (idle power-down waits 10 h).
  func inflict(on h: Harness) {
    switch self {
    case .bluetoothSignalLost: h.world.setInRange(serial, false)
    case .poweredOff: h.world.setPower(serial, on: false)
    case .bluetoothDisabled: h.world.setRadio(on: false)
    case .criticallyLowBattery: h.world.setBattery(serial, level: 0.04)
    case .securityReboot: h.world.forceSecurityReboot(serial)
    case .idlePowerDown: h.clock.advance(by: SimulatedBluetoothCentral.idlePowerDownInterval)
    case .unknown: h.world.dropLink(serial)
    }
    h.clock.runUntilIdle()
  }

  /// Undoes the fault where a person or time can (the reboot undoes itself).
  func repair(on h: Harness) {
    switch self {
    case .bluetoothSignalLost: h.world.setInRange(serial, true)
    case .poweredOff: h.world.setPower(serial, on: true)
    case .bluetoothDisabled: h.world.setRadio(on: true)
    case .criticallyLowBattery, .securityReboot, .idlePowerDown, .unknown: break
    }
  }
}

extension ReaderRecorder {
  /// The calls other than battery reports.
  var connectionCalls: [Call] {
    calls.filter {
      switch $0 {
      case .didReportBattery, .lowBatteryWarning: false
      default: true
      }
    }
  }
}

extension EventLog {
  /// The delegate calls the stream reports, in the recorder's terms.
  var delegateCalls: [ReaderRecorder.Call] {
    kinds.compactMap { kind -> ReaderRecorder.Call? in
      switch kind {
      case .didDisconnect(let reader, let reason) where reason != .disconnectRequested:
        .didDisconnect(reader.serialNumber, reason)
      case .didStartReconnect(let reader, let reason): .didStartReconnect(reader.serialNumber, reason)
      case .readerDidSucceedReconnect(let reader): .didSucceedReconnect(reader.serialNumber)
      case .readerDidFailReconnect(let reader, _): .didFailReconnect(reader.serialNumber)
      case .didReportBatteryLevel(let reader): .didReportBattery(reader.serialNumber, reader.batteryLevel ?? 0)
      case .readerDidReportLowBatteryWarning(let reader): .lowBatteryWarning(reader.serialNumber)
      default: nil
      }
    }
  }
}

@Suite struct TerminalReconnectTests {
  // MARK: Unexpected disconnects

  @Test(arguments: Fault.allCases)
  func unexpectedDisconnectWithoutAutoReconnectReportsOnlyDidDisconnect(fault: Fault) throws {
    let h = Harness()
    guard let connection = try h.connect(fault.serial, autoReconnect: false) else { return }
    fault.inflict(on: h)
    #expect(connection.delegate.connectionCalls == [.didDisconnect(fault.serial, fault.reason)])
    #expect(h.terminal.connectionStatus == .notConnected)
    #expect(h.terminal.connectedReader == nil)

    fault.repair(on: h)
    h.clock.advance(by: .seconds(300))
    #expect(connection.delegate.connectionCalls == [.didDisconnect(fault.serial, fault.reason)])
    #expect(!h.log.names.contains("didStartReconnect"))
    #expect(h.log.delegateCalls == connection.delegate.calls)
  }

  @Test(arguments: [Fault.criticallyLowBattery, .idlePowerDown])
  func readerThatShutItselfDownIsNotReconnected(fault: Fault) throws {
    let h = Harness()
    guard let connection = try h.connect(fault.serial) else { return }
    let requests = h.world.connectRequestCount(fault.serial)
    fault.inflict(on: h)
    h.clock.advance(by: .seconds(300))
    #expect(connection.delegate.connectionCalls == [.didDisconnect(fault.serial, fault.reason)])
    #expect(h.world.connectRequestCount(fault.serial) == requests)
    #expect(h.terminal.connectionStatus == .notConnected)
  }

  @Test(arguments: [Fault.bluetoothSignalLost, .poweredOff, .bluetoothDisabled, .securityReboot, .unknown])
  func autoReconnectWinsTheReaderBackAtTheSameLocation(fault: Fault) throws {
    let h = Harness()
    guard let connection = try h.connect(fault.serial) else { return }
    let mark = h.log.count
    fault.inflict(on: h)
    #expect(connection.delegate.connectionCalls == [.didStartReconnect(fault.serial, fault.reason)])
    #expect(h.terminal.connectionStatus == .reconnecting)
    #expect(h.terminal.connectedReader == nil)
    #expect(connection.delegate.reconnectCancelables.count == 1)

    h.clock.advance(by: .seconds(5))
    fault.repair(on: h)
    h.clock.advance(by: .seconds(30))
    #expect(
      connection.delegate.connectionCalls == [
        .didStartReconnect(fault.serial, fault.reason), .didSucceedReconnect(fault.serial),
      ])
    #expect(h.terminal.connectionStatus == .connected)
    #expect(h.terminal.connectedReader?.serialNumber == fault.serial)
    #expect(h.terminal.connectedReader?.locationId == Fixture.location)
    #expect(connection.delegate.readers.allSatisfy { $0.locationId == Fixture.location })
    #expect(h.log.statusChanges.suffix(2) == [.reconnecting, .connected])
    #expect(connection.delegate.reconnectCancelables.first?.isCompleted == true)
    #expect(h.log.delegateCalls == connection.delegate.calls)
    #expect(h.log.since(mark).allSatisfy { $0.name != "didConnect" })

    // The same delegate hears about the next loss.
    h.world.setInRange(fault.serial, false)
    h.clock.runUntilIdle()
    #expect(connection.delegate.connectionCalls.last == .didStartReconnect(fault.serial, .bluetoothSignalLost))
  }

  @Test func reconnectGivesUpAtTheDeadlineThenDisconnectsAndGoesQuiet() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    h.world.setInRange(Fixture.m2, false)  // For good.
    h.clock.runUntilIdle()
    #expect(connection.delegate.connectionCalls == [.didStartReconnect(Fixture.m2, .bluetoothSignalLost)])

    h.clock.advance(by: .seconds(60) - .milliseconds(1))
    #expect(connection.delegate.connectionCalls == [.didStartReconnect(Fixture.m2, .bluetoothSignalLost)])
    #expect(h.terminal.connectionStatus == .reconnecting)

    h.clock.advance(by: .milliseconds(1))
    #expect(
      connection.delegate.connectionCalls == [
        .didStartReconnect(Fixture.m2, .bluetoothSignalLost), .didFailReconnect(Fixture.m2),
        .didDisconnect(Fixture.m2, .bluetoothSignalLost),
      ])
    #expect(h.terminal.connectionStatus == .notConnected)
    let failure = h.log.kinds.compactMap { if case .readerDidFailReconnect(_, let error) = $0 { error } else { nil } }
    #expect(failure.map(\.code) == [.bluetoothConnectTimedOut])
    #expect(h.log.namesWithoutStatus.suffix(2) == ["readerDidFailReconnect", "didDisconnect"])

    // Nothing after the final didDisconnect, even when the reader comes back.
    let requests = h.world.connectRequestCount(Fixture.m2)
    let events = h.log.count
    h.world.setInRange(Fixture.m2, true)
    h.clock.advance(by: .seconds(3600))
    #expect(h.world.connectRequestCount(Fixture.m2) == requests)
    #expect(h.log.count == events)
    #expect(connection.delegate.connectionCalls.count == 3)
  }

  @Test func reconnectDeadlineIsConfigurable() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2, policy: ReconnectPolicy(deadline: .seconds(20))) else { return }
    h.world.setPower(Fixture.m2, on: false)
    h.clock.advance(by: .seconds(20) - .milliseconds(1))
    #expect(connection.delegate.connectionCalls.count == 1)
    h.clock.advance(by: .milliseconds(1))
    #expect(
      connection.delegate.connectionCalls.suffix(2) == [
        .didFailReconnect(Fixture.m2), .didDisconnect(Fixture.m2, .poweredOff),
      ])
  }

  @Test func reconnectAttemptsFollowTheBackoffScheduleWithJitterFromTheSeed() throws {
    func attemptTimes(seed: UInt64) throws -> [Duration] {
      let h = Harness(seed: seed)
      guard try h.connect(Fixture.m2) != nil else { return [] }
      let lost = h.clock.elapsed
      let before = h.world.connectRequestCount(Fixture.m2)
      h.world.setInRange(Fixture.m2, false)
      h.clock.runUntilIdle()
      var times: [Duration] = h.world.connectRequestCount(Fixture.m2) > before ? [.zero] : []
      var seen = h.world.connectRequestCount(Fixture.m2)
      // 70 s in steps of 10 ms, counted: a clock that stops moving ends the loop too.
      for _ in 0..<7_000 {
        h.clock.advance(by: .milliseconds(10))
        let count = h.world.connectRequestCount(Fixture.m2)
        if count > seen { times.append(h.clock.elapsed - lost) }
        seen = count
      }
      return times
    }
    let policy = ReconnectPolicy.default
    let times = try attemptTimes(seed: 7)
    // The first attempt at once; each later one after a 10 s attempt and a jittered, doubling pause.
    #expect(times.first == .zero)
    #expect((4...6).contains(times.count))
    for (index, (earlier, later)) in zip(times, times.dropFirst()).enumerated() {
      let base = min(policy.initialDelay * (1 << index), policy.maximumDelay)
      let gap = later - earlier
      #expect(gap >= policy.attemptTimeout + base * 0.5 - .milliseconds(10), "attempt \(index + 1)")
      #expect(gap <= policy.attemptTimeout + base * 1.5 + .milliseconds(10), "attempt \(index + 1)")
    }
    #expect(try #require(times.last) < policy.deadline)
    #expect(try attemptTimes(seed: 7) == times)
    #expect(try attemptTimes(seed: 8) != times)
  }

  // MARK: Cancel

  enum Stage: String, CaseIterable, Sendable { case attempting, backingOff, waitingForRadio }

  @Test(arguments: Stage.allCases)
  func cancelAtAnyStageFailsThenDisconnects(stage: Stage) throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    h.world.setInRange(Fixture.m2, false)
    h.clock.runUntilIdle()
    switch stage {
    case .attempting: h.clock.advance(by: .seconds(5))
    case .backingOff: h.clock.advance(by: .milliseconds(10_200))  // The first attempt timed out at 10 s.
    case .waitingForRadio:
      h.world.setRadio(on: false)
      h.clock.advance(by: .seconds(5))
    }
    #expect(h.terminal.connectionStatus == .reconnecting)
    guard let reconnect = connection.delegate.reconnectCancelables.first else { return }
    let answers = Outcome<CancelResult>()
    let callsWhenAnswered = Outcome<Int>()
    reconnect.cancelAndReport { [delegate = connection.delegate] result in
      answers.record(result)
      callsWhenAnswered.record(delegate.calls.count)
    }
    reconnect.cancelAndReport(answers.record)
    h.clock.runUntilIdle()

    #expect(
      connection.delegate.connectionCalls == [
        .didStartReconnect(Fixture.m2, .bluetoothSignalLost), .didFailReconnect(Fixture.m2),
        .didDisconnect(Fixture.m2, .bluetoothSignalLost),
      ])
    #expect(answers.all == [.canceled, .canceled])
    #expect(callsWhenAnswered.all == [3])  // The cancel completion runs after didDisconnect.
    #expect(h.terminal.connectionStatus == .notConnected)
    let failure = h.log.kinds.compactMap { if case .readerDidFailReconnect(_, let error) = $0 { error } else { nil } }
    #expect(failure.map(\.code) == [.canceled])

    // No attempt after the cancel, not even when the reader and the radio come back.
    let requests = h.world.connectRequestCount(Fixture.m2)
    h.world.setRadio(on: true)
    h.world.setInRange(Fixture.m2, true)
    h.clock.advance(by: .seconds(120))
    #expect(h.world.connectRequestCount(Fixture.m2) == requests)
    #expect(connection.delegate.connectionCalls.count == 3)
    reconnect.cancelAndReport(answers.record)
    #expect(answers.all == [.canceled, .canceled, .canceled])
  }

  @Test func cancelFromInsideDidStartReconnectStopsTheReconnection() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    connection.delegate.onStartReconnect { cancelable in cancelable.cancel() }
    h.world.setPower(Fixture.m2, on: false)
    h.clock.runUntilIdle()
    #expect(
      connection.delegate.connectionCalls == [
        .didStartReconnect(Fixture.m2, .poweredOff), .didFailReconnect(Fixture.m2),
        .didDisconnect(Fixture.m2, .poweredOff),
      ])
    #expect(h.terminal.connectionStatus == .notConnected)
  }

  @Test func cancellingAReconnectionThatSucceededSaysNothingToCancel() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    h.world.walkAway(Fixture.m2, for: .seconds(3))
    h.clock.advance(by: .seconds(30))
    #expect(connection.delegate.connectionCalls.last == .didSucceedReconnect(Fixture.m2))
    let answer = Outcome<CancelResult>()
    connection.delegate.reconnectCancelables.first?.cancelAndReport(answer.record)
    h.clock.advance(by: .seconds(30))
    #expect(answer.all == [.nothingToCancel])
    #expect(h.terminal.connectionStatus == .connected)
  }

  @Test func staleReconnectHandleDoesNotCancelALaterReconnection() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    // While the app hears of the success, the reader drops again and the app cancels the old handle:
    // the cancel is for a reconnection that has already ended, not for the one that is starting.
    connection.delegate.onSucceedReconnect { [world = h.world, delegate = connection.delegate] in
      world.setInRange(Fixture.m2, false)
      delegate.reconnectCancelables.first?.cancel()
    }
    h.world.walkAway(Fixture.m2, for: .seconds(3))
    h.clock.advance(by: .seconds(30))
    #expect(connection.delegate.reconnectCancelables.first?.isCompleted == true)
    #expect(
      connection.delegate.connectionCalls == [
        .didStartReconnect(Fixture.m2, .bluetoothSignalLost), .didSucceedReconnect(Fixture.m2),
        .didStartReconnect(Fixture.m2, .bluetoothSignalLost),
      ])
    #expect(h.terminal.connectionStatus == .reconnecting)
    let answer = Outcome<CancelResult>()
    connection.delegate.reconnectCancelables.first?.cancelAndReport(answer.record)
    #expect(answer.all == [.nothingToCancel])
  }

  // MARK: Bluetooth off

  @Test func reconnectWaitsForTheRadioWithoutAttemptingThenReconnects() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    let requests = h.world.connectRequestCount(Fixture.m2)
    h.world.setRadio(on: false)
    h.clock.advance(by: .seconds(50))
    #expect(h.world.connectRequestCount(Fixture.m2) == requests)
    #expect(h.terminal.connectionStatus == .reconnecting)

    h.world.setRadio(on: true)
    h.clock.advance(by: .seconds(2))
    #expect(h.world.connectRequestCount(Fixture.m2) == requests + 1)
    #expect(
      connection.delegate.connectionCalls == [
        .didStartReconnect(Fixture.m2, .bluetoothDisabled), .didSucceedReconnect(Fixture.m2),
      ])
    #expect(h.terminal.connectionStatus == .connected)
  }

  @Test func radioOffForGoodFailsTheReconnectionAtTheDeadlineWithoutAttempts() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    let requests = h.world.connectRequestCount(Fixture.m2)
    h.world.setRadio(on: false)
    h.clock.advance(by: .seconds(60) - .milliseconds(1))
    #expect(connection.delegate.connectionCalls == [.didStartReconnect(Fixture.m2, .bluetoothDisabled)])
    h.clock.advance(by: .milliseconds(1))
    #expect(
      connection.delegate.connectionCalls == [
        .didStartReconnect(Fixture.m2, .bluetoothDisabled), .didFailReconnect(Fixture.m2),
        .didDisconnect(Fixture.m2, .bluetoothDisabled),
      ])
    #expect(h.world.connectRequestCount(Fixture.m2) == requests)
  }

  @Test func radioTurnedOffDuringAReconnectionStopsTheAttemptsUntilItReturns() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    h.world.setInRange(Fixture.m2, false)
    h.clock.advance(by: .seconds(3))
    h.world.setRadio(on: false)
    h.clock.runUntilIdle()
    let requests = h.world.connectRequestCount(Fixture.m2)
    h.world.setInRange(Fixture.m2, true)
    h.clock.advance(by: .seconds(40))
    #expect(h.world.connectRequestCount(Fixture.m2) == requests)
    h.world.setRadio(on: true)
    h.clock.advance(by: .seconds(3))
    #expect(connection.delegate.connectionCalls.last == .didSucceedReconnect(Fixture.m2))
    #expect(h.world.connectRequestCount(Fixture.m2) == requests + 1)
  }

  // MARK: Commands during a reconnection

  @Test func commandsIssuedWhileReconnectingWaitUntilTheReconnectionEnds() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    h.world.walkAway(Fixture.m2, for: .seconds(20))
    h.clock.advance(by: .seconds(1))
    #expect(h.terminal.connectionStatus == .reconnecting)

    let scan = Outcome<ReaderError?>()
    let scanDelegate = DiscoveryRecorder(clock: h.clock)
    let discovery = h.terminal.discoverReaders(try Harness.scan, delegate: scanDelegate, completion: scan.record)
    let disconnected = Outcome<ReaderError?>()
    h.terminal.disconnectReader(completion: disconnected.record)
    h.clock.advance(by: .seconds(5))
    #expect(h.log.kinds.contains(.didQueueCommand(command: "discoverReaders", position: 1)))
    #expect(h.log.kinds.contains(.didQueueCommand(command: "disconnectReader", position: 2)))
    #expect(scanDelegate.updates.isEmpty)

    // A waiting command can be cancelled while it waits.
    discovery.cancel()
    h.clock.runUntilIdle()
    #expect(scan.value??.code == .canceled)
    #expect(disconnected.count == 0)
    #expect(h.terminal.connectionStatus == .reconnecting)

    // The reader is back after 20 s; once reconnected, the disconnect runs.
    h.clock.advance(by: .seconds(30))
    #expect(connection.delegate.connectionCalls.contains(.didSucceedReconnect(Fixture.m2)))
    #expect(disconnected.value == .some(nil))
    #expect(h.terminal.connectionStatus == .notConnected)
    let names = h.log.namesWithoutStatus
    #expect(
      try #require(names.lastIndex(of: "readerDidSucceedReconnect")) < #require(names.lastIndex(of: "didDisconnect")))
  }

  @Test func commandWaitingOnAFailedReconnectionRunsAfterTheFinalDisconnect() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    h.world.setPower(Fixture.m2, on: false)
    h.clock.advance(by: .seconds(1))
    let disconnected = Outcome<ReaderError?>()
    h.terminal.disconnectReader(completion: disconnected.record)
    h.clock.advance(by: .seconds(58))
    #expect(disconnected.count == 0)
    h.clock.advance(by: .seconds(2))
    #expect(
      connection.delegate.connectionCalls.suffix(2) == [
        .didFailReconnect(Fixture.m2), .didDisconnect(Fixture.m2, .poweredOff),
      ])
    #expect(disconnected.value??.code == .notConnected)
  }

  // MARK: Event stream

  @Test func eventStreamCarriesEveryDelegateCallInTheSameOrder() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.wisePad) else { return }
    h.world.walkAway(Fixture.wisePad, for: .seconds(4))
    h.clock.advance(by: .seconds(30))
    h.world.setBattery(Fixture.wisePad, level: 0.12)
    h.world.setRadio(on: false)
    h.clock.advance(by: .seconds(30))
    h.world.setRadio(on: true)
    h.clock.advance(by: .seconds(30))
    h.world.setBattery(Fixture.wisePad, level: 0.03)
    h.clock.advance(by: .seconds(30))

    let calls = connection.delegate.calls
    #expect(calls.contains(.lowBatteryWarning(Fixture.wisePad)))
    #expect(calls.last == .didDisconnect(Fixture.wisePad, .criticallyLowBattery))
    #expect(calls.filter { if case .didSucceedReconnect = $0 { true } else { false } }.count == 2)
    #expect(h.log.delegateCalls == calls)
    #expect(h.log.sampledStatuses.allSatisfy { $0.0 == $0.1 })
  }
}
