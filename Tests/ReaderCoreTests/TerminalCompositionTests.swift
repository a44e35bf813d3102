import Foundation
import Testing

@testable import ReaderCore

// The rules the terminal machine holds as the composer of the lifecycle machines: what it knows of
// the radio, how a launch completes, and how outputs that concern another child are routed.

private typealias Action = TerminalStateMachine.Action

private let serial = "STRM2-0001"
private let location = "tml_123"
private let settings = ConnectionSettings(
  unchecked: location, autoReconnect: true, policy: ReconnectPolicy(jitter: 0), connectTimeout: .seconds(15))
private let info = ReaderInfo(deviceSoftwareVersion: "2.3.1", batteryLevel: 0.8, isCharging: false)
private let heard = Reader(serialNumber: serial, deviceType: .stripeM2, simulated: true)
private let saved = SavedReader(serialNumber: serial, locationId: location, deviceType: .stripeM2, simulated: true)
private let scan = TerminalStateMachine.Command.discover(.bluetoothScan(timeout: nil), simulated: true)
private let advertisement = Advertisement(serialNumber: serial, deviceType: .stripeM2, signalStrength: -40, info: info)

private func reports(_ actions: [Action]) -> [TerminalEvent.Kind] {
  actions.compactMap { if case .report(let kind, _) = $0 { kind } else { nil } }
}

private func completion(_ id: TerminalStateMachine.JobID, in actions: [Action]) -> Result<Reader?, ReaderError>? {
  for case .complete(id, let result) in actions { return result }
  return nil
}

private func position(_ actions: [Action], _ matches: (Action) -> Bool) -> Int? {
  actions.firstIndex(where: matches)
}

/// A launch that found the saved reader and whose link came up: it waits for the store.
private func launchedAndLinked(_ machine: inout TerminalStateMachine) -> [Action] {
  _ = machine.handle(.submit(1, .launch(timeout: .seconds(30), autoReconnect: true)), now: .zero)
  _ = machine.handle(.savedReaderLoaded(.success(saved)), now: .zero)
  _ = machine.handle(.bluetooth(.advertisement(advertisement)), now: .milliseconds(100))
  _ = machine.handle(.timerFired(.discovery(.tick)), now: .milliseconds(500))
  return machine.handle(.bluetooth(.didConnect(serialNumber: serial, info: info)), now: .seconds(2))
}

@Suite struct TerminalCompositionTests {
  @Test func theRadioIsWhatItLastSaidNotWhatTheDriverReadsFromTheHardware() {
    var machine = TerminalStateMachine(seed: 1, radioOn: false)
    let start = machine.handle(.submit(1, scan), now: .zero)
    #expect(completion(1, in: start)?.failure?.code == .bluetoothDisabled, "a radio that starts off")
    #expect(!start.contains(.startScan))

    _ = machine.handle(.bluetooth(.radioStateChanged(isPoweredOn: true)), now: .seconds(1))
    let again = machine.handle(.submit(2, scan), now: .seconds(1))
    #expect(again.contains(.startScan), "the radio said it is on")
    #expect(completion(2, in: again) == nil)
  }

  @Test func aLaunchCompletesOnlyOnceItsReaderIsSaved() {
    var machine = TerminalStateMachine(seed: 1)
    let linked = launchedAndLinked(&machine)
    #expect(reports(linked).contains { if case .didConnect = $0 { true } else { false } })
    #expect(completion(1, in: linked) == nil, "the store has not answered")
    #expect(!reports(linked).contains(.didFinishLaunchReconnect(nil)))

    let savedNow = machine.handle(.readerSaved(serialNumber: serial, error: nil), now: .seconds(2))
    #expect(reports(savedNow) == [.didSaveReader(serialNumber: serial, error: nil), .didFinishLaunchReconnect(nil)])
    #expect((try? completion(1, in: savedNow)?.get())??.serialNumber == serial)
  }

  @Test func aLaunchWhoseReaderIsLostBeforeTheSaveCompletesBeforeTheLossIsReported() {
    var machine = TerminalStateMachine(seed: 1)
    _ = launchedAndLinked(&machine)
    let lost = machine.handle(
      .bluetooth(.didDisconnect(serialNumber: serial, reason: .bluetoothSignalLost)), now: .seconds(3))
    let finished = position(lost) { if case .report(.didFinishLaunchReconnect(nil), _) = $0 { true } else { false } }
    let completed = position(lost) { if case .complete(1, .success) = $0 { true } else { false } }
    let reconnecting = position(lost) { if case .report(.didStartReconnect, _) = $0 { true } else { false } }
    #expect(finished != nil && completed != nil && reconnecting != nil)
    #expect((finished ?? .max) < (completed ?? .max) && (completed ?? .max) < (reconnecting ?? -1))
    #expect(
      machine.handle(.readerSaved(serialNumber: serial, error: nil), now: .seconds(3)).filter {
        if case .complete = $0 { true } else { false }
      }.isEmpty, "the launch completes once")
  }

  @Test func aDiscoveryTickThatFindsTheLaunchsReaderIsRoutedWholeBeforeTheLaunchConnects() {
    var machine = TerminalStateMachine(seed: 1)
    _ = machine.handle(.submit(1, .launch(timeout: .seconds(30), autoReconnect: true)), now: .zero)
    _ = machine.handle(.savedReaderLoaded(.success(saved)), now: .zero)
    _ = machine.handle(.bluetooth(.advertisement(advertisement)), now: .milliseconds(100))
    let tick = machine.handle(.timerFired(.discovery(.tick)), now: .milliseconds(500))
    // The tick's batch (its report, then its next tick) is routed before the launch hears of it.
    let rearmed = position(tick) { $0 == .arm(.discovery(.tick), after: DiscoveryTuning().updateInterval) }
    let found = position(tick) { if case .report(.didFindSavedReader, _) = $0 { true } else { false } }
    let ended = position(tick) { if case .report(.didFinishDiscovery(nil), _) = $0 { true } else { false } }
    let link = position(tick) { $0 == .openLink(serialNumber: serial) }
    #expect(rearmed != nil && found != nil && ended != nil && link != nil, "\(tick)")
    #expect((rearmed ?? .max) < (found ?? -1) && (found ?? .max) < (ended ?? -1) && (ended ?? .max) < (link ?? -1))
    #expect(tick.contains(.disarm(.discovery(.tick))), "the discovery that ended leaves no tick behind")
  }

  @Test func aTestUpdateThatDropsTheLinkLetsGoOfItAndTheConnectFailsInterrupted() {
    var machine = TerminalStateMachine(seed: 1)
    var withUpdate = settings
    withUpdate.testUpdate = .interrupted(atProgress: 0.5)
    _ = machine.handle(.bluetooth(.advertisement(advertisement)), now: .zero)
    _ = machine.handle(.submit(1, .connect(heard, withUpdate)), now: .zero)
    let up = machine.handle(.bluetooth(.didConnect(serialNumber: serial, info: info)), now: .seconds(1))
    #expect(up.contains { if case .installUpdate = $0 { true } else { false } })
    _ = machine.handle(.readerLink(.updateProgress(serialNumber: serial, progress: 0.3)), now: .seconds(2))
    let dropped = machine.handle(.readerLink(.updateProgress(serialNumber: serial, progress: 0.5)), now: .seconds(3))
    let finished = position(dropped) { if case .report(.didFinishInstallingUpdate, _) = $0 { true } else { false } }
    let abandoned = position(dropped) { $0 == .abandonLink(serialNumber: serial) }
    let failed = position(dropped) { if case .report(.didFailToConnect, _) = $0 { true } else { false } }
    #expect(finished != nil && abandoned != nil && failed != nil, "\(dropped)")
    #expect((finished ?? .max) < (abandoned ?? -1) && (abandoned ?? .max) < (failed ?? -1))
    #expect(completion(1, in: dropped)?.failure?.code == .readerSoftwareUpdateFailedInterrupted)
    #expect(machine.status == .notConnected)
  }

  @Test func onlyACancelledResultCountsAsCancelled() {
    #expect(TerminalStateMachine.wasCanceled(.failure(.canceled("connectReader"))))
    #expect(!TerminalStateMachine.wasCanceled(.failure(ReaderError(.readerNotFound, "gone"))))
    #expect(!TerminalStateMachine.wasCanceled(.success(nil)))
  }
}
