import ReaderCore
import Testing

@testable import NFCKit

/// The system's line of sessions, input by input.
@Suite struct NFCSessionLineStateMachineTests {
  typealias Machine = NFCSessionLineStateMachine
  static let queueing = NFCSystemPolicy(sessionTimeout: .seconds(60))
  static let refusing = NFCSystemPolicy(sessionTimeout: .seconds(60), whenBusy: .refuse)
  static let unlimited = NFCSystemPolicy(sessionTimeout: nil)

  @Test func aSessionBegunOnAnIdleSystemGetsTheRadioAndItsTimeLimit() {
    var machine = Machine()
    #expect(
      machine.begin(1, policy: Self.queueing, unavailable: nil) == [
        .armTimeout(1, after: .seconds(60)), .activate(1),
      ])
    #expect(machine.running == 1)
  }

  @Test func aSystemWithoutATimeLimitArmsNone() {
    var machine = Machine()
    #expect(machine.begin(1, policy: Self.unlimited, unavailable: nil) == [.activate(1)])
    #expect(machine.begin(2, policy: Self.unlimited, unavailable: nil) == [.queued(2, position: 1)])
  }

  @Test func aSessionThatGotTheRadioWithoutATimeLimitDisarmsNoneWhenReleased() {
    var machine = Machine()
    _ = machine.begin(1, policy: Self.unlimited, unavailable: nil)
    #expect(machine.released(1) == [])
    _ = machine.begin(2, policy: Self.queueing, unavailable: nil)
    #expect(machine.released(2) == [.disarmTimeout(2)], "a limit armed is disarmed")
  }

  @Test func aSessionBegunWhileAnotherRunsWaitsWithItsPositionInsteadOfFailing() {
    var machine = Machine()
    _ = machine.begin(1, policy: Self.queueing, unavailable: nil)
    #expect(
      machine.begin(2, policy: Self.queueing, unavailable: nil) == [
        .armTimeout(2, after: .seconds(60)), .queued(2, position: 1),
      ])
    #expect(
      machine.begin(3, policy: Self.queueing, unavailable: nil) == [
        .armTimeout(3, after: .seconds(60)), .queued(3, position: 2),
      ])
    #expect(machine.running == 1)
    #expect(machine.waitingCount == 2)
  }

  @Test func aRefusingSystemEndsASecondSessionWithSystemIsBusyAndNoTimer() {
    var machine = Machine()
    _ = machine.begin(1, policy: Self.refusing, unavailable: nil)
    let actions = machine.begin(2, policy: Self.refusing, unavailable: nil)
    guard case .end(2, let error)? = actions.first, actions.count == 1 else {
      Issue.record("expected one end, got \(actions)")
      return
    }
    #expect(error.code == .readerSessionInvalidationErrorSystemIsBusy)
    #expect(error.context["runningSession"] == "1")
    #expect(machine.released(2) == [], "a refused session never joined")
    #expect(machine.running == 1)
  }

  @Test func aSessionBegunWithoutTheCapabilityEndsAtOnceWithUnsupportedFeature() {
    var machine = Machine()
    let actions = machine.begin(1, policy: Self.queueing, unavailable: .unsupported)
    #expect(actions.count == 1)
    guard case .end(1, let error)? = actions.first else {
      Issue.record("expected an end, got \(actions)")
      return
    }
    #expect(error.code == .readerErrorUnsupportedFeature)
    #expect(machine.running == nil)
  }

  @Test func theNextInLineGetsTheRadioOnlyWhenTheRunningSessionReleasesIt() {
    var machine = Machine()
    for id: UInt64 in 1...3 { _ = machine.begin(id, policy: Self.queueing, unavailable: nil) }
    #expect(machine.released(1) == [.disarmTimeout(1), .activate(2)])
    #expect(machine.released(2) == [.disarmTimeout(2), .activate(3)])
    #expect(machine.released(3) == [.disarmTimeout(3)])
    #expect(machine.running == nil)
    #expect(machine.begin(4, policy: Self.unlimited, unavailable: nil) == [.activate(4)])
  }

  @Test func aWaitingSessionThatLeavesIsSkippedWhenItsTurnComes() {
    var machine = Machine()
    for id: UInt64 in 1...4 { _ = machine.begin(id, policy: Self.queueing, unavailable: nil) }
    #expect(machine.released(3) == [.disarmTimeout(3)])
    #expect(machine.waitingCount == 2)
    #expect(machine.released(1) == [.disarmTimeout(1), .activate(2)])
    #expect(machine.released(2) == [.disarmTimeout(2), .activate(4)])
  }

  @Test func theRunningSessionsTimeLimitEndsItAndTheRadioMovesOnOnlyAtItsRelease() {
    var machine = Machine()
    _ = machine.begin(1, policy: Self.queueing, unavailable: nil)
    _ = machine.begin(2, policy: Self.queueing, unavailable: nil)
    let actions = machine.timeLimitReached(1)
    #expect(actions.count == 1)
    guard case .end(1, let error)? = actions.first else { return }
    #expect(error.code == .readerSessionInvalidationErrorSessionTimeout)
    #expect(error.context["while"] == nil)
    #expect(machine.running == 1)
    #expect(machine.released(1) == [.disarmTimeout(1), .activate(2)])
  }

  @Test func aWaitingSessionsTimeLimitEndsItWhileItWaitsAndTakesItOutOfLine() {
    var machine = Machine()
    _ = machine.begin(1, policy: Self.queueing, unavailable: nil)
    _ = machine.begin(2, policy: Self.queueing, unavailable: nil)
    _ = machine.begin(3, policy: Self.queueing, unavailable: nil)
    let actions = machine.timeLimitReached(2)
    guard case .end(2, let error)? = actions.first, actions.count == 1 else {
      Issue.record("expected one end, got \(actions)")
      return
    }
    #expect(error.code == .readerSessionInvalidationErrorSessionTimeout)
    #expect(error.context["while"] == "waiting")
    #expect(machine.waitingCount == 1)
    #expect(machine.released(2) == [.disarmTimeout(2)])
    #expect(machine.released(1) == [.disarmTimeout(1), .activate(3)])
  }

  @Test func aTimeLimitOfASessionAlreadyGoneIsALateEvent() {
    var machine = Machine()
    _ = machine.begin(1, policy: Self.queueing, unavailable: nil)
    _ = machine.released(1)
    #expect(machine.timeLimitReached(1) == [])
    #expect(machine.timeLimitReached(99) == [])
    #expect(machine.released(1) == [])
  }

  @Test func terminationEndsTheRunningSessionThenEveryWaitingOneInLineOrder() {
    var machine = Machine()
    for id: UInt64 in 1...4 { _ = machine.begin(id, policy: Self.queueing, unavailable: nil) }
    _ = machine.released(3)
    let actions = machine.terminated()
    let ended = actions.compactMap { if case .end(let id, let error) = $0 { (id, error.code) } else { nil } }
    #expect(ended.map(\.0) == [1, 2, 4])
    #expect(ended.allSatisfy { $0.1 == .readerSessionInvalidationErrorSessionTerminatedUnexpectedly })
    #expect(actions.count == 3)
    #expect(machine.waitingCount == 0)
    #expect(machine.released(2) == [.disarmTimeout(2)])
    #expect(machine.released(1) == [.disarmTimeout(1)], "nobody is left to hand the radio to")
    #expect(machine.released(4) == [.disarmTimeout(4)])
    #expect(machine.running == nil)
  }

  @Test func aSecondBeginOfTheSameSessionIsIgnored() {
    var machine = Machine()
    _ = machine.begin(1, policy: Self.queueing, unavailable: nil)
    _ = machine.begin(2, policy: Self.queueing, unavailable: nil)
    #expect(machine.begin(1, policy: Self.queueing, unavailable: nil) == [])
    #expect(machine.begin(2, policy: Self.queueing, unavailable: nil) == [])
    #expect(machine.waitingCount == 1)
  }

  /// Random begins, releases, time limits and terminations against a plain array model of the line;
  /// long runs cross the line's compaction threshold many times.
  @Test(arguments: 0..<40 as Range<UInt64>)
  func theLineMatchesAPlainFIFOModelUnderRandomInputs(seed: UInt64) {
    var random = SeededRandom(seed: seed)
    var machine = Machine()
    var running: UInt64?
    var line: [UInt64] = []
    var members: Set<UInt64> = []
    var nextID: UInt64 = 1
    var activated: [UInt64] = []
    var expectedActivations: [UInt64] = []

    func modelNext() {
      running = line.isEmpty ? nil : line.removeFirst()
      if let running { expectedActivations.append(running) }
    }
    func record(_ actions: [Machine.Action]) {
      for case .activate(let id) in actions { activated.append(id) }
    }

    for step in 0..<3000 {
      let roll = random.next() % 100
      if roll < 45 {
        let id = nextID
        nextID += 1
        let actions = machine.begin(id, policy: Self.unlimited, unavailable: nil)
        record(actions)
        members.insert(id)
        if running == nil {
          running = id
          expectedActivations.append(id)
          #expect(actions == [.activate(id)], "seed \(seed) step \(step)")
        } else {
          line.append(id)
          #expect(actions == [.queued(id, position: line.count)], "seed \(seed) step \(step)")
        }
      } else if roll < 90, !members.isEmpty {
        // Release a random member: the running one or one in line.
        let pick = members.sorted()[Int(random.next() % UInt64(members.count))]
        members.remove(pick)
        record(machine.released(pick))
        if running == pick { modelNext() } else { line.removeAll { $0 == pick } }
      } else if roll < 97, !line.isEmpty {
        let pick = line[Int(random.next() % UInt64(line.count))]
        let actions = machine.timeLimitReached(pick)
        #expect(actions.count == 1, "seed \(seed) step \(step)")
        line.removeAll { $0 == pick }
        // The session then releases, as the driver feeds back.
        members.remove(pick)
        record(machine.released(pick))
      } else if roll >= 99 {
        let actions = machine.terminated()
        let ended = actions.compactMap { if case .end(let id, _) = $0 { id } else { nil } }
        #expect(ended == (running.map { [$0] } ?? []) + line, "seed \(seed) step \(step)")
        line = []
        for id in ended {
          members.remove(id)
          record(machine.released(id))
        }
        running = nil
      }
      #expect(machine.running == running, "seed \(seed) step \(step)")
      #expect(machine.waitingCount == line.count, "seed \(seed) step \(step)")
    }
    #expect(activated == expectedActivations, "seed \(seed)")
  }
}
