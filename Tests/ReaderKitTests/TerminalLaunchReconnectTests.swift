import Foundation
import ReaderSimulator
import Testing

@testable import ReaderKit

@Suite(.timeLimit(.minutes(2))) struct TerminalLaunchReconnectTests {
  @Test func connectingSavesTheReaderAndTheNextLaunchReconnectsIt() throws {
    let h = Harness()
    guard try h.connect(Fixture.m2) != nil else { return }
    #expect(
      h.store.savedReader
        == SavedReader(serialNumber: Fixture.m2, locationId: Fixture.location, deviceType: .stripeM2, simulated: true))
    h.clock.advance(by: .seconds(60))

    let (terminal, log) = h.relaunch()
    let delegate = ReaderRecorder()
    let result = Outcome<Result<Reader?, ReaderError>>()
    terminal.reconnectToSavedReader(delegate: delegate, completion: result.record)
    h.clock.runUntilIdle()
    #expect(terminal.connectionStatus == .discovering)
    h.clock.advance(by: .seconds(5))

    let reader = try? result.value?.get()
    #expect(reader?.serialNumber == Fixture.m2)
    #expect(terminal.engine.armedTimers == [])  // Nothing of the discovery or the launch is left.
    #expect(reader?.locationId == Fixture.location)
    #expect(terminal.connectionStatus == .connected)
    #expect(terminal.connectedReader?.serialNumber == Fixture.m2)
    #expect(
      log.namesWithoutStatus.filter { $0 != "didUpdateDiscoveredReaders" } == [
        "didStartLaunchReconnect", "didFindSavedReader", "didFinishDiscovery", "didConnect", "didSaveReader",
        "didFinishLaunchReconnect",
      ])
    #expect(log.statusChanges == [.discovering, .connecting, .connected])
    #expect(log.kinds.first == .didStartLaunchReconnect(serialNumber: Fixture.m2))
    #expect(log.kinds.last == .didFinishLaunchReconnect(nil))

    // The reader is now under the new delegate, with automatic reconnection on.
    h.world.walkAway(Fixture.m2, for: .seconds(5))
    h.clock.advance(by: .seconds(30))
    #expect(
      delegate.connectionCalls == [
        .didStartReconnect(Fixture.m2, .bluetoothSignalLost), .didSucceedReconnect(Fixture.m2),
      ])
  }

  @Test func launchReconnectFailsWithReaderNotFoundAfterTheTimeout() {
    let store = InMemoryReaderStore(SavedReader(serialNumber: Fixture.m2, locationId: Fixture.location))
    let h = Harness(store: store)
    h.world.setPower(Fixture.m2, on: false)
    let result = Outcome<Result<Reader?, ReaderError>>()
    h.terminal.reconnectToSavedReader(delegate: ReaderRecorder(), timeout: .seconds(20), completion: result.record)

    h.clock.advance(by: .seconds(20) - .milliseconds(1))
    #expect(result.count == 0)
    #expect(h.terminal.connectionStatus == .discovering)

    h.clock.advance(by: .milliseconds(1))
    #expect(result.value?.failure?.code == .readerNotFound)
    #expect(result.value?.failure?.context["serialNumber"] == Fixture.m2)
    #expect(h.terminal.connectionStatus == .notConnected)
    #expect(
      h.log.kinds.last { $0 != .didChangeConnectionStatus(.notConnected) }
        == .didFinishLaunchReconnect(result.value?.failure))
    #expect(!h.world.isScanning)
    // The saved reader is kept for the next try.
    #expect(store.savedReader?.serialNumber == Fixture.m2)
  }

  @Test func launchReconnectFindsAReaderThatAppearsBeforeTheTimeout() {
    let store = InMemoryReaderStore(SavedReader(serialNumber: Fixture.wisePad, locationId: "tml_patio"))
    let h = Harness(store: store)
    h.world.setInRange(Fixture.wisePad, false)
    h.world.walkAway(Fixture.wisePad, for: .seconds(10))
    let result = Outcome<Result<Reader?, ReaderError>>()
    h.terminal.reconnectToSavedReader(delegate: ReaderRecorder(), completion: result.record)
    h.clock.advance(by: .seconds(10))
    #expect(result.count == 0)
    h.clock.advance(by: .seconds(5))
    #expect((try? result.value?.get())?.locationId == "tml_patio")
  }

  @Test func launchReconnectWithNothingSavedSucceedsWithNil() {
    let h = Harness()
    let result = Outcome<Result<Reader?, ReaderError>>()
    h.terminal.reconnectToSavedReader(delegate: ReaderRecorder(), completion: result.record)
    h.clock.runUntilIdle()
    #expect(result.count == 1)
    guard case .success(nil)? = result.value else {
      Issue.record("expected success(nil), got \(String(describing: result.all))")
      return
    }
    #expect(h.log.kinds == [.didFindNoSavedReader, .didFinishLaunchReconnect(nil)])
    #expect(!h.world.isScanning)
  }

  @Test func launchReconnectWithACorruptStoreFailsWithATypedErrorAndKeepsTheFile() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("launch-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("last-reader.json")
    let garbage = Data("{\"serialNumber\": 12".utf8)
    try garbage.write(to: file)

    let clock = VirtualClock()
    let world = SimulatedBluetoothCentral(clock: clock, seed: 1)
    for reader in Fixture.readers() { world.add(reader) }
    let terminal = Terminal(central: world, scheduler: clock, store: FileReaderStore(fileURL: file))
    let log = EventLog(terminal)
    let result = Outcome<Result<Reader?, ReaderError>>()
    terminal.reconnectToSavedReader(delegate: ReaderRecorder(), completion: result.record)
    clock.advance(by: .seconds(1))
    #expect(result.value?.failure?.code == .storeCorrupt)
    #expect(log.kinds.last == .didFinishLaunchReconnect(result.value?.failure))
    #expect(try Data(contentsOf: file) == garbage)
    #expect(terminal.connectionStatus == .notConnected)
  }

  @Test func launchReconnectWithAnUnreadableStoreFailsWithStoreUnavailable() {
    let store = InMemoryReaderStore(SavedReader(serialNumber: Fixture.m2, locationId: Fixture.location))
    store.failNextLoad()
    let h = Harness(store: store)
    let result = Outcome<Result<Reader?, ReaderError>>()
    h.terminal.reconnectToSavedReader(delegate: ReaderRecorder(), completion: result.record)
    h.clock.advance(by: .seconds(1))
    #expect(result.value?.failure?.code == .storeUnavailable)
    #expect(store.savedReader?.serialNumber == Fixture.m2)
  }

  enum Stage: String, CaseIterable, Sendable { case waiting, discovering, connecting }

  @Test(arguments: Stage.allCases)
  func launchReconnectCanBeCancelledAtEachStage(stage: Stage) throws {
    let store = InMemoryReaderStore(SavedReader(serialNumber: Fixture.wisePad, locationId: Fixture.location))
    let h = Harness(store: store)
    let before = Outcome<ReaderError?>()
    let blocker = h.terminal.discoverReaders(
      try Harness.scan, delegate: DiscoveryRecorder(clock: h.clock), completion: before.record)
    if stage != .waiting { blocker.cancel() }
    if stage == .discovering { h.world.setInRange(Fixture.wisePad, false) }
    let result = Outcome<Result<Reader?, ReaderError>>()
    let launch = h.terminal.reconnectToSavedReader(delegate: ReaderRecorder(), completion: result.record)
    switch stage {
    case .waiting:
      h.clock.advance(by: .seconds(3))
      #expect(h.log.kinds.contains(.didQueueCommand(command: "reconnectToSavedReader", position: 1)))
    case .discovering:
      h.clock.advance(by: .seconds(3))
      #expect(h.terminal.connectionStatus == .discovering)
      #expect(h.log.kinds.contains(.didStartLaunchReconnect(serialNumber: Fixture.wisePad)))
    case .connecting:
      for _ in 0..<100 where h.terminal.connectionStatus != .connecting { h.clock.advance(by: .milliseconds(100)) }
      #expect(h.terminal.connectionStatus == .connecting)
    }
    #expect(result.count == 0)

    let answer = Outcome<CancelResult>()
    launch.cancelAndReport(answer.record)
    h.clock.runUntilIdle()
    #expect(result.value?.failure?.code == .canceled)
    #expect(answer.all == [.canceled])
    #expect(
      h.log.kinds.contains {
        if case .didFinishLaunchReconnect(let error) = $0 { error?.code == .canceled } else { false }
      })

    if stage == .waiting {
      #expect(h.terminal.connectionStatus == .discovering)  // The scan ahead of it goes on.
      blocker.cancel()
    }
    h.world.setInRange(Fixture.wisePad, true)
    h.clock.advance(by: .seconds(30))
    #expect(h.terminal.connectionStatus == .notConnected)
    #expect(h.terminal.connectedReader == nil)
    #expect(!h.world.isScanning)
    #expect(result.count == 1)
  }

  @Test func asyncLaunchReconnectReturnsTheReader() async throws {
    let store = InMemoryReaderStore(SavedReader(serialNumber: Fixture.chipper, locationId: Fixture.location))
    let h = Harness(store: store)
    let task = Task { [terminal = h.terminal] in try await terminal.reconnectToSavedReader(delegate: ReaderRecorder()) }
    for _ in 0..<100_000 where !h.log.names.contains("didFinishLaunchReconnect") {
      await Task.yield()
      h.clock.advance(by: .milliseconds(100))
    }
    // Only then awaited: a launch reconnect that never finishes fails here instead of waiting for ever.
    try #require(h.log.names.contains("didFinishLaunchReconnect"))
    let reader = try await task.value
    #expect(reader?.serialNumber == Fixture.chipper)
  }

  @Test func launchReconnectDiscoversWhatWasSavedSimulatedOrNot() {
    for simulated in [false, true] {
      let h = Harness(
        store: InMemoryReaderStore(
          SavedReader(serialNumber: Fixture.m2, locationId: Fixture.location, simulated: simulated)))
      let result = Outcome<Result<Reader?, ReaderError>>()
      h.terminal.reconnectToSavedReader(delegate: ReaderRecorder(), completion: result.record)
      h.clock.advance(by: .seconds(8))
      let reader = try? result.value?.get()
      #expect(reader?.serialNumber == Fixture.m2)
      #expect(reader?.simulated == simulated, "saved simulated: \(simulated)")
      #expect(h.store.savedReader?.simulated == simulated)
    }
  }
}
