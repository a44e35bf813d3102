import ReaderCore
import Testing

@testable import NFCKit

/// The system's machine as the composer of the line and the sessions' machines, input by input: the
/// rules that span sessions, which used to be the engine's order of calls.
@Suite struct NFCSystemStateMachineTests {
  typealias Machine = NFCSystemStateMachine
  typealias Action = Machine.Action
  static let unlimited = NFCSystemPolicy(sessionTimeout: nil)
  static let limited = NFCSystemPolicy(sessionTimeout: .seconds(60))
  static let refusing = NFCSystemPolicy(sessionTimeout: nil, whenBusy: .refuse)
  static let hello: [UInt8] = NDEFMessage(try! .text("hello")).encoded()

  static func round(_ session: UInt64, _ sequence: UInt64 = 1) -> NFCRadioRequestID {
    NFCRadioRequestID(session: session, sequence: sequence)
  }

  static func begin(
    _ machine: inout Machine, _ id: UInt64,
    mode: NFCSessionStateMachine.Mode = .readOnly(invalidateAfterFirstRead: true),
    alertMessage: String = "", policy: NFCSystemPolicy = unlimited
  ) -> [Action] {
    machine.handle(.begin(id, mode: mode, alertMessage: alertMessage, policy: policy, unavailable: nil))
  }

  static func invalidations(_ actions: [Action]) -> [(UInt64, NFCReaderError.Code)] {
    actions.compactMap { action in
      if case .session(let id, .didInvalidate(let error)) = action { return (id, error.code) }
      return nil
    }
  }

  /// The routing keeps `submit` and `release` to itself: they never reach the driver.
  static func leaksNoRouting(_ actions: [Action]) -> Bool {
    !actions.contains { action in
      if case .session(_, .submit) = action { return true }
      if case .session(_, .release) = action { return true }
      return false
    }
  }

  @Test func aSessionBegunOnAnIdleSystemStartsPollingWithItsAlertMessageOnTheSheet() {
    var machine = Machine()
    #expect(
      Self.begin(&machine, 1, alertMessage: "Hold it near", policy: Self.limited) == [
        .armTimeout(1, after: .seconds(60)), .session(1, .startPolling(Self.round(1))),
      ])
    #expect(
      machine.handle(.radio(.pollingStarted(Self.round(1)))) == [
        .session(1, .presentSheet(alertMessage: "Hold it near")), .session(1, .didBecomeActive),
      ])
    #expect(machine.running == 1)
  }

  @Test func aSessionThatEndsHandsTheRadioToTheNextInLineWithinTheSameInput() {
    var machine = Machine()
    _ = Self.begin(&machine, 1)
    _ = machine.handle(.radio(.pollingStarted(Self.round(1))))
    #expect(Self.begin(&machine, 2) == [.queued(2, position: 1)])
    let actions = machine.handle(.invalidate(1, errorMessage: nil, begun: true))
    #expect(
      actions == [
        .session(1, .stopPolling(Self.round(1))), .session(1, .dismissSheet(errorMessage: nil)),
        .session(
          1,
          .didInvalidate(
            NFCReaderError(
              .readerSessionInvalidationErrorUserCanceled, "the app invalidated the session", context: ["by": "app"]))),
        .ended(1), .session(2, .startPolling(Self.round(2))),
      ])
    #expect(machine.running == 2)
    #expect(machine.sessionCount == 1, "the ended session's machine is gone")
  }

  @Test func aLateRadioEventOfASessionThatLetGoFindsNobody() {
    var machine = Machine()
    _ = Self.begin(&machine, 1, mode: .readWrite)
    _ = machine.handle(.radio(.pollingStarted(Self.round(1))))
    _ = machine.handle(.invalidate(1, errorMessage: nil, begun: true))
    #expect(machine.handle(.radio(.tagsDetected(Self.round(1), [NFCRadioTagID(1)]))) == [])
    #expect(machine.handle(.radio(.response(Self.round(1, 2), .read(Self.hello)))) == [])
    #expect(machine.handle(.radio(.userCanceled(Self.round(1)))) == [])
    #expect(machine.handle(.timeLimitReached(1)) == [])
  }

  @Test func aTagOperationOnASessionThatLetGoFailsAsOnAnInvalidatedSession() {
    var machine = Machine()
    _ = Self.begin(&machine, 1, mode: .readWrite)
    _ = machine.handle(.radio(.pollingStarted(Self.round(1))))
    _ = machine.handle(.radio(.tagsDetected(Self.round(1), [NFCRadioTagID(1)])))
    _ = machine.handle(.invalidate(1, errorMessage: nil, begun: true))
    let own = NFCSessionStateMachine.TagRef(round: Self.round(1), tag: NFCRadioTagID(1))
    guard
      case .session(1, .complete(5, .failed(let error)))? = machine.handle(.perform(1, .readNDEF, on: own, id: 5)).first
    else {
      Issue.record("expected a failed completion")
      return
    }
    #expect(error.code == .readerTransceiveErrorSessionInvalidated)
    let foreign = NFCSessionStateMachine.TagRef(round: Self.round(9), tag: NFCRadioTagID(1))
    guard
      case .session(1, .complete(6, .failed(let other)))? = machine.handle(.perform(1, .connect, on: foreign, id: 6))
        .first
    else {
      Issue.record("expected a failed completion")
      return
    }
    #expect(other.code == .readerErrorInvalidParameter)
  }

  @Test func aSessionInvalidatedBeforeBeginEndsOnceWithoutEverJoiningTheLine() {
    var machine = Machine()
    _ = Self.begin(&machine, 1)
    let actions = machine.handle(.invalidate(2, errorMessage: nil, begun: false))
    #expect(Self.invalidations(actions).map(\.0) == [2])
    #expect(actions.count == 1, "no release, no line: \(actions)")
    #expect(machine.handle(.invalidate(2, errorMessage: nil, begun: true)) == [], "said once")
    #expect(machine.waitingCount == 0)
    #expect(machine.sessionCount == 1)
  }

  @Test func aRefusingSystemEndsASecondSessionAndKeepsTheFirstRunning() {
    var machine = Machine()
    _ = Self.begin(&machine, 1, policy: Self.refusing)
    let actions = Self.begin(&machine, 2, policy: Self.refusing)
    #expect(Self.invalidations(actions).map(\.1) == [.readerSessionInvalidationErrorSystemIsBusy])
    #expect(actions.last == .ended(2))
    #expect(Self.leaksNoRouting(actions))
    #expect(machine.running == 1)
    #expect(machine.sessionCount == 1)
  }

  @Test func terminationEndsTheRunningSessionThenTheWaitingOnesInLineOrderAndHandsTheRadioToNobody() {
    var machine = Machine()
    for id: UInt64 in 1...4 { _ = Self.begin(&machine, id) }
    _ = machine.handle(.radio(.pollingStarted(Self.round(1))))
    _ = machine.handle(.invalidate(3, errorMessage: nil, begun: true))
    let actions = machine.handle(.radio(.terminated))
    #expect(Self.invalidations(actions).map(\.0) == [1, 2, 4])
    #expect(
      Self.invalidations(actions).allSatisfy { $0.1 == .readerSessionInvalidationErrorSessionTerminatedUnexpectedly })
    #expect(!actions.contains { if case .session(_, .startPolling) = $0 { true } else { false } })
    #expect(machine.running == nil)
    #expect(machine.sessionCount == 0)
  }

  @Test func aWaitingSessionsTimeLimitEndsItInLineWhileTheRunningOneGoesOn() {
    var machine = Machine()
    _ = Self.begin(&machine, 1, policy: Self.limited)
    _ = Self.begin(&machine, 2, policy: Self.limited)
    let actions = machine.handle(.timeLimitReached(2))
    #expect(Self.invalidations(actions).map(\.1) == [.readerSessionInvalidationErrorSessionTimeout])
    #expect(actions.suffix(2) == [.ended(2), .disarmTimeout(2)])
    #expect(machine.running == 1)
    #expect(machine.waitingCount == 0)
  }

  @Test func anUndecidedSessionOffersItsTagsAndPublishesThemOnlyWhenTheDelegateTookThem() {
    var machine = Machine()
    let undecided = NFCSessionStateMachine.Mode.undecided(invalidateAfterFirstRead: false)
    _ = Self.begin(&machine, 1, mode: undecided)
    _ = machine.handle(.radio(.pollingStarted(Self.round(1))))
    let refs = [NFCSessionStateMachine.TagRef(round: Self.round(1), tag: NFCRadioTagID(1))]
    #expect(machine.handle(.radio(.tagsDetected(Self.round(1), [NFCRadioTagID(1)]))) == [.offerTags(1, refs)])
    #expect(
      machine.handle(.tagDelegateAnswered(1, implemented: true, offered: refs)) == [
        .publishTags(1, refs), .modeSettled(1, .readWrite),
      ])

    _ = Self.begin(&machine, 2, mode: undecided)
    _ = machine.handle(.invalidate(1, errorMessage: nil, begun: true))
    _ = machine.handle(.radio(.pollingStarted(Self.round(2))))
    let other = [NFCSessionStateMachine.TagRef(round: Self.round(2), tag: NFCRadioTagID(1))]
    #expect(machine.handle(.radio(.tagsDetected(Self.round(2), [NFCRadioTagID(1)]))) == [.offerTags(2, other)])
    #expect(
      machine.handle(.tagDelegateAnswered(2, implemented: false, offered: other)) == [
        .modeSettled(2, .readOnly(invalidateAfterFirstRead: false)), .session(2, .tagsUnavailable(other)),
        .session(2, .send(.readNDEF(NFCRadioTagID(1)), Self.round(2, 2))),
      ])
  }

  /// Random app calls, radio events and time limits on many sessions: one session holds the radio at a
  /// time, in the order they were begun, each begun session ends exactly once, and nothing is left.
  @Test(arguments: 0..<20 as Range<UInt64>)
  func sessionsTakeTheRadioOneAtATimeInLineOrderAndEachEndsOnce(seed: UInt64) {
    var random = SeededRandom(seed: seed)
    var machine = Machine()
    var begun: [UInt64] = []
    var polling: [UInt64: NFCRadioRequestID] = [:]
    var started: [UInt64] = []
    var ended: [UInt64: Int] = [:]
    var next: UInt64 = 1
    for step in 0..<400 {
      let roll = random.next() % 100
      let actions: [Action]
      if roll < 30 || begun.isEmpty {
        actions = Self.begin(&machine, next, policy: roll % 3 == 0 ? Self.limited : Self.unlimited)
        begun.append(next)
        next += 1
      } else if roll < 55 {
        let id = begun[Int(random.next() % UInt64(begun.count))]
        actions = machine.handle(.invalidate(id, errorMessage: nil, begun: true))
      } else if roll < 75, let (id, round) = polling.first {
        actions = machine.handle(.radio(.pollingStarted(round)))
        polling[id] = nil
      } else if roll < 90 {
        let id = begun[Int(random.next() % UInt64(begun.count))]
        actions = machine.handle(.timeLimitReached(id))
      } else if roll < 92 {
        actions = machine.handle(.radio(.terminated))
      } else {
        let id = begun[Int(random.next() % UInt64(begun.count))]
        actions = machine.handle(.radio(.userCanceled(Self.round(id))))
      }
      #expect(Self.leaksNoRouting(actions), "seed \(seed) step \(step)")
      for action in actions {
        switch action {
        case .session(let id, .startPolling(let round)):
          started.append(id)
          polling[id] = round
        case .session(let id, .didInvalidate):
          ended[id, default: 0] += 1
          polling[id] = nil
        default: break
        }
      }
      #expect(machine.running.map { ended[$0] == nil } ?? true, "seed \(seed) step \(step): the holder is live")
    }
    for case .session(let id, .didInvalidate) in machine.handle(.radio(.terminated)) { ended[id, default: 0] += 1 }
    #expect(started == started.sorted(), "seed \(seed): the radio went in line order")
    #expect(ended.count == begun.count && ended.values.allSatisfy { $0 == 1 }, "seed \(seed): each ended once")
    #expect(machine.sessionCount == 0 && machine.running == nil, "seed \(seed): nothing left")
  }
}
