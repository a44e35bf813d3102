import ReaderKit
import ReaderSimulator
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(2))) struct TerminalDiscoveryTests {
  // MARK: Bluetooth scan

  @Test func scanIsDiscoveringAndReportsEveryReaderNearestFirst() throws {
    let h = Harness()
    let delegate = DiscoveryRecorder(clock: h.clock)
    let done = Outcome<ReaderError?>()
    h.terminal.discoverReaders(try Harness.scan, delegate: delegate, completion: done.record)
    h.clock.runUntilIdle()
    #expect(h.terminal.connectionStatus == .discovering)
    #expect(h.log.statusChanges == [.discovering])

    h.clock.advance(by: .seconds(3))
    #expect(delegate.latestSerials == [Fixture.chipper, Fixture.m2, Fixture.wisePad])
    let latest = delegate.updates.last ?? []
    #expect(latest.allSatisfy { $0.simulated && $0.locationId == nil })
    #expect(latest.first?.label == "Counter")
    #expect(latest.first?.deviceSoftwareVersion == "2.01.00.17")
    let strengths = latest.compactMap(\.signalStrength)
    #expect(strengths.count == 3 && strengths == strengths.sorted(by: >))
    #expect(done.count == 0)
    #expect(h.terminal.connectionStatus == .discovering)

    // The stream carries the same lists, in the same order, as the delegate.
    let streamed = h.log.kinds.compactMap { kind -> [Reader]? in
      if case .didUpdateDiscoveredReaders(let readers) = kind { readers } else { nil }
    }
    #expect(streamed == delegate.updates)
  }

  @Test func scanReportsAtMostOneUpdatePerInterval() throws {
    // Eight readers all start advertising within the first second: a burst.
    var readers = Fixture.readers()
    for index in 0..<5 {
      readers.append(
        SimulatedReader(serialNumber: "WPC32-10\(index)", deviceType: .wisePad3, distance: 1 + Double(index)))
    }
    let h = Harness(readers: readers)
    let delegate = DiscoveryRecorder(clock: h.clock)
    h.terminal.discoverReaders(try Harness.scan, delegate: delegate) { _ in }
    h.clock.advance(by: .seconds(1))
    #expect(delegate.updates.count <= 2)

    h.clock.advance(by: .seconds(29))
    let times = delegate.times
    #expect(!times.isEmpty)
    for (earlier, later) in zip(times, times.dropFirst()) {
      #expect(later - earlier >= DiscoveryTuning().updateInterval)
    }
    // Roughly 30 advertisements a reader came in; only changes were reported, each a complete list.
    #expect(times.count < 60)
    #expect(delegate.updates.last?.count == 8)
    #expect(delegate.updates.allSatisfy { Set($0.map(\.serialNumber)).count == $0.count })
  }

  @Test func readerThatStopsAdvertisingLeavesTheListAfterTheStalenessWindow() throws {
    let h = Harness()
    let delegate = DiscoveryRecorder(clock: h.clock)
    h.terminal.discoverReaders(try Harness.scan, delegate: delegate) { _ in }
    h.clock.advance(by: .seconds(3))
    #expect(delegate.latestSerials == [Fixture.chipper, Fixture.m2, Fixture.wisePad])

    // Its last advertisement came at most 1.2 s before it was switched off; the list keeps it for 6 s.
    h.world.setPower(Fixture.wisePad, on: false)
    h.clock.advance(by: .milliseconds(4500))
    #expect(delegate.latestSerials == [Fixture.chipper, Fixture.m2, Fixture.wisePad])
    h.clock.advance(by: .seconds(2))
    #expect(delegate.latestSerials == [Fixture.chipper, Fixture.m2])

    // Walking out of range works the same way.
    h.world.setInRange(Fixture.m2, false)
    h.clock.advance(by: .milliseconds(4500))
    #expect(delegate.latestSerials == [Fixture.chipper, Fixture.m2])
    h.clock.advance(by: .seconds(2))
    #expect(delegate.latestSerials == [Fixture.chipper])

    // And coming back puts it back in the list.
    h.world.setInRange(Fixture.m2, true)
    h.clock.advance(by: .seconds(2))
    #expect(delegate.latestSerials == [Fixture.chipper, Fixture.m2])
  }

  @Test func scanTimeoutWithNothingFoundEndsWithBluetoothScanTimedOut() throws {
    let h = Harness()
    for reader in Fixture.readers() { h.world.setInRange(reader.serialNumber, false) }
    let delegate = DiscoveryRecorder(clock: h.clock)
    let done = Outcome<ReaderError?>()
    h.terminal.discoverReaders(try h.scan(timeout: 10), delegate: delegate, completion: done.record)

    h.clock.advance(by: .seconds(10) - .milliseconds(1))
    #expect(done.count == 0)
    #expect(h.terminal.connectionStatus == .discovering)

    h.clock.advance(by: .milliseconds(1))
    #expect(done.value??.code == .bluetoothScanTimedOut)
    #expect(done.value??.context["timeout"] != nil)
    #expect(h.terminal.connectionStatus == .notConnected)
    #expect(delegate.updates.isEmpty)
    #expect(h.log.statusChanges == [.discovering, .notConnected])
    #expect(h.pendingWorkDescription == nil || (h.clock.nextDeadline ?? .zero) > h.clock.elapsed + .seconds(3600))
  }

  @Test func scanTimeoutAfterFindingReadersEndsWithSuccess() throws {
    let h = Harness()
    let delegate = DiscoveryRecorder(clock: h.clock)
    let done = Outcome<ReaderError?>()
    let statusAtCompletion = Outcome<ConnectionStatus>()
    h.terminal.discoverReaders(try h.scan(timeout: 10), delegate: delegate) { [terminal = h.terminal] error in
      statusAtCompletion.record(terminal.connectionStatus)
      done.record(error)
    }

    h.clock.advance(by: .seconds(10) - .milliseconds(1))
    #expect(done.count == 0)
    #expect(!delegate.updates.isEmpty)

    h.clock.advance(by: .milliseconds(1))
    #expect(done.all.count == 1)
    #expect(done.value == .some(nil))
    #expect(h.terminal.connectionStatus == .notConnected)

    // The scan really stopped: nothing more is reported.
    let updates = delegate.updates.count
    h.clock.advance(by: .seconds(30))
    #expect(delegate.updates.count == updates)
    // The status leaves discovering before the end is reported, so the completion reads notConnected.
    #expect(h.log.names.suffix(2) == ["didChangeConnectionStatus", "didFinishDiscovery"])
    #expect(statusAtCompletion.value == .notConnected)
  }

  @Test func zeroTimeoutScansUntilCancelled() throws {
    let h = Harness()
    let done = Outcome<ReaderError?>()
    let discovery = h.terminal.discoverReaders(
      try h.scan(timeout: 0), delegate: DiscoveryRecorder(clock: h.clock), completion: done.record)
    h.clock.advance(by: .seconds(3600))
    #expect(done.count == 0)
    #expect(h.terminal.connectionStatus == .discovering)
    discovery.cancel()
    h.clock.runUntilIdle()
    #expect(done.value??.code == .canceled)
    #expect(h.terminal.connectionStatus == .notConnected)
  }

  @Test(arguments: [Duration.seconds(-1), .milliseconds(-1), .seconds(86_400) + .nanoseconds(1), .seconds(Int64.max)])
  func invalidScanTimeoutIsAnInvalidConfiguration(timeout: Duration) {
    #expect {
      try BluetoothScanDiscoveryConfiguration.Builder().setTimeout(timeout).build()
    } throws: { error in
      (error as? ReaderError)?.code == .invalidConfiguration && (error as? ReaderError)?.context["field"] == "timeout"
    }
  }

  @Test(arguments: [UInt(86_401), .max])
  func aScanTimeoutInWholeSecondsOverADayIsAnInvalidConfiguration(seconds: UInt) {
    #expect {
      try BluetoothScanDiscoveryConfigurationBuilder().setTimeout(seconds).build()
    } throws: { error in
      (error as? ReaderError)?.code == .invalidConfiguration && (error as? ReaderError)?.context["field"] == "timeout"
    }
  }

  @Test func scanEndsWithBluetoothDisabledWhenTheRadioGoesOff() throws {
    let h = Harness()
    let done = Outcome<ReaderError?>()
    h.terminal.discoverReaders(try Harness.scan, delegate: DiscoveryRecorder(clock: h.clock), completion: done.record)
    h.clock.advance(by: .seconds(2))
    h.world.setRadio(on: false)
    h.clock.runUntilIdle()
    #expect(done.value??.code == .bluetoothDisabled)
    #expect(h.terminal.connectionStatus == .notConnected)

    // With the radio still off, a new scan fails at once.
    let again = Outcome<ReaderError?>()
    h.terminal.discoverReaders(try Harness.scan, delegate: DiscoveryRecorder(clock: h.clock), completion: again.record)
    h.clock.runUntilIdle()
    #expect(again.value??.code == .bluetoothDisabled)
  }

  // MARK: Proximity

  private static let proximityWorld = [
    SimulatedReader(serialNumber: "CHB20-0001", deviceType: .chipper2X, distance: 0.3),
    SimulatedReader(serialNumber: "CHB20-0002", deviceType: .chipper2X, distance: 0.8),
    // Nearer than both, but an M2 cannot be found by proximity.
    SimulatedReader(serialNumber: "STRM2-0003", deviceType: .stripeM2, distance: 0.1),
  ]

  private static var proximity: BluetoothProximityDiscoveryConfiguration {
    get throws { try BluetoothProximityDiscoveryConfiguration.Builder().setSimulated(true).build() }
  }

  @Test func proximityReportsTheNearestChipperTwiceAndFlashesItsLEDs() throws {
    let h = Harness(readers: Self.proximityWorld)
    let delegate = DiscoveryRecorder(clock: h.clock)
    h.terminal.discoverReaders(try Self.proximity, delegate: delegate) { _ in }
    h.clock.advance(by: .seconds(5))

    #expect(delegate.updates.count == 2)
    let first = delegate.updates.first ?? []
    let second = delegate.updates.last ?? []
    #expect(first.map(\.serialNumber) == ["CHB20-0001"])
    #expect(first.first?.label == nil && first.first?.batteryLevel == nil && first.first?.signalStrength == nil)
    #expect(second.map(\.serialNumber) == ["CHB20-0001"])
    #expect(second.first?.deviceSoftwareVersion != nil && second.first?.batteryLevel != nil)
    #expect(h.world.ledFlashCount("CHB20-0001") == 1)
    #expect(h.world.ledFlashCount("CHB20-0002") == 0)
    #expect(h.world.worldEvents.filter { $0.kind == "flashedLEDs" }.map(\.serialNumber) == ["CHB20-0001"])
    #expect(h.log.names.contains("didRequestLEDFlash"))
    #expect(h.terminal.connectionStatus == .discovering)
  }

  @Test func proximitySticksToItsPickWhileItAdvertises() throws {
    let h = Harness(readers: Self.proximityWorld)
    let delegate = DiscoveryRecorder(clock: h.clock)
    h.terminal.discoverReaders(try Self.proximity, delegate: delegate) { _ in }
    h.clock.advance(by: .seconds(5))
    #expect(delegate.latestSerials == ["CHB20-0001"])

    h.world.setDistance("CHB20-0002", 0.05)  // Now nearer than the pick.
    h.clock.advance(by: .seconds(60))
    #expect(delegate.updates.count == 2)
    #expect(delegate.latestSerials == ["CHB20-0001"])
    #expect(h.world.ledFlashCount("CHB20-0002") == 0)
  }

  @Test func proximityPicksAgainWhenItsReaderGoesAway() throws {
    let h = Harness(readers: Self.proximityWorld)
    let delegate = DiscoveryRecorder(clock: h.clock)
    h.terminal.discoverReaders(try Self.proximity, delegate: delegate) { _ in }
    h.clock.advance(by: .seconds(5))
    h.world.setPower("CHB20-0001", on: false)
    h.clock.advance(by: .seconds(10))

    // The next nearest Chipper is picked as soon as the first is known gone, with no empty list in
    // between: the app's UI moves from one reader straight to the next.
    let serials = delegate.updates.map { $0.map(\.serialNumber) }
    #expect(serials == [["CHB20-0001"], ["CHB20-0001"], ["CHB20-0002"], ["CHB20-0002"]])
    #expect(h.world.ledFlashCount("CHB20-0002") == 1)
  }

  @Test func proximityIgnoresReadersOtherThanChipper2X() throws {
    let h = Harness(readers: [SimulatedReader(serialNumber: "STRM2-0003", deviceType: .stripeM2, distance: 0.1)])
    let delegate = DiscoveryRecorder(clock: h.clock)
    h.terminal.discoverReaders(try Self.proximity, delegate: delegate) { _ in }
    h.clock.advance(by: .seconds(30))
    #expect(delegate.updates.isEmpty)
    #expect(h.world.ledFlashCount("STRM2-0003") == 0)
  }

  // MARK: Async form

  @Test func asyncDiscoveryYieldsListsAndEndsWhenTheScanTimesOut() async throws {
    let h = Harness()
    let stream = h.terminal.discoverReaders(try h.scan(timeout: 5))
    let consumer = Task { () -> (lists: [[Reader]], error: ReaderError?) in
      var lists: [[Reader]] = []
      do {
        for try await list in stream { lists.append(list) }
        return (lists, nil)
      } catch {
        return (lists, error as? ReaderError)
      }
    }
    // The stream was created synchronously: the scan is already submitted to the clock.
    h.clock.advance(by: .seconds(5))
    let (lists, error) = await consumer.valueCancelledWithCaller
    #expect(error == nil)
    #expect(lists.last?.map(\.serialNumber) == [Fixture.chipper, Fixture.m2, Fixture.wisePad])
  }

  @Test func endingTheAsyncDiscoveryCancelsTheScan() async throws {
    let h = Harness()
    let consumer = Task { [terminal = h.terminal] () -> [Reader]? in
      for try await list in terminal.discoverReaders(try Harness.scan) where !list.isEmpty { return list }
      return nil
    }
    // Wait for the task to submit the scan; then drive time until it has what it wants.
    var first: [Reader]?
    for _ in 0..<10_000 where first == nil {
      h.clock.advance(by: .milliseconds(100))
      await Task.yield()
      if h.log.names.contains("didUpdateDiscoveredReaders") { break }
    }
    first = try await consumer.valueCancelledWithCaller
    #expect(first?.isEmpty == false)
    h.clock.runUntilIdle()
    #expect(h.log.kinds.contains(.didFinishDiscovery(ReaderError.canceled("discoverReaders"))))
    #expect(h.terminal.connectionStatus == .notConnected)
  }
}
