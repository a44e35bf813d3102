import ReaderKit
import ReaderSimulator
import Testing

private let day = Duration.seconds(24 * 3600)
private let hour = Duration.seconds(3600)

@Suite(.timeLimit(.minutes(2))) struct TerminalRebootTests {
  @Test func rebootCompletesOnceAcceptedThenTheReaderIsReconnectedByItself() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    let done = Outcome<ReaderError?>()
    h.terminal.rebootReader(completion: done.record)
    h.clock.runUntilIdle()

    // The simulated reader answers after 300 ms and drops the link 200 ms later.
    h.clock.advance(by: .milliseconds(299))
    #expect(done.count == 0)
    h.clock.advance(by: .milliseconds(1))
    #expect(done.value == .some(nil))
    #expect(h.terminal.connectionStatus == .connected)
    #expect(h.log.kinds.contains(.didRespondToReboot(serialNumber: Fixture.m2, error: nil)))

    h.clock.advance(by: .milliseconds(200))
    #expect(connection.delegate.connectionCalls == [.didStartReconnect(Fixture.m2, .rebootRequested)])
    #expect(h.terminal.connectionStatus == .reconnecting)

    // Back 12 s later; the link takes 1.5 s.
    h.clock.advance(by: .seconds(15))
    #expect(
      connection.delegate.connectionCalls == [
        .didStartReconnect(Fixture.m2, .rebootRequested), .didSucceedReconnect(Fixture.m2),
      ])
    #expect(h.terminal.connectionStatus == .connected)
    #expect(h.terminal.connectedReader?.locationId == Fixture.location)
    #expect(
      h.world.worldEvents.map(\.kind).filter { $0 == "rebooting" || $0 == "rebooted" } == ["rebooting", "rebooted"])
  }

  @Test func rebootWithoutAutoReconnectDisconnectsWithRebootRequested() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2, autoReconnect: false) else { return }
    let done = Outcome<ReaderError?>()
    h.terminal.rebootReader(completion: done.record)
    h.clock.advance(by: .seconds(1))
    #expect(done.value == .some(nil))
    #expect(connection.delegate.connectionCalls == [.didDisconnect(Fixture.m2, .rebootRequested)])
    #expect(h.terminal.connectionStatus == .notConnected)

    // It comes back on its own and can be discovered again.
    h.clock.advance(by: .seconds(12))
    #expect(h.discover(Fixture.m2) != nil)
  }

  @Test func disconnectQueuedBehindARebootDisconnectsTheReaderOnceItIsBack() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    let rebooted = Outcome<ReaderError?>()
    let disconnected = Outcome<ReaderError?>()
    h.terminal.rebootReader(completion: rebooted.record)
    h.terminal.disconnectReader(completion: disconnected.record)
    h.clock.advance(by: .seconds(1))
    #expect(rebooted.value == .some(nil))
    #expect(disconnected.count == 0)  // Waits for the reconnection the reboot started.
    h.clock.advance(by: .seconds(30))
    #expect(
      connection.delegate.connectionCalls == [
        .didStartReconnect(Fixture.m2, .rebootRequested), .didSucceedReconnect(Fixture.m2),
      ])
    #expect(disconnected.value == .some(nil))
    #expect(h.terminal.connectionStatus == .notConnected)
    h.clock.advance(by: .seconds(60))
    #expect(h.terminal.connectionStatus == .notConnected)
  }

  @Test func rebootRefusedBecauseTheReaderDroppedFailsWithRebootFailed() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    let rebooted = Outcome<ReaderError?>()
    h.terminal.rebootReader(completion: rebooted.record)
    h.clock.advance(by: .milliseconds(100))
    h.world.setInRange(Fixture.m2, false)
    h.clock.advance(by: .seconds(1))
    #expect(rebooted.value??.code == .rebootFailed)
    #expect(
      h.log.kinds.contains {
        if case .didRespondToReboot(Fixture.m2, let error?) = $0 { error.code == .rebootFailed } else { false }
      })
    #expect(connection.delegate.connectionCalls == [.didStartReconnect(Fixture.m2, .bluetoothSignalLost)])
  }

  @Test func rebootWithNothingConnectedFailsWithNotConnected() {
    let h = Harness()
    let done = Outcome<ReaderError?>()
    h.terminal.rebootReader(completion: done.record)
    h.clock.runUntilIdle()
    #expect(done.value??.code == .notConnected)
  }

  @Test func asyncRebootReturnsOnceAccepted() async throws {
    let h = Harness()
    guard try h.connect(Fixture.m2) != nil else { return }
    let task = Task { [terminal = h.terminal] in try await terminal.rebootReader() }
    for _ in 0..<100_000 where !h.log.names.contains("didRespondToReboot") {
      await Task.yield()
      h.clock.advance(by: .milliseconds(50))
    }
    try await task.value
  }

  @Test(arguments: [DeviceType.stripeM2, .wisePad3])
  func readerRebootsItselfTwentyFourHoursAfterItStarted(model: DeviceType) throws {
    let serial = "\(model.serialPrefix)-0100"
    let h = Harness(readers: [SimulatedReader(serialNumber: serial, deviceType: model, isCharging: true)])
    guard let connection = try h.connect(serial) else { return }
    h.clock.advance(to: day - .milliseconds(1))
    #expect(connection.delegate.calls.isEmpty)
    h.clock.advance(by: .milliseconds(1))
    #expect(connection.delegate.connectionCalls == [.didStartReconnect(serial, .securityReboot)])
    h.clock.advance(by: .seconds(20))
    #expect(connection.delegate.connectionCalls.last == .didSucceedReconnect(serial))
  }

  @Test func rebootReaderRestartsTheTwentyFourHourCount() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    h.clock.advance(to: hour * 10)
    h.terminal.rebootReader { _ in }
    h.clock.advance(by: .seconds(30))
    let rebooted = h.world.worldEvents.last { $0.kind == "rebooted" }?.time
    guard let rebooted else {
      Issue.record("the reader did not reboot")
      return
    }

    h.clock.advance(to: rebooted + day - .milliseconds(1))
    #expect(!h.world.worldEvents.contains { $0.kind == "securityReboot" })
    #expect(connection.delegate.connectionCalls.count == 2)
    h.clock.advance(by: .milliseconds(1))
    #expect(h.world.worldEvents.filter { $0.kind == "securityReboot" }.map(\.time) == [rebooted + day])
    #expect(connection.delegate.connectionCalls.last == .didStartReconnect(Fixture.m2, .securityReboot))
  }

  @Test func chipperNeverRebootsItself() throws {
    let h = Harness(readers: [SimulatedReader(serialNumber: Fixture.chipper, deviceType: .chipper2X, isCharging: true)])
    guard let connection = try h.connect(Fixture.chipper) else { return }
    h.clock.advance(by: day * 7)
    #expect(connection.delegate.calls.isEmpty)
    #expect(!h.world.worldEvents.contains { $0.kind == "securityReboot" })
    #expect(h.terminal.connectionStatus == .connected)
  }

  @Test func readerIdleOnBatteryPowersDownAfterTenHoursAndIsNotReconnected() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.wisePad) else { return }
    // The idle count starts with the host's last request to the reader: the connect.
    let connected = h.world.worldEvents.last { $0.kind == "connected" }?.time ?? .zero
    let requested = connected - .milliseconds(1500)
    h.clock.advance(to: requested + hour * 10 - .milliseconds(1))
    #expect(connection.delegate.calls.isEmpty)
    h.clock.advance(by: .milliseconds(1))
    #expect(connection.delegate.connectionCalls == [.didDisconnect(Fixture.wisePad, .idlePowerDown)])
    #expect(h.terminal.connectionStatus == .notConnected)
    h.clock.advance(by: hour)
    #expect(connection.delegate.connectionCalls.count == 1)
  }

  @Test func readerOnExternalPowerNeverIdlesDown() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    h.clock.advance(to: hour * 23)
    #expect(connection.delegate.calls.isEmpty)
    #expect(!h.world.worldEvents.contains { $0.kind == "idlePowerDown" && $0.serialNumber == Fixture.m2 })
  }

  @Test(arguments: [DeviceType.stripeM2, .wisePad3])
  func readerConnectedForAWeekIsReconnectedAfterEverySecurityReboot(model: DeviceType) throws {
    let serial = "\(model.serialPrefix)-0200"
    let h = Harness(readers: [SimulatedReader(serialNumber: serial, deviceType: model, isCharging: true)])
    guard let connection = try h.connect(serial) else { return }
    h.clock.advance(by: day * 7)

    let reboots = h.world.worldEvents.filter { $0.kind == "securityReboot" }
    // Every 24 hours after the previous reboot ended (12 s each).
    #expect(reboots.count == 6)
    for (earlier, later) in zip(reboots, reboots.dropFirst()) {
      #expect(later.time - earlier.time == day + .seconds(12))
    }
    let expected = Array(
      repeating: [ReaderRecorder.Call.didStartReconnect(serial, .securityReboot), .didSucceedReconnect(serial)],
      count: reboots.count
    ).flatMap { $0 }
    #expect(connection.delegate.connectionCalls == expected)
    #expect(h.terminal.connectionStatus == .connected)
    #expect(h.terminal.connectedReader?.locationId == Fixture.location)
    #expect(h.log.delegateCalls == connection.delegate.calls)
  }
}
