import ReaderSimulator
import Testing

@testable import ReaderKit

@Suite(.timeLimit(.minutes(2))) struct TerminalConnectionTests {
  @Test func connectGoesFromNotConnectedThroughConnectingToConnectedAtTheLocation() throws {
    let h = Harness()
    let scanDone = Outcome<ReaderError?>()
    let delegate = DiscoveryRecorder(clock: h.clock)
    h.terminal.discoverReaders(try h.scan(timeout: 2), delegate: delegate, completion: scanDone.record)
    h.clock.advance(by: .seconds(2))
    #expect(scanDone.value == .some(nil))
    let discovered = delegate.updates.last?.first { $0.serialNumber == Fixture.m2 }
    guard let discovered else {
      Issue.record("the M2 was not discovered")
      return
    }
    #expect(h.terminal.connectionStatus == .notConnected)

    let connected = Outcome<Result<Reader, ReaderError>>()
    let mark = h.log.count
    h.terminal.connectReader(
      discovered, connectionConfig: try h.configuration(ReaderRecorder()), completion: connected.record)
    h.clock.runUntilIdle()
    #expect(h.terminal.connectionStatus == .connecting)
    #expect(h.terminal.connectedReader == nil)

    // The simulated M2 takes 1.5 s to bring the link up.
    h.clock.advance(by: .milliseconds(1499))
    #expect(connected.count == 0)
    #expect(h.terminal.connectedReader == nil)

    h.clock.advance(by: .milliseconds(1))
    let reader = try? connected.value?.get()
    #expect(reader?.serialNumber == Fixture.m2)
    #expect(reader?.locationId == Fixture.location)
    #expect(reader?.label == "Dock")
    #expect(h.terminal.connectionStatus == .connected)
    #expect(h.terminal.connectedReader == reader)
    #expect(
      h.store.savedReader
        == SavedReader(serialNumber: Fixture.m2, locationId: Fixture.location, deviceType: .stripeM2, simulated: true))
    #expect(
      h.log.since(mark).map(\.name) == [
        "didChangeConnectionStatus", "didChangeConnectionStatus", "didConnect", "didSaveReader",
      ])
    #expect(h.log.statusChanges == [.discovering, .notConnected, .connecting, .connected])
    #expect(h.log.sampledStatuses.allSatisfy { $0.0 == $0.1 })
  }

  @Test func connectEndsARunningDiscoveryWithSuccess() throws {
    let h = Harness()
    guard let found = h.discover(Fixture.chipper) else { return }
    let connected = Outcome<Result<Reader, ReaderError>>()
    h.terminal.connectReader(
      found.reader, connectionConfig: try h.configuration(ReaderRecorder()), completion: connected.record)
    h.clock.runUntilIdle()
    #expect(found.completion.value == .some(nil))
    #expect(found.discovery.isCompleted)
    #expect(connected.count == 0)
    #expect(h.terminal.connectionStatus == .connecting)

    h.clock.advance(by: .seconds(2))
    #expect((try? connected.value?.get())?.serialNumber == Fixture.chipper)
    #expect(h.log.statusChanges == [.discovering, .connecting, .connected])
    let names = h.log.namesWithoutStatus
    #expect(try #require(names.firstIndex(of: "didFinishDiscovery")) < #require(names.firstIndex(of: "didConnect")))
  }

  @Test func connectWhileConnectedFailsWithAlreadyConnected() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.chipper), let other = h.discover(Fixture.m2) else { return }
    let second = Outcome<Result<Reader, ReaderError>>()
    // The scan runs without a timeout: the connect must not wait behind it.
    h.terminal.connectReader(
      other.reader, connectionConfig: try h.configuration(ReaderRecorder()), completion: second.record)
    h.clock.runUntilIdle()
    #expect(second.value?.failure?.code == .alreadyConnected)
    #expect(other.completion.value == .some(nil))
    h.clock.advance(by: .seconds(3))
    #expect(h.terminal.connectedReader?.serialNumber == Fixture.chipper)
    #expect(h.terminal.connectionStatus == .connected)
    #expect(connection.delegate.calls.isEmpty)
  }

  @Test func connectToAnUnknownReaderFailsWithReaderNotFound() throws {
    let h = Harness()
    let ghost = Reader(serialNumber: "STRM2-9999", deviceType: .stripeM2, simulated: true)
    let result = Outcome<Result<Reader, ReaderError>>()
    h.terminal.connectReader(ghost, connectionConfig: try h.configuration(ReaderRecorder()), completion: result.record)
    h.clock.runUntilIdle()
    #expect(result.value?.failure?.code == .readerNotFound)
    #expect(result.value?.failure?.context["serialNumber"] == "STRM2-9999")
    #expect(h.terminal.connectionStatus == .notConnected)
  }

  @Test func connectToAReaderDiscoveredAWhileAgoListensForItThenConnects() throws {
    let h = Harness()
    // Long past the staleness window; the reader still advertises.
    guard let (result, _, mark) = try h.connectLongAfterDiscovery(Fixture.wisePad, wait: .seconds(60)) else { return }
    h.clock.runUntilIdle()
    #expect(h.terminal.connectionStatus == .connecting)
    #expect(h.world.isScanning)
    #expect(h.world.connectRequestCount(Fixture.wisePad) == 0)  // Nothing is opened before it is heard.

    h.clock.advance(by: .seconds(5))
    #expect((try? result.value?.get())?.serialNumber == Fixture.wisePad)
    #expect(!h.world.isScanning)
    #expect(h.log.statusChanges(since: mark) == [.connecting, .connected])
    #expect(h.terminal.engine.armedTimers.allSatisfy { !$0.contains("locate") })
  }

  @Test func connectListeningForAGoneReaderGivesUpAfterTheStalenessWindow() throws {
    let h = Harness()
    guard
      let (result, _, _) = try h.connectLongAfterDiscovery(
        Fixture.wisePad, meanwhile: { h.world.setPower(Fixture.wisePad, on: false) })
    else { return }
    h.clock.advance(by: DiscoveryTuning().stalenessWindow - .milliseconds(1))
    #expect(result.count == 0)
    h.clock.advance(by: .milliseconds(1))
    #expect(result.value?.failure?.code == .readerNotFound)
    #expect(result.value?.failure?.context["listened"] == "6")
    #expect(!h.world.isScanning)
    #expect(h.world.connectRequestCount(Fixture.wisePad) == 0)
    #expect(h.terminal.connectionStatus == .notConnected)
  }

  @Test func cancellingAConnectWhileItListensStopsTheScanAndCompletesCanceled() throws {
    let h = Harness()
    guard
      let (result, connect, _) = try h.connectLongAfterDiscovery(
        Fixture.wisePad, meanwhile: { h.world.setInRange(Fixture.wisePad, false) })
    else { return }
    h.clock.advance(by: .seconds(2))
    connect.cancel()
    connect.cancel()
    h.clock.runUntilIdle()
    #expect(result.count == 1)
    #expect(result.value?.failure?.code == .canceled)
    #expect(!h.world.isScanning)
    #expect(h.terminal.connectionStatus == .notConnected)
    #expect(h.terminal.engine.armedTimers.isEmpty)
  }

  @Test func connectTimesOutWhenTheReaderNeverAnswers() throws {
    let h = Harness()
    guard let found = h.discover(Fixture.wisePad) else { return }
    let result = Outcome<Result<Reader, ReaderError>>()
    h.world.setInRange(Fixture.wisePad, false)  // Still in the list, but gone.
    h.terminal.connectReader(
      found.reader, connectionConfig: try h.configuration(ReaderRecorder()), completion: result.record)
    h.clock.runUntilIdle()
    #expect(h.terminal.connectionStatus == .connecting)

    h.clock.advance(by: .seconds(15) - .milliseconds(1))
    #expect(result.count == 0)
    #expect(h.terminal.connectionStatus == .connecting)

    h.clock.advance(by: .milliseconds(1))
    #expect(result.value?.failure?.code == .bluetoothConnectTimedOut)
    #expect(h.terminal.connectionStatus == .notConnected)
    let failure = try #require(result.value?.failure)
    #expect(
      h.log.kinds.last { if case .didFailToConnect = $0 { true } else { false } }
        == .didFailToConnect(serialNumber: Fixture.wisePad, error: failure))

    // Coming back in range later does not connect behind the app's back.
    h.world.setInRange(Fixture.wisePad, true)
    h.clock.advance(by: .seconds(30))
    #expect(h.terminal.connectionStatus == .notConnected)
    #expect(!h.world.worldEvents.contains { $0.kind == "connected" })
  }

  @Test func connectCanBeCancelledWhileConnecting() throws {
    let h = Harness()
    guard let found = h.discover(Fixture.m2) else { return }
    let result = Outcome<Result<Reader, ReaderError>>()
    let answer = Outcome<CancelResult>()
    let connecting = h.terminal.connectReader(
      found.reader, connectionConfig: try h.configuration(ReaderRecorder()), completion: result.record)
    h.clock.advance(by: .milliseconds(500))
    connecting.cancelAndReport(answer.record)
    h.clock.runUntilIdle()
    #expect(result.value?.failure?.code == .canceled)
    #expect(answer.all == [.canceled])
    #expect(h.terminal.connectionStatus == .notConnected)

    h.clock.advance(by: .seconds(20))
    #expect(!h.world.worldEvents.contains { $0.kind == "connected" })
    #expect(h.terminal.connectedReader == nil)
    #expect(h.store.savedReader == nil)
  }

  @Test func disconnectWithNothingConnectedFailsWithNotConnected() {
    let h = Harness()
    let result = Outcome<ReaderError?>()
    h.terminal.disconnectReader(completion: result.record)
    h.clock.runUntilIdle()
    #expect(result.value??.code == .notConnected)
  }

  @Test func disconnectReaderReportsDisconnectRequestedAndNeverReconnects() throws {
    let h = Harness()
    guard let connection = try h.connect(Fixture.m2) else { return }
    let result = Outcome<ReaderError?>()
    h.terminal.disconnectReader(completion: result.record)
    h.clock.advance(by: .seconds(1))
    #expect(result.value == .some(nil))
    #expect(h.terminal.connectionStatus == .notConnected)
    #expect(h.terminal.connectedReader == nil)
    #expect(h.log.kinds.contains { if case .didDisconnect(_, .disconnectRequested) = $0 { true } else { false } })

    h.clock.advance(by: .seconds(600))
    #expect(!h.log.names.contains("didStartReconnect"))
    #expect(connection.delegate.calls.isEmpty)
    // The saved reader stays, for the next launch.
    #expect(h.store.savedReader?.serialNumber == Fixture.m2)
  }

  @Test func connectQueuedBehindADisconnectRunsOnceItCompletes() throws {
    let h = Harness()
    guard try h.connect(Fixture.chipper) != nil, let other = h.discover(Fixture.m2) else { return }
    other.discovery.cancel()
    let disconnected = Outcome<ReaderError?>()
    let connected = Outcome<Result<Reader, ReaderError>>()
    h.terminal.disconnectReader(completion: disconnected.record)
    h.terminal.connectReader(
      other.reader, connectionConfig: try h.configuration(ReaderRecorder()), completion: connected.record)
    h.clock.advance(by: .seconds(3))
    #expect(disconnected.value == .some(nil))
    #expect((try? connected.value?.get())?.serialNumber == Fixture.m2)
    #expect(h.terminal.connectedReader?.serialNumber == Fixture.m2)
  }

  @Test func disconnectThenConnectDuringADiscoveryRunInTheOrderCalled() throws {
    let h = Harness()
    guard try h.connect(Fixture.chipper) != nil, let other = h.discover(Fixture.m2) else { return }
    let disconnected = Outcome<ReaderError?>()
    let connected = Outcome<Result<Reader, ReaderError>>()
    h.terminal.disconnectReader(completion: disconnected.record)
    h.terminal.connectReader(
      other.reader, connectionConfig: try h.configuration(ReaderRecorder()), completion: connected.record)
    h.clock.advance(by: .seconds(3))
    #expect(disconnected.value == .some(nil))
    #expect((try? connected.value?.get())?.serialNumber == Fixture.m2)
    #expect(other.completion.value == .some(nil))
    #expect(h.terminal.connectedReader?.serialNumber == Fixture.m2)
  }

  @Test func connectWithTheRadioOffFailsWithBluetoothDisabled() throws {
    let h = Harness()
    guard let found = h.discover(Fixture.m2) else { return }
    h.world.setRadio(on: false)
    h.clock.runUntilIdle()
    let result = Outcome<Result<Reader, ReaderError>>()
    h.terminal.connectReader(
      found.reader, connectionConfig: try h.configuration(ReaderRecorder()), completion: result.record)
    h.clock.runUntilIdle()
    #expect(result.value?.failure?.code == .bluetoothDisabled)
    #expect(h.terminal.connectionStatus == .notConnected)
  }

  @Test func asyncConnectReturnsTheConnectedReader() async throws {
    let h = Harness()
    guard let found = h.discover(Fixture.chipper) else { return }
    let config = try h.configuration(ReaderRecorder())
    let task = Task { [terminal = h.terminal] in
      try await terminal.connectReader(found.reader, connectionConfig: config)
    }
    for _ in 0..<100_000 where h.terminal.connectionStatus != .connected {
      await Task.yield()
      h.clock.advance(by: .milliseconds(100))
    }
    let reader = try await task.value
    #expect(reader.serialNumber == Fixture.chipper)
    #expect(reader.locationId == Fixture.location)
  }

  @Test func cancellingTheTaskCancelsAnAsyncConnect() async throws {
    let h = Harness()
    guard let found = h.discover(Fixture.wisePad) else { return }
    h.world.setInRange(Fixture.wisePad, false)  // The connect will hang until cancelled or timed out.
    let config = try h.configuration(ReaderRecorder())
    let task = Task { [terminal = h.terminal] () -> ReaderError? in
      do {
        _ = try await terminal.connectReader(found.reader, connectionConfig: config)
        return nil
      } catch {
        return error as? ReaderError
      }
    }
    for _ in 0..<100_000 where h.terminal.connectionStatus != .connecting {
      await Task.yield()
      h.clock.runUntilIdle()
    }
    #expect(h.terminal.connectionStatus == .connecting)
    task.cancel()
    for _ in 0..<100_000 where h.terminal.connectionStatus == .connecting {
      await Task.yield()
      h.clock.runUntilIdle()
    }
    let error = await task.value
    #expect(error?.code == .canceled)
    // Cancelled well before the 15 s connect timeout.
    #expect(h.clock.elapsed < .seconds(10))
  }
}
