import Foundation
import ReaderCore
import ReaderKit
import ReaderSimulator
import Testing

// Software updates end to end on the virtual clock: the terminal, the simulated readers, a catalog.

/// A `MobileReaderDelegate` that writes down every update call with what the terminal said then.
nonisolated final class UpdateRecorder: MobileReaderDelegate {
  enum Call: Equatable, Sendable {
    case available(String)
    case started(String, cancelable: Bool)
    case progress(Float)
    case finished(String?, ReaderError.Code?)
    case succeededReconnect
    case disconnected(DisconnectReason)
  }

  private struct State {
    var calls: [Call] = []
    var cancelables: [Cancelable?] = []
    /// (status, connected reader) read during each update call.
    var seen: [(ConnectionStatus, Reader?)] = []
    var onStart: (@Sendable (Cancelable?) -> Void)?
    var onProgress: (@Sendable (Float) -> Void)?
  }

  private let state = Locked(State())
  private let terminal: Locked<Terminal?> = Locked(nil)

  init() {}

  /// The terminal whose status is sampled at each call.
  func watch(_ terminal: Terminal) { self.terminal.withLock { $0 = terminal } }

  var calls: [Call] { state.withLock { $0.calls } }
  var cancelables: [Cancelable?] { state.withLock { $0.cancelables } }
  var seen: [(ConnectionStatus, Reader?)] { state.withLock { $0.seen } }
  var progress: [Float] { calls.compactMap { if case .progress(let value) = $0 { value } else { nil } } }

  func onStart(_ body: @escaping @Sendable (Cancelable?) -> Void) { state.withLock { $0.onStart = body } }
  func onProgress(_ body: @escaping @Sendable (Float) -> Void) { state.withLock { $0.onProgress = body } }

  private func note(_ call: Call) {
    let terminal = self.terminal.withLock { $0 }
    let sample = terminal.map { ($0.connectionStatus, $0.connectedReader) }
    state.withLock {
      $0.calls.append(call)
      if let sample { $0.seen.append(sample) }
    }
  }

  func reader(_ reader: Reader, didReportAvailableUpdate update: ReaderSoftwareUpdate) {
    note(.available(update.deviceSoftwareVersion))
  }

  func reader(_ reader: Reader, didStartInstallingUpdate update: ReaderSoftwareUpdate, cancelable: Cancelable?) {
    note(.started(update.deviceSoftwareVersion, cancelable: cancelable != nil))
    let hook = state.withLock { state -> (@Sendable (Cancelable?) -> Void)? in
      state.cancelables.append(cancelable)
      return state.onStart
    }
    hook?(cancelable)
  }

  func reader(_ reader: Reader, didReportReaderSoftwareUpdateProgress progress: Float) {
    note(.progress(progress))
    state.withLock { $0.onProgress }?(progress)
  }

  func reader(_ reader: Reader, didFinishInstallingUpdate update: ReaderSoftwareUpdate?, error: (any Error)?) {
    note(.finished(update?.deviceSoftwareVersion, (error as? ReaderError)?.code))
  }

  func readerDidSucceedReconnect(_ reader: Reader) { note(.succeededReconnect) }

  func reader(_ reader: Reader, didDisconnect reason: DisconnectReason) { note(.disconnected(reason)) }
}

/// A terminal with a catalog over the fixed world, and helpers to connect with a test update.
private struct UpdateHarness {
  let clock = VirtualClock()
  let world: SimulatedBluetoothCentral
  let terminal: Terminal
  let log: EventLog
  let catalog = InMemoryUpdateCatalog(sha256: { SHA256Checksum.compute($0) })
  let delegate = UpdateRecorder()

  init(seed: UInt64 = 1, readers: [SimulatedReader] = Fixture.readers(), withCatalog: Bool = true) {
    world = SimulatedBluetoothCentral(clock: clock, seed: seed)
    for reader in readers { world.add(reader) }
    terminal = Terminal(
      central: world, scheduler: clock, store: InMemoryReaderStore(), seed: seed,
      updateCatalog: withCatalog ? catalog : nil)
    log = EventLog(terminal)
    delegate.watch(terminal)
  }

  /// The date the simulation is at now.
  var date: Date { Terminal.simulationEpoch.addingTimeInterval(Double(clock.elapsed.components.seconds)) }

  /// Discovers `serial` (then ends the scan) and starts connecting it with `testUpdate`.
  func startConnect(_ serial: String = Fixture.m2, testUpdate: TestReaderUpdate? = nil)
    -> (result: Outcome<Result<Reader, ReaderError>>, connect: Cancelable)?
  {
    let found = DiscoveryRecorder(clock: clock)
    let scan: Cancelable
    do {
      scan = terminal.discoverReaders(try Harness.scan, delegate: found) { _ in }
    } catch {
      Issue.record(error, "test set-up: no scan configuration")
      return nil
    }
    clock.advance(by: .seconds(2))
    guard let reader = found.updates.last?.first(where: { $0.serialNumber == serial }) else {
      Issue.record("\(serial) was not discovered")
      return nil
    }
    let config: BluetoothConnectionConfiguration
    do {
      config = try BluetoothConnectionConfigurationBuilder(delegate: delegate, locationId: Fixture.location)
        .setTestReaderUpdate(testUpdate).build()
    } catch {
      Issue.record(error, "test set-up: no connection configuration")
      return nil
    }
    let result = Outcome<Result<Reader, ReaderError>>()
    let connect = terminal.connectReader(reader, connectionConfig: config, completion: result.record)
    _ = scan
    return (result, connect)
  }

  /// Connects `serial` with `testUpdate` and runs the clock long enough for any install.
  func connect(_ serial: String = Fixture.m2, testUpdate: TestReaderUpdate? = nil, for time: Duration = .seconds(600))
    -> Result<Reader, ReaderError>?
  {
    guard let started = startConnect(serial, testUpdate: testUpdate) else { return nil }
    clock.advance(by: time)
    return started.result.value
  }

  func version(_ serial: String = Fixture.m2) -> String? { world.reader(serial)?.softwareVersion }

  func worldKinds(_ serial: String = Fixture.m2) -> [String] {
    world.worldEvents.filter { $0.serialNumber == serial }.map(\.kind)
  }

  /// A release of `version` for M2 readers everywhere, released `releasedAgo` before now and required
  /// `requiredIn` from now, with `image` (and its bytes in the catalog).
  func release(
    _ version: String, requiredIn: TimeInterval, releasedAgo: TimeInterval = 86_400,
    components: UpdateComponent = [.firmware, .config], image: Data = Data(repeating: 0xA5, count: 4096),
    publishedBytes: Data? = nil
  ) throws {
    let url = URL(string: "https://updates.example/m2-\(version).bin")!
    let firmware = FirmwareImage(url: url, size: image.count, sha256: SHA256Checksum.compute(image))
    catalog.add(
      UpdateRelease(
        deviceType: .stripeM2, version: try SoftwareVersion(version),
        releasedAt: date.addingTimeInterval(-releasedAgo), requiredAt: date.addingTimeInterval(requiredIn),
        components: components, durationEstimate: .estimate1To2Minutes, image: firmware),
      image: publishedBytes ?? image)
  }
}

private let installed = "2.01.00.17"  // The simulated readers' default version.
private let next = "2.01.00.18"

@Suite struct TerminalRequiredUpdateTests {
  @Test func aRequiredUpdateInstallsBeforeTheConnectCompletes() throws {
    let h = UpdateHarness(withCatalog: false)
    let started = try #require(h.startConnect(testUpdate: .required(TestReaderUpdate.fullUpdate)))
    h.clock.advance(by: .seconds(30))
    #expect(started.result.count == 0, "still installing after 30 s")
    #expect(h.terminal.connectionStatus == .connecting)
    #expect(h.terminal.connectedReader == nil)
    h.clock.advance(by: .seconds(60))
    let reader = try #require(try started.result.value?.get())
    #expect(reader.deviceSoftwareVersion == next)
    #expect(h.version() == next, "the simulated reader runs the new version")

    // start → progress → finish → didConnect → saved → completion.
    let names = h.log.namesWithoutStatus.filter { $0 != "didUpdateDiscoveredReaders" && $0 != "didFinishDiscovery" }
    let start = try #require(names.firstIndex(of: "didStartInstallingUpdate"))
    let finish = try #require(names.firstIndex(of: "didFinishInstallingUpdate"))
    let connected = try #require(names.firstIndex(of: "didConnect"))
    #expect(start < finish && finish < connected)
    #expect(names.filter { $0 == "didStartInstallingUpdate" }.count == 1)
    #expect(names.filter { $0 == "didFinishInstallingUpdate" }.count == 1)
    #expect(names.suffix(2) == ["didConnect", "didSaveReader"])
    // While installing, the status was connecting and no reader was connected.
    #expect(h.delegate.seen.allSatisfy { $0.0 == .connecting && $0.1 == nil })
    #expect(h.delegate.calls.last == .finished(next, nil))
  }

  @Test func progressStartsAtZeroNeverGoesBackEndsAtOneAndIsCoalesced() throws {
    let h = UpdateHarness(withCatalog: false)
    _ = h.connect(testUpdate: .required(TestReaderUpdate.fullUpdate))
    let progress = h.delegate.progress
    #expect(progress.first == 0)
    #expect(progress.last == 1)
    #expect(progress == progress.sorted())
    #expect(progress.dropLast().allSatisfy { $0 < 1 })
    let times = h.log.all.filter { $0.name == "didReportReaderSoftwareUpdateProgress" }.map(\.time)
    let span = try #require(times.last) - times[0]
    // The reader reports 50 steps over a minute; the terminal passes at most four a second on.
    #expect(Double(times.count) <= 4 * Double(span.components.seconds + 1) + 2)
    #expect(times.count >= 20, "and keeps the app informed: \(times.count) reports")
    for (earlier, later) in zip(times, times.dropFirst()) {
      #expect(later - earlier >= .milliseconds(250) || later == times.last)
    }
  }

  @Test func anIncrementalOnlyUpdateComesWithoutACancelable() {
    let h = UpdateHarness(withCatalog: false)
    _ = h.connect(testUpdate: .required(.incremental))
    #expect(h.delegate.calls.first == .started(installed, cancelable: false))
    #expect(h.delegate.cancelables.count == 1 && h.delegate.cancelables[0] == nil)
    #expect(h.terminal.connectionStatus == .connected)
  }

  @Test(arguments: [0.0, 0.5])
  func cancellingARequiredUpdateFailsTheConnectWithUnsupportedReaderVersion(at point: Double) throws {
    let h = UpdateHarness(withCatalog: false)
    let answer = Outcome<CancelResult>()
    h.delegate.onProgress { progress in
      guard Double(progress) >= point, answer.count == 0, let handle = h.delegate.cancelables.last ?? nil else {
        return
      }
      handle.cancelAndReport(answer.record)
    }
    let result = h.connect(testUpdate: .required(TestReaderUpdate.fullUpdate))
    #expect(result?.failure?.code == .unsupportedReaderVersion)
    #expect(answer.value == .canceled)
    #expect(h.version() == installed, "the reader keeps its version")
    #expect(h.delegate.calls.filter { if case .finished = $0 { true } else { false } } == [.finished(next, .canceled)])
    #expect(!h.log.names.contains("didConnect"))
    #expect(h.terminal.connectionStatus == .notConnected)
    // A second cancel answers the same, and never runs twice.
    let again = Outcome<CancelResult>()
    h.delegate.cancelables.last??.cancelAndReport(again.record)
    #expect(again.value == .canceled)
  }

  @Test func cancellingAfterTheInstallFinishedHasNothingToCancel() {
    let h = UpdateHarness(withCatalog: false)
    _ = h.connect(testUpdate: .required(TestReaderUpdate.fullUpdate))
    let answer = Outcome<CancelResult>()
    h.delegate.cancelables.last??.cancelAndReport(answer.record)
    #expect(answer.value == .nothingToCancel)
    #expect(h.terminal.connectionStatus == .connected)
  }

  @Test func aLowBatteryFailsTheConnectUnlessTheReaderRunsRecentSoftware() {
    let failing = UpdateHarness(withCatalog: false)
    #expect(failing.connect(testUpdate: .lowBattery())?.failure?.code == .readerSoftwareUpdateFailedBatteryLow)
    #expect(failing.delegate.calls.map { if case .finished = $0 { "finish" } else { "\($0)" } }.last == "finish")
    #expect(failing.terminal.connectionStatus == .notConnected)

    let connecting = UpdateHarness(withCatalog: false)
    let reader = try? connecting.connect(testUpdate: .lowBatterySucceedConnect())?.get()
    #expect(reader?.availableUpdate?.deviceSoftwareVersion == next, "the update stays pending")
    #expect(reader?.deviceSoftwareVersion == installed)
    #expect(connecting.delegate.calls.contains(.finished(next, .readerSoftwareUpdateFailedBatteryLow)))
    #expect(connecting.delegate.calls.last == .available(next))
  }

  @Test func aConnectRetriedFromTheCompletionOfOneFailedByItsUpdateConnects() throws {
    let h = UpdateHarness(withCatalog: false)
    let found = DiscoveryRecorder(clock: h.clock)
    h.terminal.discoverReaders(try Harness.scan, delegate: found) { _ in }
    h.clock.advance(by: .seconds(2))
    let reader = try #require(found.updates.last?.first { $0.serialNumber == Fixture.m2 })
    let lowBattery = try BluetoothConnectionConfigurationBuilder(delegate: h.delegate, locationId: Fixture.location)
      .setTestReaderUpdate(.lowBattery()).build()
    let plain = try BluetoothConnectionConfigurationBuilder(delegate: h.delegate, locationId: Fixture.location).build()
    let first = Outcome<Result<Reader, ReaderError>>()
    let retry = Outcome<Result<Reader, ReaderError>>()
    let terminal = h.terminal
    terminal.connectReader(reader, connectionConfig: lowBattery) { result in
      first.record(result)
      terminal.connectReader(reader, connectionConfig: plain, completion: retry.record)
    }
    h.clock.advance(by: .seconds(30))
    #expect(first.value?.failure?.code == .readerSoftwareUpdateFailedBatteryLow)
    #expect((try? retry.value?.get())?.serialNumber == Fixture.m2, "\(String(describing: retry.value))")
  }

  @Test func aReaderErrorFailsTheConnectAndTheReaderKeepsItsVersion() {
    let h = UpdateHarness(withCatalog: false)
    #expect(h.connect(testUpdate: .failing(atProgress: 0.5))?.failure?.code == .readerSoftwareUpdateFailedReaderError)
    #expect(h.version() == installed)
    #expect(h.delegate.progress.allSatisfy { $0 < 1 })
  }

  @Test(arguments: 1...9)
  func aReaderLostMidInstallIsNeverReportedConnectedAndKeepsItsVersion(tenth: Int) throws {
    let h = UpdateHarness()
    let progress = Double(tenth) / 10
    let result = h.connect(testUpdate: .interrupted(atProgress: progress))
    #expect(result?.failure?.code == .readerSoftwareUpdateFailedInterrupted, "at \(progress)")
    #expect(h.version() == installed, "no half-installed state at \(progress)")
    #expect(!h.log.names.contains("didConnect"))
    #expect(!h.log.statusChanges.contains(.connected))
    #expect(h.delegate.calls.filter { if case .started = $0 { true } else { false } }.count == 1)
    #expect(h.delegate.calls.filter { if case .finished = $0 { true } else { false } }.count == 1)
    #expect(h.worldKinds().contains("updateInterrupted"))
  }

  @Test func theNextConnectionRetriesAnInterruptedUpdate() throws {
    let h = UpdateHarness()
    try h.release(next, requiredIn: -60)
    h.world.dropLinkDuringNextUpdate(Fixture.m2, atProgress: 0.4)
    #expect(h.connect()?.failure?.code == .readerSoftwareUpdateFailedInterrupted)
    #expect(h.version() == installed)
    let reader = try #require(try h.connect()?.get())
    #expect(reader.deviceSoftwareVersion == next)
    #expect(h.version() == next)
  }
}

@Suite struct TerminalOptionalUpdateTests {
  @Test func anOptionalUpdateIsReportedAfterTheConnectAndNotInstalled() throws {
    let h = UpdateHarness(withCatalog: false)
    let reader = try #require(try h.connect(testUpdate: .available([.config]))?.get())
    #expect(reader.availableUpdate?.deviceSoftwareVersion == next)
    #expect(h.terminal.connectedReader?.availableUpdate?.isTestUpdate == true)
    #expect(h.delegate.calls == [.available(next)])
    let names = h.log.namesWithoutStatus
    #expect(try #require(names.firstIndex(of: "didConnect")) < (names.firstIndex(of: "didReportAvailableUpdate") ?? -1))
    #expect(h.version() == installed)
  }

  @Test func installAvailableUpdateInstallsItWhileTheReaderStaysConnected() throws {
    let h = UpdateHarness(withCatalog: false)
    _ = h.connect(testUpdate: .available(TestReaderUpdate.fullUpdate))
    let installed = Outcome<ReaderError?>()
    h.terminal.installAvailableUpdate(completion: installed.record)
    // A command issued during the install waits its turn.
    let rebooted = Outcome<ReaderError?>()
    h.clock.advance(by: .seconds(5))
    h.terminal.rebootReader(completion: rebooted.record)
    h.clock.advance(by: .seconds(10))
    #expect(rebooted.count == 0, "the reboot waits for the install")
    #expect(h.terminal.connectionStatus == .connected)
    h.clock.advance(by: .seconds(60))
    #expect(installed.value == .some(nil))
    #expect(h.terminal.connectedReader?.deviceSoftwareVersion == next)
    #expect(h.terminal.connectedReader?.availableUpdate == nil)
    #expect(h.version() == next)
    #expect(h.log.names.filter { $0 == "didFinishInstallingUpdate" }.count == 1)
    h.clock.advance(by: .seconds(1))
    #expect(rebooted.value == .some(nil), "then the reboot runs")
  }

  @Test func installAvailableUpdateWithNothingAvailableFinishesAtOnceWithNothing() {
    let h = UpdateHarness(withCatalog: false)
    _ = h.connect()
    let done = Outcome<ReaderError?>()
    h.terminal.installAvailableUpdate(completion: done.record)
    h.clock.runUntilIdle()
    #expect(done.value == .some(nil))
    #expect(h.delegate.calls == [.finished(nil, nil)])
  }

  @Test func installAvailableUpdateWithoutAReaderFailsWithNotConnected() {
    let h = UpdateHarness(withCatalog: false)
    let done = Outcome<ReaderError?>()
    h.terminal.installAvailableUpdate(completion: done.record)
    h.clock.runUntilIdle()
    #expect(done.value??.code == .notConnected)
  }

  @Test func anOptionalUpdateSurvivesAnAutomaticReconnection() throws {
    let h = UpdateHarness()
    try h.release(next, requiredIn: 7 * 86_400)
    _ = h.connect()
    #expect(h.delegate.calls == [.available(next)])
    h.world.walkAway(Fixture.m2, for: .seconds(10))
    h.clock.advance(by: .seconds(60))
    #expect(h.delegate.calls.last == .succeededReconnect)
    #expect(h.terminal.connectedReader?.availableUpdate?.deviceSoftwareVersion == next)
    #expect(h.delegate.calls.filter { $0 == .available(next) }.count == 1, "reported once")
  }

  @Test func anUpdateOfferedWhileConnectedAndIdleIsReported() throws {
    let h = UpdateHarness()
    _ = h.connect()
    #expect(h.delegate.calls.isEmpty)
    try h.release(next, requiredIn: 14 * 86_400)
    h.clock.advance(by: .seconds(3600))
    #expect(h.delegate.calls == [.available(next)])
    #expect(h.terminal.connectedReader?.availableUpdate?.deviceSoftwareVersion == next)
    #expect(h.version() == installed, "nothing is installed")
  }

  @Test func onceRequiredAtHasPassedTheUpdateInstallsAtTheNextConnection() throws {
    let h = UpdateHarness()
    try h.release(next, requiredIn: 3 * 86_400)
    _ = h.connect()
    #expect(h.version() == installed)
    let disconnected = Outcome<ReaderError?>()
    h.terminal.disconnectReader(completion: disconnected.record)
    h.clock.advance(by: .seconds(4 * 86_400))
    let reader = try #require(try h.connect()?.get())
    #expect(reader.deviceSoftwareVersion == next)
    #expect(h.delegate.calls.contains(.started(next, cancelable: true)))
  }
}

@Suite struct TerminalUpdateCatalogTests {
  @Test func aCatalogThatCannotAnswerFailsTheConnectWithAServerError() {
    let h = UpdateHarness()
    h.catalog.failNextCheck(with: ReaderError(.updateCatalogUnavailable, "503", context: ["status": "503"]))
    let failure = h.connect()?.failure
    #expect(failure?.code == .readerSoftwareUpdateFailedServerError)
    #expect(failure?.context["cause"] == "updateCatalogUnavailable")
    #expect(failure?.context["status"] == "503")
  }

  @Test func anImageWithTheWrongDigestIsRefusedAndTheReaderIsUntouched() throws {
    let h = UpdateHarness()
    // Released 60 days ago: the grace rule does not apply, so the connect fails.
    try h.release(next, requiredIn: -60, releasedAgo: 60 * 86_400, publishedBytes: Data(repeating: 0x5A, count: 4096))
    let failure = h.connect()?.failure
    #expect(failure?.code == .readerSoftwareUpdateFailedServerError)
    #expect(failure?.context["cause"] == "firmwareImageRejected")
    #expect(!h.worldKinds().contains("updateStarted"), "not a byte went to the reader")
    #expect(h.version() == installed)
  }

  @Test func theImageIsVerifiedAndSentToTheReader() throws {
    let h = UpdateHarness()
    try h.release(next, requiredIn: -60)
    let reader = try #require(try h.connect()?.get())
    #expect(reader.deviceSoftwareVersion == next)
    #expect(h.catalog.imageRequests.count == 1)
  }

  @Test func aRebootedReaderGetsItsRequiredUpdateDuringTheReconnection() throws {
    let h = UpdateHarness()
    _ = h.connect()
    try h.release(next, requiredIn: -60)
    let rebooted = Outcome<ReaderError?>()
    h.terminal.rebootReader(completion: rebooted.record)
    h.clock.advance(by: .seconds(20))
    #expect(h.terminal.connectionStatus == .reconnecting, "installing during the reconnection")
    h.clock.advance(by: .seconds(120))
    #expect(rebooted.value == .some(nil))
    #expect(h.terminal.connectionStatus == .connected)
    #expect(h.terminal.connectedReader?.deviceSoftwareVersion == next)
    let calls = h.delegate.calls.filter { if case .progress = $0 { false } else { true } }
    #expect(calls == [.started(next, cancelable: true), .finished(next, nil), .succeededReconnect])
  }

  @Test(arguments: [(29 * 24 + 23, true), (30 * 24 + 1, false)])
  func theGraceRuleCountsThirtyDaysOnTheVirtualClock(hours: Int, connects: Bool) throws {
    // M2 on its dock; the release that superseded its version came out when the simulation began.
    let h = UpdateHarness()
    try h.release(next, requiredIn: 60, releasedAgo: 0)
    h.clock.advance(by: .seconds(hours * 3600))
    h.world.failNextUpdate(Fixture.m2, atProgress: 0.3)
    let result = h.connect()
    if connects {
      #expect((try? result?.get())?.availableUpdate?.deviceSoftwareVersion == next, "\(hours) h")
    } else {
      #expect(result?.failure?.code == .readerSoftwareUpdateFailedReaderError, "\(hours) h")
    }
    #expect(h.version() == installed)
  }
}

@Suite struct TerminalUpdateSoakTests {
  @Test func everyInstallStartsAndFinishesOnceWhateverHappensAndTheReaderIsNeverHalfInstalled() {
    for seed in UInt64(1)...40 {
      var random = SeededRandom(seed: seed)
      let h = UpdateHarness(seed: seed, withCatalog: false)
      let kinds: [TestReaderUpdate] = [
        .required(TestReaderUpdate.fullUpdate), .required(.incremental), .lowBattery(), .lowBatterySucceedConnect(),
        .failing(atProgress: random.nextUnit()), .interrupted(atProgress: random.nextUnit()), .random(),
        .available([.keys]),
      ]
      let kind = kinds[Int(random.next() % UInt64(kinds.count))]
      let cancelAt = random.next() % 3 == 0 ? Float(random.nextUnit()) : nil
      let dropAt = random.next() % 3 == 0 ? random.nextUnit() * 80 : nil
      h.delegate.onProgress { progress in
        if let cancelAt, progress >= cancelAt { h.delegate.cancelables.last??.cancel() }
      }
      guard let started = h.startConnect(testUpdate: kind) else { continue }
      if let dropAt {
        h.clock.advance(by: .seconds(dropAt))
        if random.next() % 2 == 0 { h.world.dropLink(Fixture.m2) } else { h.world.setPower(Fixture.m2, on: false) }
      }
      if random.next() % 4 == 0 { started.connect.cancel() }
      h.clock.advance(by: .seconds(300))

      let calls = h.delegate.calls
      let starts = calls.filter { if case .started = $0 { true } else { false } }.count
      let finishes = calls.compactMap { if case .finished(let version, let code) = $0 { (version, code) } else { nil } }
      #expect(starts == finishes.count, "seed \(seed) \(kind): \(starts) starts, \(finishes.count) finishes")
      #expect(h.delegate.progress == h.delegate.progress.sorted(), "seed \(seed): progress went back")
      #expect(started.result.count == 1, "seed \(seed): the connect completed \(started.result.count) times")
      // Ground truth: the reader runs the new version exactly when an install succeeded.
      let succeeded = finishes.contains { $0.1 == nil }
      let version = h.version()
      #expect(version == (succeeded ? versionAfter(kind) : installed), "seed \(seed): reader runs \(version ?? "-")")
      if case .success(let reader)? = started.result.value {
        #expect(reader.deviceSoftwareVersion == version, "seed \(seed): the terminal and the reader disagree")
      }
      if finishes.contains(where: { $0.1 == .readerSoftwareUpdateFailedInterrupted }) {
        #expect(started.result.value?.failure != nil, "seed \(seed): connected a reader lost mid-install")
      }
    }
  }

  private func versionAfter(_ kind: TestReaderUpdate) -> String {
    kind.components == .incremental ? installed : next
  }
}
