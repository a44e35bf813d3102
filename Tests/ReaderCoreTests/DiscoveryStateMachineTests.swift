import Testing

@testable import ReaderCore

private typealias Action = DiscoveryStateMachine.Action

private let tuning = DiscoveryTuning()
private let interval = tuning.updateInterval

private func ad(
  _ serialNumber: String, _ deviceType: DeviceType = .stripeM2, rssi: Int, info: ReaderInfo = ReaderInfo()
) -> Advertisement {
  Advertisement(serialNumber: serialNumber, deviceType: deviceType, signalStrength: rssi, info: info)
}

/// The reader a report should carry for `advertisement`, built field by field.
private func expected(_ advertisement: Advertisement, simulated: Bool = false) -> Reader {
  Reader(
    serialNumber: advertisement.serialNumber, deviceType: advertisement.deviceType, label: advertisement.info.label,
    deviceSoftwareVersion: advertisement.info.deviceSoftwareVersion, batteryLevel: advertisement.info.batteryLevel,
    isCharging: advertisement.info.isCharging, signalStrength: advertisement.signalStrength, simulated: simulated)
}

/// What proximity's first report carries: the serial number (and model) only.
private func announced(_ advertisement: Advertisement, simulated: Bool = false) -> Reader {
  Reader(serialNumber: advertisement.serialNumber, deviceType: advertisement.deviceType, simulated: simulated)
}

/// A machine running a discovery with `method` since `start`.
private func started(_ method: DiscoveryMethod, simulated: Bool = false, at start: Duration = .zero)
  -> DiscoveryStateMachine
{
  var machine = DiscoveryStateMachine()
  _ = machine.start(method, simulated: simulated, radioOn: true, now: start)
  return machine
}

/// The ticks' instants: tick `n` fires at `n * updateInterval`.
private func tickTime(_ n: Int) -> Duration { interval * n }

private let scan = DiscoveryMethod.bluetoothScan(timeout: nil)
private let rearm = Action.arm(.tick, after: interval)
private let teardown: [Action] = [.disarm(.tick), .disarm(.timeout), .disarm(.proximityDetails), .stopScan]

@Suite struct DiscoveryStateMachineScanTests {
  @Test func startScansAndArmsTheUpdateTickAndTheTimeout() {
    var machine = DiscoveryStateMachine()
    #expect(!machine.isRunning)
    #expect(
      machine.start(.bluetoothScan(timeout: .seconds(10)), simulated: false, radioOn: true, now: .zero) == [
        .startScan, rearm, .arm(.timeout, after: .seconds(10)),
      ])
    #expect(machine.isRunning)
  }

  @Test(arguments: [nil, Duration.zero])
  func aScanWithoutATimeoutArmsNone(timeout: Duration?) {
    var machine = DiscoveryStateMachine()
    #expect(
      machine.start(.bluetoothScan(timeout: timeout), simulated: false, radioOn: true, now: .zero) == [
        .startScan, rearm,
      ])
  }

  @Test func startingWithTheRadioOffFailsWithBluetoothDisabled() {
    var machine = DiscoveryStateMachine()
    let actions = machine.start(.bluetoothScan(timeout: .seconds(5)), simulated: false, radioOn: false, now: .zero)
    guard case .finish(let error?) = actions.first, actions.count == 1 else {
      Issue.record("expected a lone finish with an error, got \(actions)")
      return
    }
    #expect(error.code == .bluetoothDisabled)
    #expect(!machine.isRunning)
    #expect(machine.finish(.canceled("discoverReaders")) == [], "nothing to stop: the scan never started")
    #expect(!machine.isRunning)
    let again = machine.start(.bluetoothScan(timeout: .seconds(5)), simulated: false, radioOn: true, now: .seconds(1))
    #expect(again.first == .startScan, "the terminal's discovery machine starts again once the radio is on")
  }

  @Test func startingTwiceIsIgnored() {
    var machine = started(scan)
    #expect(machine.start(scan, simulated: false, radioOn: true, now: .zero) == [])
    #expect(machine.start(scan, simulated: false, radioOn: false, now: .zero) == [])
    #expect(machine.isRunning)
  }

  @Test func readersAreReportedNearestFirstWithTiesBySerialNumber() {
    var machine = started(scan, simulated: true)
    let far = ad("STRM2-0003", rssi: -80, info: ReaderInfo(deviceSoftwareVersion: "2.0", label: "Back office"))
    let nearB = ad("WPC32-0002", .wisePad3, rssi: -45, info: ReaderInfo(batteryLevel: 0.5, isCharging: true))
    let nearA = ad("CHB20-0001", .chipper2X, rssi: -45)
    for advertisement in [far, nearB, nearA] { machine.advertisement(advertisement, now: .milliseconds(100)) }
    let readers = [nearA, nearB, far].map { expected($0, simulated: true) }
    #expect(machine.timerFired(.tick, now: tickTime(1)) == [.report(readers), rearm])
    #expect(machine.discoveredReaders == readers)
  }

  @Test func aBurstOfAdvertisementsYieldsOneReportPerInterval() {
    var machine = started(scan)
    for i in 0..<200 {
      machine.advertisement(ad("STRM2-\(i % 10)", rssi: -40 - i % 10), now: .milliseconds(2 * i))
    }
    let actions = machine.timerFired(.tick, now: tickTime(1))
    #expect(actions.count == 2)
    guard case .report(let readers) = actions.first else {
      Issue.record("expected a report, got \(actions)")
      return
    }
    #expect(readers.map(\.serialNumber) == (0..<10).map { "STRM2-\($0)" })
    #expect(machine.timerFired(.tick, now: tickTime(2)) == [rearm], "nothing changed since the last report")
  }

  @Test func nothingIsReportedBeforeAnyReaderIsHeard() {
    var machine = started(scan)
    for n in 1...5 { #expect(machine.timerFired(.tick, now: tickTime(n)) == [rearm]) }
    #expect(machine.discoveredReaders.isEmpty)
  }

  @Test func aSignalStrengthChangeThatKeepsTheOrderIsNotReported() {
    var machine = started(scan)
    machine.advertisement(ad("STRM2-A", rssi: -40), now: .zero)
    machine.advertisement(ad("STRM2-B", rssi: -60), now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    machine.advertisement(ad("STRM2-A", rssi: -50), now: tickTime(1))
    machine.advertisement(ad("STRM2-B", rssi: -55), now: tickTime(1))
    #expect(machine.timerFired(.tick, now: tickTime(2)) == [rearm])
  }

  @Test func aSignalStrengthChangeThatReordersIsReported() {
    var machine = started(scan)
    let a = ad("STRM2-A", rssi: -40)
    let b = ad("STRM2-B", rssi: -60)
    machine.advertisement(a, now: .zero)
    machine.advertisement(b, now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    let nearerB = ad("STRM2-B", rssi: -30)
    machine.advertisement(nearerB, now: tickTime(1))
    #expect(machine.timerFired(.tick, now: tickTime(2)) == [.report([expected(nearerB), expected(a)]), rearm])
  }

  @Test func aChangeInAReadersDetailsIsReported() {
    var machine = started(scan)
    machine.advertisement(ad("STRM2-A", rssi: -40, info: ReaderInfo(batteryLevel: 0.9)), now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    let drained = ad("STRM2-A", rssi: -40, info: ReaderInfo(batteryLevel: 0.3))
    machine.advertisement(drained, now: tickTime(1))
    #expect(machine.timerFired(.tick, now: tickTime(2)) == [.report([expected(drained)]), rearm])
  }

  @Test func aChangeInAReadersDetailsUndoneBeforeTheTickIsNotReported() {
    var machine = started(scan)
    let full = ad("STRM2-A", rssi: -40, info: ReaderInfo(batteryLevel: 0.9))
    machine.advertisement(full, now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    machine.advertisement(ad("STRM2-A", rssi: -40, info: ReaderInfo(batteryLevel: 0.3)), now: tickTime(1))
    machine.advertisement(ad("STRM2-A", rssi: -45, info: ReaderInfo(batteryLevel: 0.9)), now: tickTime(1))
    #expect(machine.timerFired(.tick, now: tickTime(2)) == [rearm])
    // Details heard again unchanged after a report still count as unchanged at the next one.
    let drained = ad("STRM2-A", rssi: -40, info: ReaderInfo(batteryLevel: 0.3))
    machine.advertisement(drained, now: tickTime(2))
    #expect(machine.timerFired(.tick, now: tickTime(3)) == [.report([expected(drained)]), rearm])
    machine.advertisement(drained, now: tickTime(3))
    #expect(machine.timerFired(.tick, now: tickTime(4)) == [rearm])
  }

  @Test func aNewReaderIsReported() {
    var machine = started(scan)
    let a = ad("STRM2-A", rssi: -40)
    machine.advertisement(a, now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    let b = ad("STRM2-B", rssi: -70)
    machine.advertisement(b, now: tickTime(1))
    #expect(machine.timerFired(.tick, now: tickTime(2)) == [.report([expected(a), expected(b)]), rearm])
  }

  @Test func aReaderSilentForTheStalenessWindowLeavesTheList() {
    var machine = started(scan)
    let silent = ad("STRM2-A", rssi: -40)
    let chatty = ad("STRM2-B", rssi: -60)
    machine.advertisement(silent, now: .zero)
    var n = 0
    var reports: [(Int, [Reader])] = []
    while tickTime(n) < tuning.stalenessWindow + interval {
      machine.advertisement(chatty, now: tickTime(n))
      n += 1
      for case .report(let readers) in machine.timerFired(.tick, now: tickTime(n)) { reports.append((n, readers)) }
    }
    #expect(reports.map(\.0) == [1, 12], "heard at 0 s, the reader is stale at exactly 6 s")
    #expect(reports.last?.1 == [expected(chatty)])
  }

  @Test func freshnessFollowsTheStalenessWindow() {
    var machine = started(scan)
    machine.advertisement(ad("STRM2-A", rssi: -40), now: .seconds(1))
    #expect(machine.isFresh("STRM2-A", now: .seconds(1)))
    #expect(machine.isFresh("STRM2-A", now: .seconds(1) + tuning.stalenessWindow - .nanoseconds(1)))
    #expect(!machine.isFresh("STRM2-A", now: .seconds(1) + tuning.stalenessWindow))
    #expect(!machine.isFresh("STRM2-B", now: .seconds(1)))
  }

  @Test func readersGoingSilentLeaveAnEmptyListReported() {
    var machine = started(scan)
    machine.advertisement(ad("STRM2-A", rssi: -40), now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    #expect(machine.timerFired(.tick, now: tuning.stalenessWindow) == [.report([]), rearm])
    #expect(machine.discoveredReaders.isEmpty)
    #expect(machine.timerFired(.tick, now: tuning.stalenessWindow + interval) == [rearm])
  }

  @Test func aTimeoutAfterFindingAReaderIsASuccess() {
    var machine = started(.bluetoothScan(timeout: .seconds(3)), simulated: false)
    machine.advertisement(ad("STRM2-A", rssi: -40), now: .seconds(1))
    _ = machine.timerFired(.tick, now: .milliseconds(1_500))
    #expect(machine.timerFired(.timeout, now: .seconds(3)) == teardown + [.finish(nil)])
    #expect(!machine.isRunning)
  }

  @Test func aReaderFirstHeardAfterTheLastTickIsReportedAndCountsAtTheTimeout() {
    var machine = started(.bluetoothScan(timeout: .seconds(3)), simulated: false)
    _ = machine.timerFired(.tick, now: .milliseconds(2_500))
    let late = ad("STRM2-A", rssi: -40)
    machine.advertisement(late, now: .milliseconds(2_900))
    // The timeout fires before the tick due at the same instant.
    #expect(machine.timerFired(.timeout, now: .seconds(3)) == [.report([expected(late)])] + teardown + [.finish(nil)])
  }

  @Test func aTimeoutAfterFindingReadersThatWentSilentIsStillASuccess() {
    var machine = started(.bluetoothScan(timeout: .seconds(30)), simulated: false)
    machine.advertisement(ad("STRM2-A", rssi: -40), now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    _ = machine.timerFired(.tick, now: .seconds(20))
    #expect(machine.discoveredReaders.isEmpty)
    #expect(machine.timerFired(.timeout, now: .seconds(30)) == teardown + [.finish(nil)])
  }

  @Test func aTimeoutWithNothingFoundFailsWithBluetoothScanTimedOut() {
    var machine = started(.bluetoothScan(timeout: .seconds(3)), simulated: false)
    _ = machine.timerFired(.tick, now: tickTime(1))
    let actions = machine.timerFired(.timeout, now: .seconds(3))
    #expect(Array(actions.dropLast()) == teardown)
    guard case .finish(let error?) = actions.last else {
      Issue.record("expected a failed finish, got \(actions)")
      return
    }
    #expect(error.code == .bluetoothScanTimedOut)
    #expect(error.context["timeout"] == "3")
  }

  @Test func aTimeoutTimerWithoutAConfiguredTimeoutIsIgnored() {
    var machine = started(scan)
    #expect(machine.timerFired(.timeout, now: .seconds(3)) == [])
    #expect(machine.isRunning)
  }

  @Test func finishStopsEverythingOnceAndIsIdempotent() {
    var machine = started(scan)
    machine.advertisement(ad("STRM2-A", rssi: -40), now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    #expect(machine.finish(.canceled("discoverReaders")) == teardown + [.finish(.canceled("discoverReaders"))])
    #expect(machine.finish(.canceled("discoverReaders")) == [])
    #expect(machine.finish(nil) == [])
    #expect(!machine.isRunning)
    #expect(machine.discoveredReaders.isEmpty)
  }

  @Test func lateTimersAfterTheFinishAreIgnoredButAdvertisementsAreStillRecorded() {
    var machine = started(.bluetoothScan(timeout: .seconds(3)))
    _ = machine.finish(nil)
    machine.advertisement(ad("STRM2-A", rssi: -40), now: .seconds(1))
    #expect(machine.isFresh("STRM2-A", now: .seconds(1)), "a connect listening for a reader needs to hear it")
    for timer in [DiscoveryStateMachine.Timer.tick, .timeout, .proximityDetails] {
      #expect(machine.timerFired(timer, now: .seconds(3)) == [], "\(timer)")
    }
    #expect(machine.discoveredReaders.isEmpty)
  }

  @Test func anAdvertisementHeardBeforeTheStartIsNotReportedByTheDiscovery() {
    var machine = DiscoveryStateMachine()
    machine.advertisement(ad("STRM2-A", rssi: -40), now: .milliseconds(500))
    #expect(machine.timerFired(.tick, now: tickTime(1)) == [], "no discovery runs")
    #expect(machine.finish(nil) == [])
    #expect(machine.start(scan, simulated: false, radioOn: true, now: .seconds(1)) == [.startScan, rearm])
    #expect(machine.timerFired(.tick, now: .seconds(1) + interval) == [rearm], "heard before this discovery started")
    let again = ad("STRM2-A", rssi: -41)
    machine.advertisement(again, now: .seconds(1) + interval)
    #expect(machine.timerFired(.tick, now: .seconds(1) + interval * 2) == [.report([expected(again)]), rearm])
  }

  @Test func freshnessTellsNeverHeardFromHeardLongAgoAcrossDiscoveries() {
    var machine = started(scan)
    #expect(machine.freshness(of: "STRM2-A", now: .zero) == .never)
    machine.advertisement(ad("STRM2-A", rssi: -40), now: .seconds(1))
    _ = machine.finish(nil)
    #expect(machine.freshness(of: "STRM2-A", now: .seconds(2)) == .fresh)
    #expect(machine.freshness(of: "STRM2-A", now: .seconds(1) + tuning.stalenessWindow) == .stale)
    _ = machine.start(scan, simulated: false, radioOn: true, now: .seconds(3600))
    #expect(machine.freshness(of: "STRM2-A", now: .seconds(3600)) == .stale, "a new discovery forgets nothing")
    #expect(machine.freshness(of: "STRM2-B", now: .seconds(3600)) == .never)
  }

  /// The reporting rule as a sort and a comparison of whole lists: what the machine must do, tick by tick.
  private struct ReferenceScan {
    var heard: [String: (advertisement: Advertisement, lastSeen: Duration)] = [:]
    var lastReport: [Reader]?

    mutating func tick(now: Duration) -> [Reader]? {
      let readers = heard.values
        .filter { now - $0.lastSeen < tuning.stalenessWindow }
        .sorted {
          $0.advertisement.signalStrength != $1.advertisement.signalStrength
            ? $0.advertisement.signalStrength > $1.advertisement.signalStrength
            : $0.advertisement.serialNumber < $1.advertisement.serialNumber
        }
        .map { expected($0.advertisement) }
      func withoutSignal(_ list: [Reader]) -> [Reader] {
        list.map {
          var reader = $0
          reader.signalStrength = nil
          return reader
        }
      }
      if let lastReport, withoutSignal(lastReport) == withoutSignal(readers) { return nil }
      if lastReport == nil && readers.isEmpty { return nil }
      lastReport = readers
      return readers
    }
  }

  @Test func reportsWhatSortingAndComparingWholeListsWouldReport() {
    for seed in UInt64(1)...40 {
      var random = SeededRandom(seed: seed)
      var machine = started(scan)
      var reference = ReferenceScan()
      let infos = [
        ReaderInfo(), ReaderInfo(batteryLevel: 0.5), ReaderInfo(deviceSoftwareVersion: "2.0", label: "Desk"),
      ]
      var silence = Duration.zero
      for tick in 1...60 {
        for _ in 0..<Int(random.next() % 12) {
          // A few readers, a few signal strengths (ties are common), details that change and change back,
          // and now and then a signal strength far from the rest.
          let serial = "STRM2-\(random.next() % 15)"
          let rssi = random.next() % 40 == 0 ? -5_000 : -40 - Int(random.next() % 6)
          let advertisement = ad(serial, rssi: rssi, info: infos[Int(random.next() % 3)])
          let now = silence + tickTime(tick - 1) + .milliseconds(Int(random.next() % 500))
          machine.advertisement(advertisement, now: now)
          reference.heard[serial] = (advertisement, now)
        }
        // Some ticks come after a silence long enough for readers to go stale.
        if random.next() % 10 == 0 { silence += .seconds(7) }
        let now = silence + tickTime(tick)
        let expectedActions: [Action] = reference.tick(now: now).map { [.report($0), rearm] } ?? [rearm]
        #expect(machine.timerFired(.tick, now: now) == expectedActions, "seed \(seed), tick \(tick)")
        if let last = reference.lastReport { #expect(machine.discoveredReaders == last, "seed \(seed)") }
      }
    }
  }

  @Test func recordingAnAdvertisementNeverCopiesTheSightings() {
    // 20,000 readers heard twice each: with a copy of the table per advertisement this would take
    // hundreds of millions of element copies; in place it is linear. The timing itself is measured by
    // `reader-bench discovery`; here the table must end up exact.
    var machine = started(scan)
    for round in 0..<2 {
      for n in 0..<20_000 { machine.advertisement(ad("STRM2-\(n)", rssi: -40 - round), now: .milliseconds(round)) }
    }
    guard case .report(let readers) = machine.timerFired(.tick, now: tickTime(1)).first else {
      Issue.record("expected a report")
      return
    }
    #expect(readers.count == 20_000)
    #expect(readers.allSatisfy { $0.signalStrength == -41 })
  }

  @Test func aReportTheAppStillHoldsIsLeftAsItWasWhenTheNextIsMadeFromIt() {
    // The next report is the last one rearranged in place: an app holding the last must keep it unchanged.
    var machine = started(scan)
    let (a, b, c) = (ad("STRM2-A", rssi: -40), ad("STRM2-B", rssi: -50), ad("STRM2-C", rssi: -60))
    for advertisement in [a, b, c] { machine.advertisement(advertisement, now: .milliseconds(10)) }
    guard case .report(let held) = machine.timerFired(.tick, now: tickTime(1)).first else {
      Issue.record("expected a first report")
      return
    }
    #expect(held == [expected(a), expected(b), expected(c)])
    // C comes nearest with new details, A is a little weaker, B goes silent; no reader is new, so the report is
    // made from the held one's readers alone.
    let nearerC = ad("STRM2-C", rssi: -30, info: ReaderInfo(batteryLevel: 0.25))
    let weakerA = ad("STRM2-A", rssi: -41)
    for advertisement in [nearerC, weakerA] { machine.advertisement(advertisement, now: tuning.stalenessWindow) }
    let now = tuning.stalenessWindow + .milliseconds(10)
    #expect(machine.timerFired(.tick, now: now) == [.report([expected(nearerC), expected(weakerA)]), rearm])
    #expect(held == [expected(a), expected(b), expected(c)], "the report the app holds is unchanged")
  }
}

@Suite struct DiscoveryStateMachineProximityTests {
  private let proximity = DiscoveryMethod.bluetoothProximity
  private let threshold = tuning.proximityThreshold

  @Test func startScansWithoutATimeout() {
    var machine = DiscoveryStateMachine()
    #expect(machine.start(proximity, simulated: false, radioOn: true, now: .zero) == [.startScan, rearm])
  }

  @Test func onlyChipper2XReadersAreConsidered() {
    var machine = started(proximity)
    machine.advertisement(ad("STRM2-A", .stripeM2, rssi: -20), now: .zero)
    machine.advertisement(ad("WPC32-A", .wisePad3, rssi: -20), now: .zero)
    #expect(machine.timerFired(.tick, now: tickTime(1)) == [rearm], "heard, but not reported")
  }

  @Test func readersWeakerThanTheThresholdAreIgnored() {
    var machine = started(proximity)
    machine.advertisement(ad("CHB20-A", .chipper2X, rssi: threshold - 1), now: .zero)
    #expect(machine.timerFired(.tick, now: tickTime(1)) == [rearm])
    let atThreshold = ad("CHB20-A", .chipper2X, rssi: threshold)
    machine.advertisement(atThreshold, now: tickTime(1))
    #expect(machine.timerFired(.tick, now: tickTime(2)).first == .report([announced(atThreshold)]))
  }

  @Test func theNearestReaderIsAnnouncedFlashedAndThenDetailed() {
    var machine = started(proximity, simulated: true)
    let far = ad("CHB20-B", .chipper2X, rssi: -55)
    let near = ad(
      "CHB20-A", .chipper2X, rssi: -35, info: ReaderInfo(deviceSoftwareVersion: "1.9", batteryLevel: 0.6, label: "Till")
    )
    machine.advertisement(far, now: .zero)
    machine.advertisement(near, now: .zero)
    #expect(
      machine.timerFired(.tick, now: tickTime(1)) == [
        .report([announced(near, simulated: true)]), .flashLEDs(serialNumber: "CHB20-A"),
        .arm(.proximityDetails, after: tuning.proximityDetailDelay), rearm,
      ])
    #expect(machine.timerFired(.tick, now: tickTime(2)) == [rearm])
    #expect(machine.timerFired(.proximityDetails, now: tickTime(2)) == [.report([expected(near, simulated: true)])])
    #expect(machine.discoveredReaders == [expected(near, simulated: true)])
    #expect(machine.timerFired(.tick, now: tickTime(3)) == [rearm], "two reports in all")
    #expect(machine.timerFired(.proximityDetails, now: tickTime(3)) == [], "details are reported once")
  }

  @Test func theDetailedReportFollowsEvenWhenTheAdvertisementCarriesNoDetails() {
    var machine = started(proximity)
    let bare = ad("CHB20-A", .chipper2X, rssi: -40)
    machine.advertisement(bare, now: .zero)
    #expect(machine.timerFired(.tick, now: tickTime(1)).first == .report([announced(bare)]))
    #expect(machine.timerFired(.proximityDetails, now: tickTime(3)) == [.report([expected(bare)])])
  }

  @Test func tiesInSignalStrengthGoToTheLowerSerialNumber() {
    var machine = started(proximity)
    let b = ad("CHB20-B", .chipper2X, rssi: -40)
    let a = ad("CHB20-A", .chipper2X, rssi: -40)
    machine.advertisement(b, now: .zero)
    machine.advertisement(a, now: .zero)
    #expect(machine.timerFired(.tick, now: tickTime(1)).first == .report([announced(a)]))
  }

  @Test func thePickIsKeptWhileItAdvertisesEvenIfANearerReaderAppears() {
    var machine = started(proximity)
    let first = ad("CHB20-A", .chipper2X, rssi: -50)
    machine.advertisement(first, now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    _ = machine.timerFired(.proximityDetails, now: tickTime(3))
    for n in 2...30 {
      machine.advertisement(first, now: tickTime(n - 1))
      machine.advertisement(ad("CHB20-B", .chipper2X, rssi: -20), now: tickTime(n - 1))
      #expect(machine.timerFired(.tick, now: tickTime(n)) == [rearm], "tick \(n)")
    }
    #expect(machine.discoveredReaders.map(\.serialNumber) == ["CHB20-A"])
  }

  @Test func thePickIsKeptEvenWhenItsSignalDropsBelowTheThreshold() {
    var machine = started(proximity)
    machine.advertisement(ad("CHB20-A", .chipper2X, rssi: -50), now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    machine.advertisement(ad("CHB20-A", .chipper2X, rssi: -90), now: tickTime(1))
    #expect(machine.timerFired(.tick, now: tickTime(2)) == [rearm])
  }

  @Test func aStalePickIsDroppedAndAnotherReaderPicked() {
    var machine = started(proximity)
    let first = ad("CHB20-A", .chipper2X, rssi: -30)
    let second = ad("CHB20-B", .chipper2X, rssi: -50)
    machine.advertisement(first, now: .zero)
    machine.advertisement(second, now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    _ = machine.timerFired(.proximityDetails, now: tickTime(3))
    // Only the second keeps advertising; the first is stale at 6 s.
    var n = 1
    var dropped: [Action]?
    while dropped == nil && n < 100 {
      machine.advertisement(second, now: tickTime(n))
      n += 1
      let actions = machine.timerFired(.tick, now: tickTime(n))
      if actions != [rearm] { dropped = actions }
    }
    #expect(tickTime(n) == tuning.stalenessWindow)
    // The new nearest reader is picked in the same tick: no empty list in between.
    #expect(
      dropped == [
        .disarm(.proximityDetails), .report([announced(second)]), .flashLEDs(serialNumber: "CHB20-B"),
        .arm(.proximityDetails, after: tuning.proximityDetailDelay), rearm,
      ])
    machine.advertisement(second, now: tickTime(n))
    #expect(machine.timerFired(.tick, now: tickTime(n + 1)) == [rearm], "it sticks with the new pick")
  }

  @Test func aPickThatGoesStaleBeforeItsDetailsCancelsThem() {
    var machine = started(proximity)
    machine.advertisement(ad("CHB20-A", .chipper2X, rssi: -30), now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    #expect(machine.timerFired(.tick, now: tuning.stalenessWindow) == [.disarm(.proximityDetails), .report([]), rearm])
    #expect(machine.timerFired(.proximityDetails, now: tuning.stalenessWindow) == [], "a late details timer is ignored")
  }

  @Test func finishingStopsEverything() {
    var machine = started(proximity)
    machine.advertisement(ad("CHB20-A", .chipper2X, rssi: -30), now: .zero)
    _ = machine.timerFired(.tick, now: tickTime(1))
    #expect(machine.finish(.canceled("discoverReaders")) == teardown + [.finish(.canceled("discoverReaders"))])
    #expect(machine.timerFired(.proximityDetails, now: .seconds(2)) == [])
    #expect(machine.finish(nil) == [])
  }

  @Test func aTimeoutTimerIsIgnored() {
    var machine = started(proximity)
    #expect(machine.timerFired(.timeout, now: .seconds(10)) == [])
    #expect(machine.isRunning)
  }
}
