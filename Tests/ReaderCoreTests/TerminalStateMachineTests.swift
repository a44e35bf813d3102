import Foundation
import Testing

@testable import ReaderCore

private typealias Action = TerminalStateMachine.Action
private typealias Command = TerminalStateMachine.Command

private let serial = "STRM2-0001"
private let location = "tml_123"
private let settings = ConnectionSettings(
  unchecked: location, autoReconnect: true, policy: ReconnectPolicy(jitter: 0), connectTimeout: .seconds(15))
private let heardReader = Reader(serialNumber: serial, deviceType: .stripeM2, simulated: true)
private let info = ReaderInfo(deviceSoftwareVersion: "2.3.1", batteryLevel: 0.8, isCharging: false)
private let scanForever = Command.discover(.bluetoothScan(timeout: nil), simulated: true)

private func advertisement(_ serialNumber: String = serial, rssi: Int = -40) -> Advertisement {
  Advertisement(serialNumber: serialNumber, deviceType: .stripeM2, signalStrength: rssi, info: info)
}

/// A terminal machine with its clock and radio, fed one input at a time.
private struct Harness {
  var machine = TerminalStateMachine(seed: 1)
  var now = Duration.zero
  var radioOn = true

  init(realReadersSupported: Bool = true) {
    machine = TerminalStateMachine(seed: 1, realReadersSupported: realReadersSupported)
  }

  @discardableResult
  mutating func feed(_ input: TerminalStateMachine.Input) -> [Action] {
    machine.handle(input, now: now)
  }

  /// Hears the reader, then connects it (link up and saved): job 1 is the connect.
  mutating func connected() -> Reader {
    feed(.bluetooth(.advertisement(advertisement())))
    feed(.submit(1, .connect(heardReader, settings)))
    feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))
    let actions = feed(.readerSaved(serialNumber: serial, error: nil))
    guard let reader = completions(actions)[1].flatMap({ try? $0.get() }) else {
      Issue.record("test setup: the connect did not complete: \(actions)")
      return heardReaderConnected()
    }
    return reader
  }
}

private func reports(_ actions: [Action]) -> [TerminalEvent.Kind] {
  actions.compactMap { if case .report(let kind, _) = $0 { kind } else { nil } }
}

private func statuses(_ actions: [Action]) -> [ConnectionStatus] {
  actions.compactMap { if case .status(let status, _) = $0 { status } else { nil } }
}

private func completions(_ actions: [Action]) -> [TerminalStateMachine.JobID: Result<Reader?, ReaderError>] {
  var found: [TerminalStateMachine.JobID: Result<Reader?, ReaderError>] = [:]
  for case .complete(let id, let result) in actions { found[id] = result }
  return found
}

private func index(of action: Action, in actions: [Action], sourceLocation: SourceLocation = #_sourceLocation) -> Int {
  guard let index = actions.firstIndex(of: action) else {
    Issue.record("\(action) missing from \(actions)", sourceLocation: sourceLocation)
    return -1
  }
  return index
}

private func errorCode(_ result: Result<Reader?, ReaderError>?) -> ReaderError.Code? {
  if case .failure(let error) = result { return error.code }
  return nil
}

@Suite struct TerminalStateMachineCommandTests {
  @Test func aCommandIssuedWhileAnotherRunsWaitsItsTurn() {
    var h = Harness()
    let discovery = h.feed(.submit(1, scanForever))
    #expect(discovery.contains(.startScan))
    #expect(statuses(discovery) == [.discovering])
    let reboot = h.feed(.submit(2, .reboot))
    #expect(reports(reboot) == [.didQueueCommand(command: "rebootReader", position: 1)])
    #expect(!reboot.contains { if case .complete = $0 { true } else { false } }, "it waits, it does not fail")
    let cancel = h.feed(.cancel(1))
    let finished = index(of: .report(.didFinishDiscovery(.canceled("discoverReaders")), to: .stream), in: cancel)
    // Only then does the reboot run, and fails: nothing is connected.
    let rebootFails = cancel.firstIndex { if case .complete(2, .failure) = $0 { true } else { false } }
    #expect(errorCode(completions(cancel)[2]) == .notConnected)
    #expect(finished < (rebootFails ?? -1))
  }

  @Test func cancellingAWaitingCommandCompletesItWithCanceledAndNeverStartsIt() {
    var h = Harness()
    h.feed(.submit(1, scanForever))
    h.feed(.submit(2, scanForever))
    let cancel = h.feed(.cancel(2))
    #expect(cancel == [.complete(2, .failure(.canceled("discoverReaders")))])
    let end = h.feed(.cancel(1))
    #expect(completions(end).keys.sorted() == [1], "the cancelled one does not start after the first")
    #expect(h.feed(.cancel(2)) == [], "cancelling again finds nothing")
  }

  @Test func theNextCommandStartsOnlyAfterTheWholeInputThatFinishedTheLastOne() {
    var h = Harness()
    _ = h.connected()
    h.feed(.submit(2, .disconnect))
    h.feed(.submit(3, scanForever))
    let down = h.feed(.bluetooth(.didDisconnect(serialNumber: serial, reason: .disconnectRequested)))
    let disconnected = index(
      of: .report(.didDisconnect(heardReaderConnected(), reason: .disconnectRequested), to: .stream), in: down)
    let completed = index(of: .complete(2, .success(nil)), in: down)
    let scan = index(of: .startScan, in: down)
    #expect(disconnected < completed && completed < scan)
    #expect(
      statuses(down) == [.notConnected, .discovering], "the disconnect leaves notConnected before the scan starts")
  }
}

/// The reader `Harness.connected()` ends with.
private func heardReaderConnected() -> Reader {
  var reader = heardReader
  reader.apply(info)
  reader.locationId = location
  return reader
}

@Suite struct TerminalStateMachineConnectTests {
  @Test func connectingEndsTheRunningDiscoveryAndGoesStraightToConnecting() {
    var h = Harness()
    h.feed(.submit(1, scanForever))
    h.feed(.bluetooth(.advertisement(advertisement())))
    h.feed(.submit(9, .discover(.bluetoothScan(timeout: nil), simulated: true)))  // Queued behind it.
    let connect = h.feed(.submit(2, .connect(heardReader, settings)))
    #expect(statuses(connect) == [.connecting], "discovering → connecting, never notConnected in between")
    let status = index(of: .status(.connecting, connectedReader: nil), in: connect)
    let discoveryDone = index(of: .complete(1, .success(nil)), in: connect)
    let link = index(of: .openLink(serialNumber: serial), in: connect)
    #expect(status < discoveryDone, "the discovery's completion already reads connecting")
    #expect(discoveryDone < link, "the connect goes before the discovery queued behind the first")
    #expect(!connect.contains(.startScan))
  }

  @Test func aConnectQueuedBehindAWaitingDiscoveryEndsItAsItStarts() {
    var h = Harness()
    _ = h.connected()
    h.feed(.submit(2, .disconnect))
    h.feed(.submit(3, scanForever))
    h.feed(.submit(4, .connect(heardReader, settings)))
    let down = h.feed(.bluetooth(.didDisconnect(serialNumber: serial, reason: .disconnectRequested)))
    #expect(completions(down)[3].map { (try? $0.get()) == .some(nil) } == true, "the scan ended with success")
    #expect(down.contains(.openLink(serialNumber: serial)), "and the connect started at once")
  }

  @Test func aReaderNeverHeardCannotBeConnected() {
    var h = Harness()
    let actions = h.feed(.submit(1, .connect(heardReader, settings)))
    #expect(errorCode(completions(actions)[1]) == .readerNotFound)
    #expect(statuses(actions).isEmpty, "the status never moved")
  }

  @Test func aReaderHeardLongAgoIsListenedForThenConnected() {
    var h = Harness()
    h.feed(.bluetooth(.advertisement(advertisement())))
    h.now = .seconds(60)
    let connect = h.feed(.submit(1, .connect(heardReader, settings)))
    #expect(connect.contains(.startScan))
    #expect(connect.contains(.arm(.link(.locate), after: DiscoveryTuning().stalenessWindow)))
    #expect(!connect.contains(.openLink(serialNumber: serial)))
    #expect(statuses(connect) == [.connecting])
    h.now = .seconds(62)
    #expect(h.feed(.bluetooth(.advertisement(advertisement("WPC32-0002")))) == [], "another reader changes nothing")
    let heard = h.feed(.bluetooth(.advertisement(advertisement())))
    #expect(
      heard == [
        .disarm(.link(.locate)), .stopScan, .openLink(serialNumber: serial), .arm(.link(.connect), after: .seconds(15)),
      ])
  }

  @Test func aReaderThatStaysSilentFailsTheListeningConnect() {
    var h = Harness()
    h.feed(.bluetooth(.advertisement(advertisement())))
    h.now = .seconds(60)
    h.feed(.submit(1, .connect(heardReader, settings)))
    h.now = .seconds(66)
    let timeout = h.feed(.timerFired(.link(.locate)))
    #expect(timeout.contains(.stopScan))
    guard case .failure(let error)? = completions(timeout)[1] else {
      Issue.record("expected a failure, got \(timeout)")
      return
    }
    #expect(error.code == .readerNotFound)
    #expect(error.context["listened"] == "6")
    #expect(statuses(timeout) == [.notConnected])
  }

  @Test func aSuccessfulConnectIsSavedBeforeItCompletes() {
    var h = Harness()
    h.feed(.bluetooth(.advertisement(advertisement())))
    h.feed(.submit(1, .connect(heardReader, settings)))
    let up = h.feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))
    let reader = heardReaderConnected()
    #expect(reports(up).contains(.didConnect(reader)))
    #expect(
      up.contains(
        .saveReader(SavedReader(serialNumber: serial, locationId: location, deviceType: .stripeM2, simulated: true))))
    #expect(completions(up).isEmpty, "the connect waits for the store")
    #expect(statuses(up) == [.connected])
    let saved = h.feed(.readerSaved(serialNumber: serial, error: nil))
    #expect(
      saved == [.report(.didSaveReader(serialNumber: serial, error: nil), to: .stream), .complete(1, .success(reader))])
  }

  @Test func aFailedSaveStillCompletesTheConnectAndSaysSo() {
    var h = Harness()
    h.feed(.bluetooth(.advertisement(advertisement())))
    h.feed(.submit(1, .connect(heardReader, settings)))
    h.feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))
    let failure = ReaderError(.storeUnavailable, "disk full")
    let saved = h.feed(.readerSaved(serialNumber: serial, error: failure))
    #expect(reports(saved) == [.didSaveReader(serialNumber: serial, error: failure)])
    #expect(completions(saved)[1].flatMap { try? $0.get() }?.serialNumber == serial)
  }

  @Test func aReaderLostWhileItIsBeingSavedCompletesTheConnectFirst() {
    var h = Harness()
    h.feed(.bluetooth(.advertisement(advertisement())))
    h.feed(.submit(1, .connect(heardReader, settings)))
    h.feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))
    let lost = h.feed(.bluetooth(.didDisconnect(serialNumber: serial, reason: .bluetoothSignalLost)))
    let completed = index(of: .complete(1, .success(heardReaderConnected())), in: lost)
    let reconnecting = lost.firstIndex { if case .report(.didStartReconnect, _) = $0 { true } else { false } } ?? -1
    #expect(completed >= 0 && completed < reconnecting)
    #expect(completions(h.feed(.readerSaved(serialNumber: serial, error: nil))).isEmpty, "completed once")
  }

  @Test func connectingWhileConnectedFailsWithAlreadyConnected() {
    var h = Harness()
    _ = h.connected()
    let again = h.feed(.submit(2, .connect(heardReader, settings)))
    #expect(errorCode(completions(again)[2]) == .alreadyConnected)
  }

  @Test func realReadersNeedABackend() {
    var h = Harness(realReadersSupported: false)
    let real = h.feed(.submit(1, .discover(.bluetoothScan(timeout: nil), simulated: false)))
    #expect(errorCode(completions(real)[1]) == .bluetoothUnsupported)
    #expect(!real.contains(.startScan))
    let simulated = h.feed(.submit(2, scanForever))
    #expect(simulated.contains(.startScan))
    h.feed(.bluetooth(.advertisement(advertisement())))
    var realReader = heardReader
    realReader.simulated = false
    let connect = h.feed(.submit(3, .connect(realReader, settings)))
    #expect(errorCode(completions(connect)[3]) == .bluetoothUnsupported)
  }

  @Test func anAdvertisementCostsNoStatusWorkAndNoActions() {
    var h = Harness()
    h.feed(.submit(1, scanForever))
    for n in 0..<100 {
      #expect(h.feed(.bluetooth(.advertisement(advertisement("STRM2-\(n)")))) == [])
    }
    #expect(h.machine.status == .discovering)
  }
}

@Suite struct TerminalStateMachineLineTests {
  @Test func aReconnectionHoldsTheLineUntilItSucceeds() {
    var h = Harness()
    _ = h.connected()
    let lost = h.feed(.bluetooth(.didDisconnect(serialNumber: serial, reason: .bluetoothSignalLost)))
    #expect(lost.contains(.openReconnectHandle(1)))
    #expect(reports(lost).contains(.didStartReconnect(heardReaderConnected(), reason: .bluetoothSignalLost)))
    let queued = h.feed(.submit(2, .disconnect))
    #expect(reports(queued) == [.didQueueCommand(command: "disconnectReader", position: 1)])
    let back = h.feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))
    let succeeded = index(
      of: .report(.readerDidSucceedReconnect(heardReaderConnected()), to: .readerDelegate), in: back)
    let handle = index(of: .closeReconnectHandle(1, canceled: false), in: back)
    let disconnect = index(of: .closeLink(serialNumber: serial), in: back)
    #expect(succeeded < handle && handle < disconnect, "the line opens at the end of the reconnection")
  }

  @Test func anAcceptedRebootKeepsTheLineUntilTheReaderDrops() {
    var h = Harness()
    _ = h.connected()
    #expect(h.feed(.submit(2, .reboot)).contains(.reboot(serialNumber: serial)))
    h.feed(.submit(3, .disconnect))
    let accepted = h.feed(.readerLink(.rebootResponse(serialNumber: serial, error: nil)))
    #expect(accepted.contains(.complete(2, .success(nil))))
    #expect(!accepted.contains(.closeLink(serialNumber: serial)), "the disconnect waits for the drop")
    let dropped = h.feed(.bluetooth(.didDisconnect(serialNumber: serial, reason: .rebootRequested)))
    #expect(reports(dropped).contains(.didStartReconnect(heardReaderConnected(), reason: .rebootRequested)))
    #expect(!dropped.contains(.closeLink(serialNumber: serial)), "and then for the reconnection")
    let back = h.feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))
    #expect(back.contains(.closeLink(serialNumber: serial)))
  }

  @Test func aCommandQueuedBehindARebootTheReaderDropsWaitsForTheReconnection() {
    // One input fails the reboot (the reader dropped before answering) and starts the reconnection:
    // the queued disconnect must see the reconnection, not the instant between the two.
    var h = Harness()
    _ = h.connected()
    h.feed(.submit(2, .reboot))
    h.feed(.submit(3, .disconnect))
    let dropped = h.feed(.bluetooth(.didDisconnect(serialNumber: serial, reason: .bluetoothSignalLost)))
    #expect(errorCode(completions(dropped)[2]) == .rebootFailed)
    #expect(completions(dropped)[3] == nil, "the disconnect waits for the reconnection")
    let back = h.feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))
    #expect(back.contains(.closeLink(serialNumber: serial)))
  }

  @Test func aRebootAcceptedButNeverCarriedOutFreesTheLine() {
    var h = Harness()
    _ = h.connected()
    h.feed(.submit(2, .reboot))
    h.feed(.submit(3, .disconnect))
    h.feed(.readerLink(.rebootResponse(serialNumber: serial, error: nil)))
    let kept = h.feed(.timerFired(.link(.rebootDrop)))
    #expect(kept.contains(.closeLink(serialNumber: serial)))
    #expect(h.machine.status == .connected)
  }

  @Test func aStaleReconnectHandleCancelsNothing() {
    var h = Harness()
    _ = h.connected()
    h.feed(.bluetooth(.didDisconnect(serialNumber: serial, reason: .bluetoothSignalLost)))
    h.feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))
    h.feed(.bluetooth(.didDisconnect(serialNumber: serial, reason: .bluetoothSignalLost)))
    #expect(h.feed(.cancelReconnect(handle: 1)) == [], "handle 1 belongs to the first reconnection")
    let cancel = h.feed(.cancelReconnect(handle: 2))
    #expect(cancel.contains(.closeReconnectHandle(2, canceled: true)))
    #expect(statuses(cancel) == [.notConnected])
  }

  @Test func turningTheRadioOffEndsADiscovery() {
    var h = Harness()
    h.feed(.submit(1, scanForever))
    h.radioOn = false
    let off = h.feed(.bluetooth(.radioStateChanged(isPoweredOn: false)))
    #expect(errorCode(completions(off)[1]) == .bluetoothDisabled)
    #expect(statuses(off) == [.notConnected])
  }
}

@Suite struct TerminalStateMachineLaunchTests {
  private let saved = SavedReader(serialNumber: serial, locationId: location, deviceType: .stripeM2, simulated: true)

  @Test func nothingSavedEndsTheLaunchWithNil() {
    var h = Harness()
    #expect(h.feed(.submit(1, .launch(timeout: .seconds(30), autoReconnect: true))) == [.loadSavedReader])
    let loaded = h.feed(.savedReaderLoaded(.success(nil)))
    #expect(
      loaded == [
        .report(.didFindNoSavedReader, to: .stream), .report(.didFinishLaunchReconnect(nil), to: .stream),
        .complete(1, .success(nil)),
      ])
  }

  @Test func theSavedReaderIsFoundConnectedAndSaved() {
    var h = Harness()
    h.feed(.submit(1, .launch(timeout: .seconds(30), autoReconnect: true)))
    let loaded = h.feed(.savedReaderLoaded(.success(saved)))
    #expect(reports(loaded).first == .didStartLaunchReconnect(serialNumber: serial))
    #expect(loaded.contains(.arm(.launchTimeout, after: .seconds(30))))
    #expect(loaded.contains(.startScan))
    h.feed(.bluetooth(.advertisement(advertisement())))
    h.now = .milliseconds(500)
    let found = h.feed(.timerFired(.discovery(.tick)))
    #expect(
      reports(found).contains(
        .didFindSavedReader(
          Reader(serialNumber: serial, deviceType: .stripeM2, signalStrength: -40, simulated: true).applying(info))))
    #expect(found.contains(.disarm(.launchTimeout)))
    #expect(found.contains(.openLink(serialNumber: serial)))
    #expect(!statuses(found).contains(.notConnected), "discovering → connecting")
    h.feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))
    let done = h.feed(.readerSaved(serialNumber: serial, error: nil))
    #expect(reports(done).last == .didFinishLaunchReconnect(nil))
    #expect(completions(done)[1].flatMap { try? $0.get() }??.locationId == location)
  }

  @Test func aSavedReaderNotFoundInTimeEndsTheLaunchWithReaderNotFound() {
    var h = Harness()
    h.feed(.submit(1, .launch(timeout: .seconds(30), autoReconnect: true)))
    h.feed(.savedReaderLoaded(.success(saved)))
    h.now = .seconds(30)
    let timeout = h.feed(.timerFired(.launchTimeout))
    let error = ReaderError(
      .readerNotFound, "the saved reader was not found before the timeout",
      context: ["serialNumber": serial, "timeout": "30"])
    #expect(reports(timeout).suffix(2) == [.didFinishDiscovery(error), .didFinishLaunchReconnect(error)])
    #expect(completions(timeout)[1] == .failure(error))
    #expect(timeout.contains(.stopScan))
  }

  @Test func aStoreThatCannotBeReadEndsTheLaunch() {
    var h = Harness()
    h.feed(.submit(1, .launch(timeout: .seconds(30), autoReconnect: true)))
    let corrupt = ReaderError(.storeCorrupt, "bad json")
    let loaded = h.feed(.savedReaderLoaded(.failure(corrupt)))
    #expect(loaded == [.report(.didFinishLaunchReconnect(corrupt), to: .stream), .complete(1, .failure(corrupt))])
  }

  @Test func aLaunchWhileConnectedFailsWithAlreadyConnectedAfterSayingWhatItLooksFor() {
    var h = Harness()
    _ = h.connected()
    h.feed(.submit(2, .launch(timeout: .seconds(30), autoReconnect: true)))
    let loaded = h.feed(.savedReaderLoaded(.success(saved)))
    #expect(reports(loaded).first == .didStartLaunchReconnect(serialNumber: serial))
    #expect(errorCode(completions(loaded)[2]) == .alreadyConnected)
    #expect(!loaded.contains(.startScan))
  }

  @Test func cancellingWhileTheStoreLoadsEndsTheLaunchAndIgnoresTheAnswer() {
    var h = Harness()
    h.feed(.submit(1, .launch(timeout: .seconds(30), autoReconnect: true)))
    let cancel = h.feed(.cancel(1))
    #expect(completions(cancel)[1] == .failure(.canceled("reconnectToSavedReader")))
    #expect(h.feed(.savedReaderLoaded(.success(saved))) == [])
  }
}

extension Reader {
  fileprivate func applying(_ info: ReaderInfo) -> Reader {
    var reader = self
    reader.apply(info)
    return reader
  }
}

@Suite struct TerminalStateMachineUpdateTests {
  private let epoch = Date(timeIntervalSince1970: 1_767_225_600)
  private let image = FirmwareImage(
    url: URL(string: "https://updates.example/m2.bin")!, size: 3,
    sha256: SHA256Checksum(bytes: [UInt8](repeating: 1, count: 32))!)

  private func harness() -> Harness {
    var h = Harness()
    h.machine = TerminalStateMachine(
      seed: 1, updates: .init(hasCatalog: true, checkInterval: .seconds(3600), epoch: epoch))
    return h
  }

  private func availability(required: Bool) -> UpdateAvailability {
    UpdateAvailability(
      update: ReaderSoftwareUpdate(
        deviceSoftwareVersion: "2.4.0", durationEstimate: .estimate1To2Minutes, components: [.firmware],
        requiredAt: epoch.addingTimeInterval(required ? -60 : 86_400), image: image),
      installedVersionSupersededAt: epoch.addingTimeInterval(-90 * 86_400))
  }

  /// Connects up to the link coming up: the reader is being prepared.
  private func linked(_ h: inout Harness) -> [Action] {
    h.feed(.bluetooth(.advertisement(advertisement())))
    h.feed(.submit(1, .connect(heardReader, settings)))
    return h.feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))
  }

  @Test func aLinkThatComesUpIsCheckedBeforeTheReaderCountsAsConnected() throws {
    var h = harness()
    let up = linked(&h)
    let installed = InstalledSoftware(
      deviceType: .stripeM2, serialNumber: serial, locationId: location, version: try SoftwareVersion("2.3.1"))
    #expect(up.contains(.checkForUpdate(request: 1, installed, at: epoch)))
    #expect(!reports(up).contains { if case .didConnect = $0 { true } else { false } })
    #expect(h.machine.status == .connecting)
  }

  @Test func aRequiredUpdateIsFetchedVerifiedAndInstalledThenTheReaderConnects() throws {
    var h = harness()
    _ = linked(&h)
    let checked = h.feed(.updateChecked(request: 1, .success(availability(required: true))))
    #expect(checked.contains(.openInstallHandle(1)))
    #expect(checked.contains(.fetchImage(request: 2, image)))
    #expect(!checked.contains { if case .installUpdate = $0 { true } else { false } }, "not before it is verified")
    let bytes = Data([1, 2, 3])
    let fetched = h.feed(.imageFetched(request: 2, .success(bytes)))
    let update = try #require(availability(required: true).update)
    #expect(fetched.contains(.installUpdate(serialNumber: serial, update: update, image: bytes)))
    let done = h.feed(.readerLink(.updateFinished(serialNumber: serial, error: nil)))
    let finished = done.firstIndex { if case .report(.didFinishInstallingUpdate, _) = $0 { true } else { false } } ?? -1
    let connected = done.firstIndex { if case .report(.didConnect, _) = $0 { true } else { false } } ?? -1
    #expect(finished >= 0 && finished < connected)
    #expect(h.machine.status == .connected)
  }

  @Test func aReaderLostMidInstallFailsTheConnectWithTheInterruption() {
    var h = harness()
    _ = linked(&h)
    h.feed(.updateChecked(request: 1, .success(availability(required: true))))
    h.feed(.imageFetched(request: 2, .success(Data([1, 2, 3]))))
    let lost = h.feed(.bluetooth(.didDisconnect(serialNumber: serial, reason: .bluetoothSignalLost)))
    let kinds = reports(lost)
    let finish = kinds.firstIndex {
      if case .didFinishInstallingUpdate(_, _, let error) = $0 {
        error?.code == .readerSoftwareUpdateFailedInterrupted
      } else {
        false
      }
    }
    let failed = kinds.firstIndex {
      if case .didFailToConnect(_, let error) = $0 {
        error.code == .readerSoftwareUpdateFailedInterrupted
      } else {
        false
      }
    }
    #expect(finish != nil && failed != nil && finish! < failed!)
    #expect(errorCode(completions(lost)[1]) == .readerSoftwareUpdateFailedInterrupted)
    #expect(!kinds.contains { if case .didConnect = $0 { true } else { false } })
  }

  @Test func anOptionalUpdateIsReportedRightAfterDidConnect() {
    var h = harness()
    _ = linked(&h)
    let checked = reports(h.feed(.updateChecked(request: 1, .success(availability(required: false)))))
    let connected = checked.firstIndex { if case .didConnect = $0 { true } else { false } } ?? -1
    let available = checked.firstIndex { if case .didReportAvailableUpdate = $0 { true } else { false } } ?? -1
    #expect(connected >= 0 && connected < available)
  }

  @Test func aCatalogFailureIsNeverReadAsNoUpdate() {
    var h = harness()
    _ = linked(&h)
    let failed = h.feed(.updateChecked(request: 1, .failure(ReaderError(.updateCatalogTimedOut, "stalled"))))
    #expect(errorCode(completions(failed)[1]) == .readerSoftwareUpdateFailedServerError)
    #expect(failed.contains(.abandonLink(serialNumber: serial)), "let go of at once: no late link-down can hit a retry")
  }

  @Test func theCatalogIsAskedAgainOnlyWhileTheReaderIsConnectedAndIdle() {
    var h = harness()
    _ = linked(&h)
    let connected = h.feed(.updateChecked(request: 1, .success(.upToDate)))
    #expect(connected.contains(.arm(.updateCheck, after: .seconds(3600))))
    h.feed(.readerSaved(serialNumber: serial, error: nil))
    h.now = .seconds(3600)
    let check = h.feed(.timerFired(.updateCheck))
    #expect(check.contains { if case .checkForUpdate = $0 { true } else { false } })
    let offered = h.feed(.updateChecked(request: 2, .success(availability(required: true))))
    #expect(reports(offered).contains { if case .didReportAvailableUpdate = $0 { true } else { false } })
    #expect(!offered.contains { if case .fetchImage = $0 { true } else { false } }, "nothing installs while connected")
  }

  @Test func noCatalogCheckStartsWhileACommandRuns() {
    var h = harness()
    _ = linked(&h)
    h.feed(.updateChecked(request: 1, .success(.upToDate)))
    h.feed(.readerSaved(serialNumber: serial, error: nil))
    h.feed(.submit(2, .reboot))  // Waits for the reader's answer: the line is busy.
    h.now = .seconds(3600)
    let busy = h.feed(.timerFired(.updateCheck))
    #expect(!busy.contains { if case .checkForUpdate = $0 { true } else { false } })
    #expect(busy.contains(.arm(.updateCheck, after: .seconds(3600))), "it is tried again later")
  }

  @Test func aLateCatalogAnswerIsNotTakenForANewerRequests() {
    var h = harness()
    _ = linked(&h)
    h.feed(.updateChecked(request: 1, .success(.upToDate)))
    h.feed(.readerSaved(serialNumber: serial, error: nil))
    h.now = .seconds(3600)
    h.feed(.timerFired(.updateCheck))  // Request 2 goes out.
    h.feed(.submit(2, .disconnect))
    h.feed(.bluetooth(.didDisconnect(serialNumber: serial, reason: .disconnectRequested)))
    h.feed(.bluetooth(.advertisement(advertisement())))
    h.feed(.submit(3, .connect(heardReader, settings)))
    h.feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))  // Request 3 goes out.
    let late = h.feed(.updateChecked(request: 2, .success(availability(required: true))))
    #expect(late == [], "the answer to the old reader's check is dropped")
    let current = h.feed(.updateChecked(request: 3, .success(.upToDate)))
    #expect(reports(current).contains { if case .didConnect = $0 { true } else { false } })
  }

  @Test func aLateImageOfACancelledInstallIsDropped() {
    var h = harness()
    _ = linked(&h)
    let checked = h.feed(.updateChecked(request: 1, .success(availability(required: true))))
    #expect(checked.contains(.fetchImage(request: 2, image)))
    h.feed(.cancelInstall(handle: 1))
    #expect(h.feed(.imageFetched(request: 2, .failure(ReaderError(.updateCatalogUnavailable, "late")))) == [])
  }

  @Test func installAvailableUpdateDuringAnIdleCheckInstalls() {
    var h = harness()
    _ = linked(&h)
    h.feed(.updateChecked(request: 1, .success(availability(required: false))))
    h.feed(.readerSaved(serialNumber: serial, error: nil))
    h.now = .seconds(3600)
    h.feed(.timerFired(.updateCheck))
    let install = h.feed(.submit(2, .installUpdate))
    #expect(errorCode(completions(install)[2]) == nil, "never notConnected while connected")
    #expect(install.contains(.fetchImage(request: 3, image)))
    #expect(h.feed(.updateChecked(request: 2, .success(.upToDate))) == [], "the idle check's answer is dropped")
  }

  @Test func anInterruptionTheReaderReportsWithItsLinkUpEndsTheConnect() {
    var h = harness()
    _ = linked(&h)
    h.feed(.updateChecked(request: 1, .success(availability(required: true))))
    h.feed(.imageFetched(request: 2, .success(Data([1, 2, 3]))))
    let interrupted = ReaderError(.readerSoftwareUpdateFailedInterrupted, "the reader gave up")
    let finished = h.feed(.readerLink(.updateFinished(serialNumber: serial, error: interrupted)))
    #expect(errorCode(completions(finished)[1]) == .readerSoftwareUpdateFailedInterrupted)
    #expect(finished.contains(.abandonLink(serialNumber: serial)))
    #expect(h.machine.status == .notConnected)
  }

  @Test func anAppInstallReportsTheNewVersionAlreadyInPlace() {
    var h = harness()
    _ = linked(&h)
    h.feed(.updateChecked(request: 1, .success(availability(required: false))))
    h.feed(.readerSaved(serialNumber: serial, error: nil))
    h.feed(.submit(2, .installUpdate))
    h.feed(.imageFetched(request: 2, .success(Data([1, 2, 3]))))
    let done = h.feed(.readerLink(.updateFinished(serialNumber: serial, error: nil)))
    let status = done.firstIndex {
      if case .status(_, let reader) = $0 { reader?.deviceSoftwareVersion == "2.4.0" } else { false }
    }
    let finish = done.firstIndex {
      if case .report(.didFinishInstallingUpdate(let reader, _, nil), _) = $0 {
        reader.deviceSoftwareVersion == "2.4.0"
      } else {
        false
      }
    }
    #expect(status != nil && finish != nil && status! < finish!)
  }

  @Test func aLateSuccessAfterAnUnconfirmedCancelIsBelieved() {
    var h = harness()
    _ = linked(&h)
    h.feed(.updateChecked(request: 1, .success(availability(required: false))))
    h.feed(.readerSaved(serialNumber: serial, error: nil))
    h.feed(.submit(2, .installUpdate))
    h.feed(.imageFetched(request: 2, .success(Data([1, 2, 3]))))
    h.feed(.cancelInstall(handle: 1))
    h.now = .seconds(20)
    h.feed(.timerFired(.install(.cancelReply)))
    let late = h.feed(.readerLink(.updateFinished(serialNumber: serial, error: nil)))
    #expect(
      late.contains { if case .status(_, let reader) = $0 { reader?.deviceSoftwareVersion == "2.4.0" } else { false } })
  }
}

@Suite struct TerminalStateMachineReconnectInstallTests {
  @Test func aReconnectionWhoseReaderKeepsDroppingDuringItsInstallGivesUp() {
    var h = Harness()
    h.machine = TerminalStateMachine(seed: 1, updates: .init(hasCatalog: true))
    h.feed(.bluetooth(.advertisement(advertisement())))
    h.feed(.submit(1, .connect(heardReader, settings)))
    h.feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))
    h.feed(.updateChecked(request: 1, .success(.upToDate)))
    h.feed(.readerSaved(serialNumber: serial, error: nil))
    h.feed(.bluetooth(.didDisconnect(serialNumber: serial, reason: .bluetoothSignalLost)))
    h.feed(.submit(2, .disconnect))
    var ended: [Action] = []
    for round in 0..<10 where ended.isEmpty {
      h.feed(.bluetooth(.didConnect(serialNumber: serial, info: info)))  // Back: checked again.
      let lost = h.feed(.bluetooth(.didDisconnect(serialNumber: serial, reason: .bluetoothSignalLost)))
      if lost.contains(where: { if case .report(.readerDidFailReconnect, _) = $0 { true } else { false } }) {
        ended = lost
        #expect(round == ConnectionStateMachine.maximumPreparationLosses, "gave up after \(round) restarts")
      }
    }
    #expect(!ended.isEmpty, "the reconnection never ends")
    #expect(errorCode(completions(ended)[2]) == .notConnected, "the queued disconnect runs once it ends")
    #expect(h.machine.status == .notConnected)
  }
}
