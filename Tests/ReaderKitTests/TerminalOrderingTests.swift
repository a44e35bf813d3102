import Foundation
import ReaderCore
import ReaderSimulator
import Synchronization
import Testing

@testable import ReaderKit

/// A Bluetooth stack whose reader can be told to ignore reboot and disconnect requests, as firmware
/// that hangs does; everything else goes to the simulated world.
private final class SilentReaderCentral: BluetoothCentral, ReaderLink {
  let world: SimulatedBluetoothCentral
  let ignoresReboot = Atomic(false)
  let ignoresDisconnect = Atomic(false)

  init(_ world: SimulatedBluetoothCentral) { self.world = world }

  func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) { world.setEventHandler(handler) }
  func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {
    world.setLinkEventHandler(handler)
  }
  var isPoweredOn: Bool { world.isPoweredOn }
  func startScan() { world.startScan() }
  func stopScan() { world.stopScan() }
  func connect(serialNumber: String) { world.connect(serialNumber: serialNumber) }
  func cancelConnect(serialNumber: String) { world.cancelConnect(serialNumber: serialNumber) }
  func flashLEDs(serialNumber: String) { world.flashLEDs(serialNumber: serialNumber) }

  func disconnect(serialNumber: String) {
    if !ignoresDisconnect.load(ordering: .relaxed) { world.disconnect(serialNumber: serialNumber) }
  }

  func reboot(serialNumber: String) {
    if !ignoresReboot.load(ordering: .relaxed) { world.reboot(serialNumber: serialNumber) }
  }

  func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?) {
    world.installUpdate(serialNumber: serialNumber, update: update, image: image)
  }

  func cancelUpdate(serialNumber: String) { world.cancelUpdate(serialNumber: serialNumber) }
}

/// A terminal over `SilentReaderCentral`, connected to the M2.
private struct SilentHarness {
  let clock = VirtualClock()
  let central: SilentReaderCentral
  let terminal: Terminal
  let log: EventLog
  let delegate = ReaderRecorder()

  init?() throws {
    let world = SimulatedBluetoothCentral(clock: clock, seed: 1)
    for reader in Fixture.readers() { world.add(reader) }
    central = SilentReaderCentral(world)
    terminal = Terminal(central: central, scheduler: clock, store: InMemoryReaderStore(), seed: 1)
    log = EventLog(terminal)
    let found = Outcome<[Reader]>()
    let scan = terminal.discoverReaders(try Harness.scan, delegate: ListDelegate(found)) { _ in }
    clock.advance(by: .seconds(3))
    guard let reader = found.all.last?.first(where: { $0.serialNumber == Fixture.m2 }) else { return nil }
    scan.cancel()
    let config = try BluetoothConnectionConfiguration.Builder(delegate: delegate, locationId: Fixture.location)
      .build()
    terminal.connectReader(reader, connectionConfig: config) { _ in }
    clock.advance(by: .seconds(3))
    guard terminal.connectionStatus == .connected else { return nil }
  }
}

private nonisolated final class ListDelegate: DiscoveryDelegate {
  let lists: Outcome<[Reader]>
  init(_ lists: Outcome<[Reader]>) { self.lists = lists }
  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) { lists.record(readers) }
}

/// The orderings and timeouts around commands that the reader answers late, wrongly or never.
@Suite struct TerminalOrderingTests {
  @Test func commandQueuedBehindARebootTheReaderDropsBeforeAnsweringWaitsForTheReconnection() throws {
    let h = Harness()
    guard try h.connect(Fixture.m2) != nil else { return }
    let reboot = Outcome<ReaderError?>()
    let disconnect = Outcome<ReaderError?>()
    h.terminal.rebootReader(completion: reboot.record)
    h.terminal.disconnectReader(completion: disconnect.record)
    h.clock.advance(by: .milliseconds(100))
    h.world.walkAway(Fixture.m2, for: .seconds(5))  // Gone before the 300 ms answer.
    h.clock.runUntilIdle()
    #expect(reboot.value??.code == .rebootFailed)
    #expect(disconnect.count == 0, "the disconnect must wait for the reconnection")
    #expect(h.terminal.connectionStatus == .reconnecting)

    h.clock.advance(by: .seconds(30))
    #expect(disconnect.value == .some(nil))
    #expect(h.terminal.connectionStatus == .notConnected)
    let names = h.log.namesWithoutStatus
    #expect(
      try #require(names.firstIndex(of: "didStartReconnect"))
        < #require(names.firstIndex(of: "readerDidSucceedReconnect")))
    #expect(names.last == "didDisconnect")
  }

  @Test func rebootTheReaderNeverAnswersFailsAfterTheReplyTimeoutAndFreesTheLine() throws {
    let h = try #require(try SilentHarness())
    h.central.ignoresReboot.store(true, ordering: .relaxed)
    let reboot = Outcome<ReaderError?>()
    let disconnect = Outcome<ReaderError?>()
    h.terminal.rebootReader(completion: reboot.record)
    h.terminal.disconnectReader(completion: disconnect.record)
    h.clock.advance(by: .seconds(10) - .milliseconds(1))
    #expect(reboot.count == 0)
    h.clock.advance(by: .milliseconds(1))
    #expect(reboot.value??.code == .rebootFailed)
    #expect(reboot.value??.context["serialNumber"] == Fixture.m2)
    h.clock.advance(by: .seconds(1))
    #expect(disconnect.value == .some(nil))
    #expect(h.terminal.connectionStatus == .notConnected)
  }

  @Test func disconnectTheReaderNeverConfirmsCompletesAfterTheReplyTimeout() throws {
    let h = try #require(try SilentHarness())
    h.central.ignoresDisconnect.store(true, ordering: .relaxed)
    let disconnect = Outcome<ReaderError?>()
    h.terminal.disconnectReader(completion: disconnect.record)
    h.clock.advance(by: .seconds(10) - .milliseconds(1))
    #expect(disconnect.count == 0)
    #expect(h.terminal.connectionStatus == .connected)
    h.clock.advance(by: .milliseconds(1))
    #expect(disconnect.value == .some(nil))
    #expect(h.terminal.connectionStatus == .notConnected)
    #expect(h.terminal.engine.armedTimers.isEmpty)
    // The host let go of the link, so the reader is free to be found and connected again.
    #expect(h.central.world.worldEvents.contains { $0.kind == "linkAbandoned" && $0.serialNumber == Fixture.m2 })
  }

  @Test func discoveryEndedByAConnectSeesTheStatusAlreadyConnecting() throws {
    let h = Harness()
    guard let found = h.discover(Fixture.m2) else { return }
    let statusInCompletion = Outcome<ConnectionStatus>()
    // A second discovery whose completion reads the status.
    found.discovery.cancel()
    h.clock.runUntilIdle()
    let delegate = DiscoveryRecorder(clock: h.clock)
    h.terminal.discoverReaders(try Harness.scan, delegate: delegate) { [terminal = h.terminal] _ in
      statusInCompletion.record(terminal.connectionStatus)
    }
    h.clock.advance(by: .seconds(3))
    let mark = h.log.count
    h.terminal.connectReader(found.reader, connectionConfig: try h.configuration(ReaderRecorder())) { _ in }
    h.clock.advance(by: .seconds(3))
    #expect(statusInCompletion.value == .connecting)
    #expect(h.log.statusChanges(since: mark) == [.connecting, .connected])
  }

  @Test func turningBluetoothOffWhileAConnectListensFailsItWithBluetoothDisabled() throws {
    let h = Harness()
    guard
      let (result, _, _) = try h.connectLongAfterDiscovery(
        Fixture.wisePad, meanwhile: { h.world.setInRange(Fixture.wisePad, false) })
    else { return }
    h.clock.advance(by: .seconds(1))
    h.world.setRadio(on: false)
    h.clock.runUntilIdle()
    #expect(result.value?.failure?.code == .bluetoothDisabled)
    #expect(h.terminal.connectionStatus == .notConnected)
    #expect(h.terminal.engine.armedTimers.isEmpty)
  }

  @Test func launchThatFoundItsReaderLeavesNoDiscoveryTimerWhileItConnects() throws {
    let h = Harness()
    guard try h.connect(Fixture.m2) != nil else { return }
    let (terminal, _) = h.relaunch()
    let result = Outcome<Result<Reader?, ReaderError>>()
    terminal.reconnectToSavedReader(delegate: ReaderRecorder(), completion: result.record)
    var sawConnecting = false
    for _ in 0..<100 {
      h.clock.advance(by: .milliseconds(50))
      guard terminal.connectionStatus == .connecting else { continue }
      sawConnecting = true
      let timers = terminal.engine.armedTimers
      #expect(timers.allSatisfy { !$0.hasPrefix("discovery") }, "timers while connecting: \(timers)")
    }
    #expect(sawConnecting)
    #expect((try? result.value?.get())??.serialNumber == Fixture.m2)
  }

  @Test func disconnectWaitingBehindAReconnectionCanBeWithdrawn() throws {
    let h = Harness()
    guard try h.connect(Fixture.m2) != nil else { return }
    h.world.walkAway(Fixture.m2, for: .seconds(10))
    h.clock.runUntilIdle()
    #expect(h.terminal.connectionStatus == .reconnecting)
    let disconnect = Outcome<ReaderError?>()
    let handle = h.terminal.disconnectReader(completion: disconnect.record)
    h.clock.runUntilIdle()
    let cancels = Outcome<CancelResult>()
    handle.cancelAndReport(cancels.record)
    handle.cancelAndReport(cancels.record)
    h.clock.runUntilIdle()
    #expect(disconnect.value??.code == .canceled)
    #expect(cancels.all == [.canceled, .canceled])

    h.clock.advance(by: .seconds(30))
    #expect(h.terminal.connectionStatus == .connected, "the withdrawn disconnect never ran")
    #expect(disconnect.count == 1)
  }

  @Test func cancellingADisconnectAlreadySentWaitsForItAndReportsNothingToCancel() throws {
    let h = Harness()
    guard try h.connect(Fixture.m2) != nil else { return }
    let disconnect = Outcome<ReaderError?>()
    let handle = h.terminal.disconnectReader(completion: disconnect.record)
    h.clock.runUntilIdle()
    let cancels = Outcome<CancelResult>()
    handle.cancelAndReport(cancels.record)
    h.clock.runUntilIdle()
    #expect(cancels.count == 0, "the cancel waits until the disconnect has finished")
    h.clock.advance(by: .seconds(1))
    #expect(disconnect.value == .some(nil))
    #expect(cancels.all == [.nothingToCancel])
    #expect(h.terminal.connectionStatus == .notConnected)
  }

  @Test func rebootWaitingBehindAReconnectionCanBeWithdrawn() throws {
    let h = Harness()
    guard try h.connect(Fixture.m2) != nil else { return }
    h.world.walkAway(Fixture.m2, for: .seconds(10))
    h.clock.runUntilIdle()
    let reboot = Outcome<ReaderError?>()
    let handle = h.terminal.rebootReader(completion: reboot.record)
    h.clock.runUntilIdle()
    handle.cancel()
    h.clock.advance(by: .seconds(30))
    #expect(reboot.value??.code == .canceled)
    #expect(!h.world.worldEvents.contains { $0.kind == "rebooting" })
    #expect(h.terminal.connectionStatus == .connected)
  }

  @Test func connectQueuedBehindAScanThatWaitsItsTurnEndsTheScanWhenItStarts() throws {
    let h = Harness()
    guard try h.connect(Fixture.chipper) != nil, let other = h.discover(Fixture.m2) else { return }
    other.discovery.cancel()
    h.clock.runUntilIdle()
    let disconnected = Outcome<ReaderError?>()
    let scanned = Outcome<ReaderError?>()
    let connected = Outcome<Result<Reader, ReaderError>>()
    h.terminal.disconnectReader(completion: disconnected.record)
    h.terminal.discoverReaders(
      try Harness.scan, delegate: DiscoveryRecorder(clock: h.clock), completion: scanned.record)
    h.terminal.connectReader(
      other.reader, connectionConfig: try h.configuration(ReaderRecorder()), completion: connected.record)
    h.clock.advance(by: .seconds(10))
    #expect(disconnected.value == .some(nil))
    #expect(scanned.value == .some(nil), "the scan (no timeout) ends as it starts, for the connect behind it")
    #expect((try? connected.value?.get())?.serialNumber == Fixture.m2)
    #expect(!h.world.isScanning)
  }

  @Test func connectThatEndsAScanAndFailsAtOnceNeverShowsConnecting() throws {
    let h = Harness()
    let scanned = Outcome<ReaderError?>()
    h.terminal.discoverReaders(
      try Harness.scan, delegate: DiscoveryRecorder(clock: h.clock), completion: scanned.record)
    h.clock.advance(by: .seconds(2))
    let ghost = Reader(serialNumber: "STRM2-9999", deviceType: .stripeM2, simulated: true)
    let statusInCompletion = Outcome<ConnectionStatus>()
    h.terminal.connectReader(ghost, connectionConfig: try h.configuration(ReaderRecorder())) {
      [terminal = h.terminal] result in
      #expect(result.failure?.code == .readerNotFound)
      statusInCompletion.record(terminal.connectionStatus)
    }
    h.clock.runUntilIdle()
    #expect(scanned.value == .some(nil))
    #expect(statusInCompletion.value == .notConnected)
    #expect(h.log.statusChanges == [.discovering, .notConnected])
  }

  @Test func statusReadsReconnectingInDidFailReconnectAndNotConnectedInDidDisconnect() throws {
    let h = Harness()
    let sampler = StatusSampler()
    guard let found = h.discover(Fixture.m2) else { return }
    let config = try BluetoothConnectionConfiguration.Builder(delegate: sampler, locationId: Fixture.location).build()
    sampler.terminal.withLock { $0 = h.terminal }
    h.terminal.connectReader(found.reader, connectionConfig: config) { _ in }
    h.clock.advance(by: .seconds(3))
    h.world.setPower(Fixture.m2, on: false)
    h.clock.advance(by: .seconds(90))
    #expect(sampler.samples.withLock { $0 } == ["fail: reconnecting", "disconnect: notConnected"])
  }
}

/// Records `connectionStatus` as each final call of a failed reconnection sees it.
private nonisolated final class StatusSampler: MobileReaderDelegate {
  let terminal = Locked<Terminal?>(nil)
  let samples = Locked<[String]>([])

  private func sample(_ call: String) {
    let status = terminal.withLock { $0?.connectionStatus }
    samples.withLock { $0.append("\(call): \(status.map { "\($0)" } ?? "?")") }
  }

  func readerDidFailReconnect(_ reader: Reader) { sample("fail") }
  func reader(_ reader: Reader, didDisconnect reason: DisconnectReason) { sample("disconnect") }
}
