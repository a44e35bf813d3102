import Foundation
import Testing

@testable import ReaderCore

private typealias Action = SoftwareUpdateStateMachine.Action

private let epoch = Date(timeIntervalSince1970: 1_767_225_600)
private let reader: Reader = {
  var reader = Reader(serialNumber: "STRM2-0001", deviceType: .stripeM2, simulated: true)
  reader.deviceSoftwareVersion = "2.3.1"
  reader.locationId = "tml_1"
  reader.batteryLevel = 0.8
  return reader
}()

private func update(required: Bool, version: String = "2.4.0", components: UpdateComponent = [.firmware])
  -> ReaderSoftwareUpdate
{
  ReaderSoftwareUpdate(
    deviceSoftwareVersion: version, durationEstimate: .estimate1To2Minutes, components: components,
    requiredAt: epoch.addingTimeInterval(required ? -60 : 86_400))
}

private func offer(_ update: ReaderSoftwareUpdate?, supersededDaysAgo days: Double = 90) -> UpdateAvailability {
  UpdateAvailability(update: update, installedVersionSupersededAt: epoch.addingTimeInterval(-days * 86_400))
}

private func machine(catalog: Bool = true) -> SoftwareUpdateStateMachine {
  SoftwareUpdateStateMachine(settings: .init(hasCatalog: catalog, checkInterval: .seconds(3600), epoch: epoch))
}

private func reports(_ actions: [Action]) -> [TerminalEvent.Kind] {
  actions.compactMap { if case .report(let kind) = $0 { kind } else { nil } }
}

private func finishes(_ actions: [Action]) -> [ReaderError?] {
  reports(actions).compactMap { if case .didFinishInstallingUpdate(_, _, let error) = $0 { error } else { nil } }
}

private func sendsToTheReader(_ actions: [Action]) -> Bool {
  actions.contains { if case .installUpdate = $0 { true } else { false } }
}

/// A machine preparing `reader` with the catalog's answer `availability` (request 1).
private func preparing(_ availability: UpdateAvailability, machine m: inout SoftwareUpdateStateMachine) -> [Action] {
  var random = SeededRandom(seed: 1)
  _ = m.prepare(reader, now: .zero, random: &random)
  return m.catalogAnswered(request: 1, .success(availability), now: .zero, connectedReader: nil)
}

@Suite struct SoftwareUpdateStateMachineTests {
  @Test func aPreparedReaderIsCheckedAgainstTheCatalogFirst() throws {
    var m = machine()
    var random = SeededRandom(seed: 1)
    let installed = InstalledSoftware(
      deviceType: .stripeM2, serialNumber: reader.serialNumber, locationId: "tml_1",
      version: try SoftwareVersion("2.3.1"))
    #expect(m.prepare(reader, now: .zero, random: &random) == [.checkForUpdate(request: 1, installed, at: epoch)])
    #expect(!m.isIdle)
  }

  @Test func anAnswerToARequestNoLongerWaitedForIsDropped() {
    var m = machine()
    var random = SeededRandom(seed: 1)
    _ = m.prepare(reader, now: .zero, random: &random)
    #expect(m.catalogAnswered(request: 2, .success(offer(nil)), now: .zero, connectedReader: nil) == [])
    #expect(m.linkLost(serialNumber: reader.serialNumber, now: .zero) == [])
    #expect(
      m.catalogAnswered(request: 1, .success(offer(nil)), now: .zero, connectedReader: nil) == [],
      "the reader left: its answer no longer matters")
  }

  @Test func aCatalogThatCannotAnswerFailsAPreparationButNotAnIdleCheck() {
    var m = machine()
    var random = SeededRandom(seed: 1)
    _ = m.prepare(reader, now: .zero, random: &random)
    let down = ReaderError(.updateCatalogUnavailable, "down")
    let failed = m.catalogAnswered(request: 1, .failure(down), now: .zero, connectedReader: nil)
    guard case .preparationFailed(let error)? = failed.first else {
      Issue.record("expected preparationFailed, got \(failed)")
      return
    }
    #expect(error.code == .readerSoftwareUpdateFailedServerError)
    #expect(error.context["cause"] == "updateCatalogUnavailable")

    _ = m.checkTimerFired(connectedReader: reader, lineIsIdle: true, now: .seconds(3600))
    #expect(m.catalogAnswered(request: 2, .failure(down), now: .seconds(3600), connectedReader: reader) == [])
  }

  @Test func anOptionalUpdateIsAnnouncedOnlyWhenItDiffersFromTheOneTheReaderCarries() {
    var m = machine()
    let optional = update(required: false)
    var expected = reader
    expected.availableUpdate = optional
    #expect(preparing(offer(optional), machine: &m) == [.prepared(expected, announce: optional)])

    var carrying = reader
    carrying.availableUpdate = optional
    var random = SeededRandom(seed: 1)
    _ = m.prepare(carrying, now: .zero, random: &random)
    #expect(
      m.catalogAnswered(request: 2, .success(offer(optional)), now: .zero, connectedReader: nil) == [
        .prepared(expected, announce: nil)
      ])
  }

  @Test func whileConnectedARequiredUpdateIsOnlyOfferedAndOfferedOnce() {
    var m = machine()
    let required = update(required: true)
    _ = m.checkTimerFired(connectedReader: reader, lineIsIdle: true, now: .seconds(3600))
    var offered = reader
    offered.availableUpdate = required
    let answer = m.catalogAnswered(
      request: 1, .success(offer(required)), now: .seconds(3600), connectedReader: reader)
    #expect(
      answer == [.connectedReaderChanged(offered), .report(.didReportAvailableUpdate(offered, update: required))])
    #expect(!sendsToTheReader(answer))
    _ = m.checkTimerFired(connectedReader: offered, lineIsIdle: true, now: .seconds(7200))
    #expect(
      m.catalogAnswered(request: 2, .success(offer(required)), now: .seconds(7200), connectedReader: offered) == [])
  }

  @Test func theHourlyCheckRunsOnlyWhileConnectedIdleAndWithoutATestUpdate() {
    var m = machine()
    #expect(m.readerConnected() == [.arm(.check, after: .seconds(3600))])
    #expect(m.checkTimerFired(connectedReader: nil, lineIsIdle: true, now: .zero) == [], "not connected: it stops")
    #expect(
      m.checkTimerFired(connectedReader: reader, lineIsIdle: false, now: .zero) == [
        .arm(.check, after: .seconds(3600))
      ],
      "a command runs: only the next look is armed")
    m.connectionStarted(testUpdate: .available([.config]))
    #expect(m.readerConnected() == [], "a connection with a test update sees that update, not the catalog's")
    #expect(machine(catalog: false).readerConnected() == [])
  }

  @Test func aFailedRequiredUpdateConnectsOnlyByTheGraceRule() {
    let required = update(required: true)
    for (daysAgo, connects) in [(1.0, true), (60.0, false)] {
      var m = machine()
      _ = preparing(offer(required, supersededDaysAgo: daysAgo), machine: &m)
      let failed = m.readerFinished(
        serialNumber: reader.serialNumber, ReaderError(.readerSoftwareUpdateFailedReaderError, "no"), now: .zero,
        connectedReader: nil)
      var pending = reader
      pending.availableUpdate = required
      if connects {
        #expect(failed.last == .prepared(pending, announce: required), "\(daysAgo) days")
      } else {
        #expect(failed.last.map { if case .preparationFailed = $0 { true } else { false } } == true, "\(daysAgo) days")
      }
    }
  }

  @Test func aCancelledRequiredUpdateNeverConnects() {
    var m = machine()
    let checked = preparing(offer(update(required: true), supersededDaysAgo: 1), machine: &m)
    #expect(checked.contains(.openInstallHandle(1)))
    _ = m.cancelInstall(handle: 1, now: .seconds(1))
    let stopped = m.readerFinished(
      serialNumber: reader.serialNumber, .canceled("installUpdate"), now: .seconds(1), connectedReader: nil)
    guard case .preparationFailed(let error)? = stopped.last else {
      Issue.record("expected preparationFailed, got \(stopped)")
      return
    }
    #expect(error.code == .unsupportedReaderVersion)
    #expect(stopped.contains(.closeInstallHandle(1, canceled: true)))
  }

  @Test func aTestUpdateIsDrawnOnceAndAReconnectionSeesWhatIsStillPending() {
    var m = machine(catalog: false)
    m.connectionStarted(testUpdate: .available([.config]))
    var random = SeededRandom(seed: 1)
    guard case .prepared(let first, let announce)? = m.prepare(reader, now: .zero, random: &random).first else {
      Issue.record("expected prepared")
      return
    }
    #expect(announce?.isTestUpdate == true)
    let later = m.prepare(first, now: .seconds(600), random: &random)
    #expect(later == [.prepared(first, announce: nil)], "the same update, not announced again")
  }

  @Test func aTestUpdateRefusedForALowBatteryIsNeverSentToTheReader() {
    var m = machine(catalog: false)
    m.connectionStarted(testUpdate: .lowBattery())
    var random = SeededRandom(seed: 1)
    let actions = m.prepare(reader, now: .zero, random: &random)
    #expect(!sendsToTheReader(actions))
    let error = finishes(actions).first ?? nil
    #expect(error?.code == .readerSoftwareUpdateFailedBatteryLow)
    #expect(error?.context["batteryLevel"] == "80 %")
    #expect(actions.last.map { if case .preparationFailed = $0 { true } else { false } } == true)
  }

  @Test func aFailingTestUpdateStopsTheReaderAtItsProgress() {
    var m = machine(catalog: false)
    m.connectionStarted(testUpdate: .failing(atProgress: 0.5))
    var random = SeededRandom(seed: 1)
    #expect(sendsToTheReader(m.prepare(reader, now: .zero, random: &random)))
    #expect(m.readerProgress(serialNumber: reader.serialNumber, 0.48, now: .seconds(1)).isEmpty == false)
    let failed = m.readerProgress(serialNumber: reader.serialNumber, 0.5, now: .seconds(2))
    #expect(failed.contains(.cancelUpdate(serialNumber: reader.serialNumber)))
    #expect((finishes(failed).first ?? nil)?.code == .readerSoftwareUpdateFailedReaderError)
    #expect((finishes(failed).first ?? nil)?.context["progress"] == "50 %")
  }

  @Test func anInterruptedTestUpdateDropsTheLinkAfterReportingTheFinish() {
    var m = machine(catalog: false)
    m.connectionStarted(testUpdate: .interrupted(atProgress: 0.3))
    var random = SeededRandom(seed: 1)
    _ = m.prepare(reader, now: .zero, random: &random)
    let dropped = m.readerProgress(serialNumber: reader.serialNumber, 0.3, now: .seconds(1))
    guard case .dropLink(let serial, let error)? = dropped.last else {
      Issue.record("expected dropLink last, got \(dropped)")
      return
    }
    #expect(serial == reader.serialNumber && error.code == .readerSoftwareUpdateFailedInterrupted)
    #expect(!dropped.contains { if case .preparationFailed = $0 { true } else { false } }, "the link machine decides")
    #expect(finishes(dropped).count == 1)
  }

  @Test func aLinkLostMidInstallLeavesTheEndOfTheConnectionToTheLinkMachine() {
    var m = machine()
    _ = preparing(offer(update(required: true)), machine: &m)
    let lost = m.linkLost(serialNumber: reader.serialNumber, now: .seconds(5))
    guard case .interrupted(let error)? = lost.last else {
      Issue.record("expected interrupted, got \(lost)")
      return
    }
    #expect(error.code == .readerSoftwareUpdateFailedInterrupted)
    #expect(!lost.contains { if case .preparationFailed = $0 { true } else { false } })
    #expect(m.isIdle)
  }

  @Test func anAbandonedPreparationOnlyReports() {
    var m = machine()
    _ = preparing(offer(update(required: true)), machine: &m)
    let abandoned = m.abandon(now: .seconds(5))
    #expect(finishes(abandoned).first??.code == .canceled)
    #expect(
      !abandoned.contains {
        switch $0 {
        case .prepared, .preparationFailed, .interrupted, .dropLink: true
        default: false
        }
      })
  }

  @Test func theAppsInstallWithNothingAvailableFinishesAtOnce() {
    var m = machine()
    let actions = m.installAvailable(7, on: reader, notConnected: .notConnected(status: .connected), now: .zero)
    #expect(
      actions == [
        .report(.didFinishInstallingUpdate(reader, update: nil, error: nil)), .installFinished(7, .success(reader)),
      ])
    let without = m.installAvailable(8, on: nil, notConnected: .notConnected(status: .notConnected), now: .zero)
    #expect(without == [.installFinished(8, .failure(.notConnected(status: .notConnected)))])
  }

  @Test func theAppsInstallMakesTheConnectedReaderReadTheNewVersionBeforeItsFinishIsReported() {
    var m = machine()
    var carrying = reader
    carrying.availableUpdate = update(required: false)
    _ = m.installAvailable(3, on: carrying, notConnected: .notConnected(status: .connected), now: .zero)
    var connected = carrying
    connected.batteryLevel = 0.5  // What the link learnt since the install started.
    let done = m.readerFinished(serialNumber: reader.serialNumber, nil, now: .seconds(60), connectedReader: connected)
    var expected = connected
    expected.deviceSoftwareVersion = "2.4.0"
    expected.availableUpdate = nil
    let changed = done.firstIndex(of: .connectedReaderChanged(expected))
    let reported = done.firstIndex {
      if case .report(.didFinishInstallingUpdate(expected, _, nil)) = $0 { true } else { false }
    }
    #expect(changed != nil && reported != nil && changed! < reported!)
    #expect(done.last == .installFinished(3, .success(expected)))
  }

  @Test func aLateSuccessAfterAnUnconfirmedCancelIsBelievedOnce() {
    var m = machine()
    var carrying = reader
    carrying.availableUpdate = update(required: false)
    _ = m.installAvailable(3, on: carrying, notConnected: .notConnected(status: .connected), now: .zero)
    _ = m.cancelInstall(handle: 1, now: .seconds(1))
    let gaveUp = m.timerFired(.cancelReply, now: .seconds(11))
    #expect((finishes(gaveUp).first ?? nil)?.code == .canceled)
    var expected = carrying
    expected.deviceSoftwareVersion = "2.4.0"
    expected.availableUpdate = nil
    #expect(
      m.readerFinished(serialNumber: reader.serialNumber, nil, now: .seconds(20), connectedReader: carrying) == [
        .connectedReaderChanged(expected)
      ])
    #expect(
      m.readerFinished(serialNumber: reader.serialNumber, nil, now: .seconds(21), connectedReader: expected) == [])
  }

  @Test func aLateFinishAfterAConfirmedCancelIsIgnored() {
    var m = machine()
    var carrying = reader
    carrying.availableUpdate = update(required: false)
    _ = m.installAvailable(3, on: carrying, notConnected: .notConnected(status: .connected), now: .zero)
    _ = m.cancelInstall(handle: 1, now: .seconds(1))
    _ = m.readerFinished(
      serialNumber: reader.serialNumber, .canceled("installUpdate"), now: .seconds(2), connectedReader: carrying)
    #expect(m.readerFinished(serialNumber: reader.serialNumber, nil, now: .seconds(3), connectedReader: carrying) == [])
  }
}
