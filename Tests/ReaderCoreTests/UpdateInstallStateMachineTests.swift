import Foundation
import Testing

@testable import ReaderCore

private typealias Action = UpdateInstallStateMachine.Action

private let now = Date(timeIntervalSince1970: 1_767_225_600)
private let interval = UpdateInstallStateMachine.progressInterval
private let image = FirmwareImage(
  url: URL(string: "https://updates.example/m2-2.02.bin")!, size: 4,
  sha256: SHA256Checksum(bytes: [UInt8](repeating: 7, count: 32))!)

private func update(
  _ components: UpdateComponent = [.firmware, .config], image: FirmwareImage? = nil, expiresAt: Date? = nil
) -> ReaderSoftwareUpdate {
  ReaderSoftwareUpdate(
    deviceSoftwareVersion: "2.02.00.01", durationEstimate: .estimate1To2Minutes, components: components,
    requiredAt: now, image: image, expiresAt: expiresAt)
}

private let full = update()

/// An install of `full` that has been sent to the reader.
private func installing(_ pending: ReaderSoftwareUpdate = full) -> UpdateInstallStateMachine {
  var machine = UpdateInstallStateMachine(update: pending)
  _ = machine.start(at: .zero, date: now)
  return machine
}

private func finished(_ actions: [Action]) -> [ReaderError?] {
  actions.compactMap { if case .finished(_, let error) = $0 { error } else { nil } }
}

private func progress(_ actions: [Action]) -> [Double] {
  actions.compactMap { if case .progress(let value) = $0 { value } else { nil } }
}

@Suite struct UpdateInstallStateMachineTests {
  @Test func startReportsTheStartAndZeroThenSendsTheUpdateToTheReader() {
    var machine = UpdateInstallStateMachine(update: full, fault: .fail(atProgress: 0.5))
    #expect(
      machine.start(at: .zero, date: now) == [
        .started(full, cancelable: true), .progress(0), .install(full, image: nil),
        .arm(.stall, after: UpdateInstallStateMachine.stallTimeout),
      ])
    #expect(machine.start(at: .zero, date: now) == [], "started once")
  }

  @Test func anUpdateWithAnImageIsVerifiedBeforeTheFirstByteGoesToTheReader() {
    let withImage = update(image: image)
    var machine = UpdateInstallStateMachine(update: withImage)
    #expect(
      machine.start(at: .zero, date: now) == [.started(withImage, cancelable: true), .progress(0), .fetchImage(image)])
    #expect(machine.readerProgress(0.5, now: .zero) == [], "nothing is installing yet")
    let bytes = Data([1, 2, 3, 4])
    #expect(
      machine.imageFetched(.success(bytes), now: .zero) == [
        .install(withImage, image: bytes), .arm(.stall, after: UpdateInstallStateMachine.stallTimeout),
      ])
  }

  @Test func anImageThatCannotBeObtainedFailsAsAServerErrorNamingTheCause() {
    var machine = UpdateInstallStateMachine(update: update(image: image))
    _ = machine.start(at: .zero, date: now)
    let mismatch = ReaderError(.firmwareImageRejected, "digest", context: ["url": image.url.absoluteString])
    let actions = machine.imageFetched(.failure(mismatch), now: .zero)
    #expect(!actions.contains { if case .install = $0 { true } else { false } }, "the reader is untouched")
    let error = finished(actions).first ?? nil
    #expect(error?.code == .readerSoftwareUpdateFailedServerError)
    #expect(error?.context["cause"] == "firmwareImageRejected")
    #expect(error?.context["url"] == image.url.absoluteString)
  }

  @Test func anIncrementalOnlyUpdateCannotBeCancelled() {
    let incremental = update(.incremental)
    var machine = UpdateInstallStateMachine(update: incremental)
    #expect(machine.start(at: .zero, date: now).first == .started(incremental, cancelable: false))
    #expect(machine.cancel() == [])
    #expect(!machine.isFinished)
  }

  @Test func anExpiredUpdateFailsAtOnceAfterItsStart() {
    let expired = update(expiresAt: now)
    var machine = UpdateInstallStateMachine(update: expired)
    let actions = machine.start(at: .zero, date: now)
    #expect(actions.first == .started(expired, cancelable: true))
    #expect(finished(actions).first??.code == .readerSoftwareUpdateFailedExpiredUpdate)
    #expect(!actions.contains { if case .install = $0 { true } else { false } })
  }

  @Test func progressIsCoalescedMonotonicAndBelowOneUntilTheReaderConfirms() {
    var machine = installing()
    var reported: [(Duration, Double)] = [(.zero, 0)]
    var due: Duration?
    // The reader reports every 25 ms, sometimes going back; timers fire when due.
    for n in 1...400 {
      let time = Duration.milliseconds(25 * n)
      if let at = due, at <= time {
        due = nil
        for action in machine.timerFired(.progress, now: at) {
          if case .progress(let value) = action { reported.append((at, value)) }
          if case .arm(.progress, let delay) = action { due = at + delay }
        }
      }
      for action in machine.readerProgress(Double(n) / 400 - (n % 7 == 0 ? 0.2 : 0), now: time) {
        if case .progress(let value) = action { reported.append((time, value)) }
        if case .arm(.progress, let delay) = action {
          #expect(due == nil, "one timer at a time")
          due = time + delay
        }
      }
    }
    let values = reported.map(\.1)
    #expect(values == values.sorted(), "never goes back")
    #expect(values.allSatisfy { $0 < 1 }, "1 is reported only once the reader confirms")
    for (earlier, later) in zip(reported, reported.dropFirst()) {
      #expect(later.0 - earlier.0 >= interval, "at most one report per interval")
    }
    #expect(reported.count >= 35, "and reports keep coming: \(reported.count)")
    let done = machine.readerFinished(nil)
    #expect(done == [.progress(1), .disarm(.progress), .disarm(.cancelReply), .disarm(.stall), .finished(full, nil)])
  }

  @Test func nothingNewMeansNoReportAndNoTimer() {
    var machine = installing()
    #expect(machine.readerProgress(0.3, now: .seconds(1)) == [.progress(0.3)])
    #expect(machine.readerProgress(0.3, now: .seconds(2)) == [])
    #expect(machine.readerProgress(0.2, now: .seconds(3)) == [], "a step back is not progress")
    #expect(machine.readerProgress(0.4, now: .seconds(3) + .milliseconds(100)) == [.progress(0.4)])
    #expect(
      machine.readerProgress(0.5, now: .seconds(3) + .milliseconds(200)) == [.arm(.progress, after: .milliseconds(150))]
    )
    #expect(machine.readerProgress(0.6, now: .seconds(3) + .milliseconds(300)) == [], "already due")
    #expect(machine.timerFired(.progress, now: .seconds(3) + .milliseconds(350)) == [.progress(0.6)])
  }

  @Test func aReaderErrorFinishesWithIt() {
    var machine = installing()
    let failure = ReaderError(.readerSoftwareUpdateFailedBatteryLow, "battery")
    #expect(finished(machine.readerFinished(failure)) == [failure])
  }

  @Test(arguments: [0, 1, 2])
  func aLostLinkInterruptsTheInstallOnceWhateverFollows(stage: Int) {
    var machine = UpdateInstallStateMachine(update: update(image: image))
    _ = machine.start(at: .zero, date: now)
    if stage >= 1 { _ = machine.imageFetched(.success(Data([1, 2, 3, 4])), now: .zero) }
    if stage >= 2 { _ = machine.cancel() }
    let lost = machine.linkLost()
    #expect(finished(lost).first??.code == .readerSoftwareUpdateFailedInterrupted)
    // Everything late is absorbed: finish exactly once.
    #expect(machine.linkLost() == [])
    #expect(machine.readerFinished(nil) == [])
    #expect(machine.readerProgress(1, now: .seconds(9)) == [])
    #expect(machine.cancel() == [])
    #expect(machine.abandon() == [])
    #expect(machine.timerFired(.progress, now: .seconds(9)) == [])
    #expect(machine.timerFired(.cancelReply, now: .seconds(9)) == [])
    #expect(machine.imageFetched(.success(Data()), now: .zero) == [])
  }

  @Test func cancellingWaitsForTheReaderToStop() {
    var machine = installing()
    _ = machine.readerProgress(0.4, now: .seconds(1))
    #expect(
      machine.cancel() == [
        .cancelInstall, .disarm(.progress), .arm(.cancelReply, after: UpdateInstallStateMachine.cancelReplyTimeout),
      ])
    #expect(machine.cancel() == [], "cancel is idempotent")
    #expect(machine.readerProgress(0.5, now: .seconds(2)).isEmpty, "no progress while it stops")
    #expect(progress(machine.timerFired(.progress, now: .seconds(2))).isEmpty)
    #expect(finished(machine.readerFinished(.canceled("installUpdate"))).first??.code == .canceled)
  }

  @Test func aCancelThatCameTooLateLetsTheInstallSucceed() {
    var machine = installing()
    _ = machine.cancel()
    let done = machine.readerFinished(nil)
    #expect(done.first == .progress(1))
    #expect(finished(done) == [nil])
  }

  @Test func aReaderThatNeverConfirmsTheCancelIsGivenUp() {
    var machine = installing()
    _ = machine.cancel()
    #expect(finished(machine.timerFired(.cancelReply, now: .seconds(10))).first??.code == .canceled)
  }

  @Test func aReaderSilentForTheStallTimeoutInterruptsTheInstall() {
    var machine = installing()
    let stall = UpdateInstallStateMachine.stallTimeout
    _ = machine.readerProgress(0.2, now: .seconds(30))
    // Checked when the first minute is up: heard 30 s ago, so it waits for the rest.
    #expect(machine.timerFired(.stall, now: stall) == [.arm(.stall, after: .seconds(30))])
    let given = machine.timerFired(.stall, now: stall + .seconds(30))
    #expect(finished(given).first??.code == .readerSoftwareUpdateFailedInterrupted)
    #expect(machine.readerFinished(nil) == [], "a late answer is absorbed")
  }

  @Test func aCancelTheReaderNeverConfirmsSaysSo() {
    var machine = installing()
    _ = machine.cancel()
    let error = finished(machine.timerFired(.cancelReply, now: .seconds(10))).first ?? nil
    #expect(error?.code == .canceled)
    #expect(error?.context["confirmed"] == "false")
  }

  @Test func cancellingWhileTheImageDownloadsSendsNothingToTheReader() {
    var machine = UpdateInstallStateMachine(update: update(image: image))
    _ = machine.start(at: .zero, date: now)
    let actions = machine.cancel()
    #expect(finished(actions).first??.code == .canceled)
    #expect(!actions.contains(.cancelInstall))
    #expect(machine.imageFetched(.success(Data([1, 2, 3, 4])), now: .zero) == [], "the late download is dropped")
  }

  @Test func abandoningEndsEvenAnIncrementalInstallAtOnce() {
    var machine = installing(update(.incremental))
    #expect(finished(machine.abandon()).first??.code == .canceled)
  }

  @Test func randomInputsKeepStartFirstFinishLastAndProgressMonotonic() {
    for seed in UInt64(1)...300 {
      var random = SeededRandom(seed: seed)
      let pending = random.next() % 2 == 0 ? full : update(image: image)
      var machine = UpdateInstallStateMachine(update: pending)
      var all = machine.start(at: .zero, date: now)
      for step in 0..<60 {
        let time = Duration.milliseconds(100 * step)
        switch random.next() % 8 {
        case 0: all += machine.imageFetched(.success(Data([1, 2, 3, 4])), now: time)
        case 1: all += machine.readerProgress(random.nextUnit() * 1.2 - 0.1, now: time)
        case 2, 3: all += machine.timerFired(.progress, now: time)
        case 4: all += machine.cancel()
        case 5: all += random.next() % 4 == 0 ? machine.linkLost() : []
        case 6:
          all += random.next() % 5 == 0 ? machine.readerFinished(random.next() % 2 == 0 ? nil : .canceled("x")) : []
        default: all += machine.timerFired(.cancelReply, now: time)
        }
      }
      let starts = all.filter { if case .started = $0 { true } else { false } }
      let ends = all.indices.filter { if case .finished = all[$0] { true } else { false } }
      let values = progress(all)
      #expect(starts.count == 1, "seed \(seed)")
      #expect(ends.count <= 1, "seed \(seed): finished \(ends.count) times")
      if let end = ends.first { #expect(end == all.count - 1, "seed \(seed): actions after the finish") }
      #expect(values.first == 0 && values == values.sorted(), "seed \(seed): progress \(values)")
      if case .finished(_, nil)? = all.last { #expect(values.last == 1, "seed \(seed)") }
      if case .finished(_, _?)? = all.last { #expect(!values.contains(1), "seed \(seed): 1 on a failure") }
    }
  }
}

@Suite struct UpdatePolicyTests {
  private let day = 86_400.0

  private func availability(requiredIn days: Double, supersededDaysAgo: Double?) -> UpdateAvailability {
    UpdateAvailability(
      update: ReaderSoftwareUpdate(
        deviceSoftwareVersion: "2.0", durationEstimate: .estimate1To2Minutes, components: [.config],
        requiredAt: now.addingTimeInterval(days * day)),
      installedVersionSupersededAt: supersededDaysAgo.map { now.addingTimeInterval(-$0 * day) })
  }

  @Test func anUpdateIsRequiredOnceItsRequiredAtHasPassed() {
    let policy = UpdatePolicy()
    let later = availability(requiredIn: 7, supersededDaysAgo: 1)
    guard case .optional = policy.decide(later, at: now) else {
      Issue.record("expected optional")
      return
    }
    guard case .required = policy.decide(later, at: now.addingTimeInterval(7 * day)) else {
      Issue.record("expected required at requiredAt")
      return
    }
    #expect(policy.decide(.upToDate, at: now) == .upToDate)
  }

  @Test func anIncrementalOnlyUpdateIsAlwaysRequired() {
    let incremental = UpdateAvailability(
      update: ReaderSoftwareUpdate(
        deviceSoftwareVersion: "2.0", durationEstimate: .estimateLessThan1Minute, components: .incremental,
        requiredAt: now.addingTimeInterval(30 * day)), installedVersionSupersededAt: nil)
    guard case .required = UpdatePolicy().decide(incremental, at: now) else {
      Issue.record("expected required")
      return
    }
  }

  @Test func theGraceRuleHoldsWithinThirtyDaysOfRunningTheLatestSoftware() {
    let policy = UpdatePolicy()
    let failure = ReaderError(.readerSoftwareUpdateFailedBatteryLow, "battery")
    let hour = 1.0 / 24
    #expect(
      policy.connectsDespiteFailure(
        availability(requiredIn: -1, supersededDaysAgo: 29 + 23 * hour), error: failure, at: now))
    #expect(
      !policy.connectsDespiteFailure(
        availability(requiredIn: -1, supersededDaysAgo: 30 + hour), error: failure, at: now))
    #expect(
      policy.connectsDespiteFailure(availability(requiredIn: -1, supersededDaysAgo: nil), error: failure, at: now))
  }

  @Test func theGraceRuleNeedsAReaderKitThatHasIt() throws {
    let recent = availability(requiredIn: -1, supersededDaysAgo: 1)
    let failure = ReaderError(.readerSoftwareUpdateFailedReaderError, "reader")
    let older = UpdatePolicy(sdkVersion: try SoftwareVersion("1.2.9"))
    #expect(!older.connectsDespiteFailure(recent, error: failure, at: now))
    let exact = UpdatePolicy(sdkVersion: UpdatePolicy.graceIntroducedIn)
    #expect(exact.connectsDespiteFailure(recent, error: failure, at: now))
  }

  @Test func aCancelledOrInterruptedUpdateNeverConnects() {
    let recent = availability(requiredIn: -1, supersededDaysAgo: 1)
    let policy = UpdatePolicy()
    #expect(!policy.connectsDespiteFailure(recent, error: .canceled("installUpdate"), at: now))
    #expect(
      !policy.connectsDespiteFailure(
        recent, error: ReaderError(.readerSoftwareUpdateFailedInterrupted, "lost"), at: now))
  }
}

@Suite struct TestReaderUpdateTests {
  private func resolve(_ test: TestReaderUpdate, installed: String = "2.01.00.17", seed: UInt64 = 1)
    -> (availability: UpdateAvailability, fault: UpdateFault?)
  {
    var random = SeededRandom(seed: seed)
    return test.resolve(installedVersion: installed, at: now, random: &random)
  }

  @Test func anAvailableUpdateIsOptionalForAWeekAndMarkedAsATestUpdate() {
    let (availability, fault) = resolve(.available([.config]))
    let update = availability.update
    #expect(update?.isTestUpdate == true)
    #expect(update?.components == [.config])
    #expect(update?.deviceSoftwareVersion == "2.01.00.18")
    #expect(update?.isRequired(at: now) == false)
    #expect(update?.isRequired(at: now.addingTimeInterval(7 * 86_400)) == true)
    #expect(fault == nil)
  }

  @Test func aRequiredUpdateIsRequiredNowAndAFullOneTakesAboutAMinute() {
    let (availability, _) = resolve(.required(TestReaderUpdate.fullUpdate))
    #expect(availability.update?.isRequired(at: now) == true)
    #expect(availability.update?.durationEstimate == .estimate1To2Minutes)
    #expect(!availability.hasRunLatestSoftware(within: UpdatePolicy.graceWindow, at: now))
  }

  @Test func anIncrementalUpdateKeepsTheVersion() {
    #expect(resolve(.required(.incremental)).availability.update?.deviceSoftwareVersion == "2.01.00.17")
  }

  @Test func lowBatteryKindsDifferOnlyInWhetherTheReaderIsRecent() {
    let failing = resolve(.lowBattery())
    let connecting = resolve(.lowBatterySucceedConnect())
    #expect(failing.fault == .lowBattery && connecting.fault == .lowBattery)
    #expect(!failing.availability.hasRunLatestSoftware(within: UpdatePolicy.graceWindow, at: now))
    #expect(connecting.availability.hasRunLatestSoftware(within: UpdatePolicy.graceWindow, at: now))
  }

  @Test func failingAndInterruptedCarryTheirFault() {
    #expect(resolve(.failing(atProgress: 0.3)).fault == .fail(atProgress: 0.3))
    #expect(resolve(.interrupted(atProgress: 0.7)).fault == .dropLink(atProgress: 0.7))
  }

  @Test func randomIsDrawnFromTheSeedAndCoversEveryOutcome() {
    var outcomes: Set<String> = []
    for seed in UInt64(1)...200 {
      let first = resolve(.random(), seed: seed)
      let again = resolve(.random(), seed: seed)
      #expect(first.availability == again.availability && first.fault == again.fault, "seed \(seed)")
      let required = first.availability.update?.isRequired(at: now)
      outcomes.insert("\(required.map { "\($0)" } ?? "none") \(first.fault.map { "\($0)" } ?? "-")")
    }
    #expect(outcomes.count == 4, "\(outcomes)")  // none, optional, required, required with a low battery
  }
}
