import Dispatch
import NFCKit
import ReaderCore
import ReaderSimulator
import Synchronization
import Testing

/// One session system-wide: the line of sessions on the simulated system.
@Suite(.timeLimit(.minutes(2))) struct NFCReaderSystemTests {
  @Test func aSecondSessionWaitsInLineAndBecomesActiveWhenTheFirstEnds() {
    let h = NFCHarness()
    let first = ReadDelegate()
    let second = ReadDelegate()
    let a = h.readSession(first)
    let b = h.readSession(second)
    a.begin()
    b.begin()
    h.run(.seconds(1))
    #expect(first.recorded == [.didBecomeActive])
    #expect(second.recorded == [], "a waiting session hears nothing yet")
    #expect(h.events.all.contains(NFCReaderEvent(time: .zero, session: b.identifier, kind: .didQueue(position: 1))))
    #expect(h.system.runningSession == a.identifier)
    #expect(h.system.waitingSessionCount == 1)
    a.invalidate()
    h.run(.seconds(1))
    #expect(second.recorded == [.didBecomeActive])
    #expect(h.system.runningSession == b.identifier)
    #expect(h.system.waitingSessionCount == 0)
  }

  @Test func aSessionInvalidatedByTheAppWhileWaitingGetsUserCanceledAtOnceAndLeavesTheLine() {
    let h = NFCHarness()
    let delegates = (0..<3).map { _ in ReadDelegate() }
    let sessions = delegates.map { h.readSession($0) }
    for session in sessions { session.begin() }
    h.run(.seconds(1))
    sessions[1].invalidate()
    h.clock.runUntilIdle()
    #expect(delegates[1].recorded == [.didInvalidate(.readerSessionInvalidationErrorUserCanceled)])
    #expect(delegates[1].errors.withLock { $0.last?.context["by"] } == "app")
    #expect(h.events.last?.time == .seconds(1), "at once, not when its turn would have come")
    #expect(delegates[0].recorded == [.didBecomeActive])
    #expect(h.system.waitingSessionCount == 1)
    sessions[0].invalidate()
    h.run(.seconds(1))
    #expect(delegates[2].recorded == [.didBecomeActive])
    #expect(delegates[1].recorded.count == 1)
  }

  @Test func aSessionWhoseTimeRunsOutWhileWaitingGetsSessionTimeoutMarkedWhileWaiting() {
    let h = NFCHarness(timeout: .seconds(60))
    let running = ReadDelegate()
    let waiting = ReadDelegate()
    let next = ReadDelegate()
    h.readSession(running).begin()
    h.run(.seconds(1))
    // The system's limit changes (a real backend's configuration, or the simulated system's script).
    h.radio.setPolicy(NFCSystemPolicy(sessionTimeout: .seconds(10)))
    h.readSession(waiting).begin()
    h.run(.seconds(1))
    h.readSession(next).begin()
    h.clock.advance(to: .seconds(11) - .milliseconds(1))
    #expect(waiting.recorded == [])
    h.clock.advance(to: .seconds(11))
    #expect(waiting.recorded == [.didInvalidate(.readerSessionInvalidationErrorSessionTimeout)])
    #expect(waiting.errors.withLock { $0.last?.context["while"] } == "waiting")
    #expect(running.recorded == [.didBecomeActive], "the running session goes on")
    #expect(h.system.waitingSessionCount == 1)
    h.clock.advance(to: .seconds(12))
    #expect(next.recorded == [.didInvalidate(.readerSessionInvalidationErrorSessionTimeout)])
  }

  @Test func aRefusingSystemEndsASecondSessionAtOnceWithSystemIsBusy() {
    let h = NFCHarness(whenBusy: .refuse)
    let first = ReadDelegate()
    let second = ReadDelegate()
    h.readSession(first).begin()
    h.run(.seconds(1))
    h.readSession(second).begin()
    h.clock.runUntilIdle()
    #expect(second.recorded == [.didInvalidate(.readerSessionInvalidationErrorSystemIsBusy)])
    #expect(first.recorded == [.didBecomeActive])
  }

  @Test func movingToTheBackgroundEndsTheRunningSessionAndEveryWaitingOne() {
    let h = NFCHarness()
    let delegates = (0..<3).map { _ in ReadDelegate() }
    for delegate in delegates { h.readSession(delegate).begin() }
    h.run(.seconds(1))
    h.radio.terminateSessions()
    h.run(.seconds(1))
    let code = NFCReaderError.Code.readerSessionInvalidationErrorSessionTerminatedUnexpectedly
    #expect(delegates[0].recorded == [.didBecomeActive, .didInvalidate(code)])
    #expect(delegates[1].recorded == [.didInvalidate(code)])
    #expect(delegates[2].recorded == [.didInvalidate(code)])
    #expect(h.system.runningSession == nil)
    #expect(h.clock.checkNoPendingWork() == nil, "no time limit is left armed")
  }

  @Test func aSessionAheadRefusedByTheRadioHandsTheRadioOnToTheNext() {
    let h = NFCHarness()
    h.radio.setRadio(on: false)
    let first = ReadDelegate()
    let second = ReadDelegate()
    h.readSession(first).begin()
    h.readSession(second).begin()
    h.clock.runUntilIdle()
    #expect(first.recorded == [.didInvalidate(.readerErrorRadioDisabled)])
    #expect(second.recorded == [.didInvalidate(.readerErrorRadioDisabled)])
    h.radio.setRadio(on: true)
    let third = ReadDelegate()
    h.readSession(third).begin()
    h.run(.seconds(1))
    #expect(third.recorded == [.didBecomeActive])
  }

  /// Many threads begin sessions at once while another drives the system. Each session invalidates
  /// itself when it becomes active, so the line keeps moving. The line must be first in, first out:
  /// sessions activate in the order their begins took effect (the system's queue events) — so each
  /// thread's own sessions in the order that thread began them — never two at a time, and every
  /// session exactly once.
  @Test func sessionsBegunConcurrentlyFromManyThreadsBecomeActiveOneAtATimeInFIFOOrder() {
    let h = NFCHarness(timeout: nil, timing: .instant)
    let threads = 8
    let perThread = 40
    let delegate = ReadDelegate()
    delegate.onActive.withLock { $0 = { $0.invalidate() } }
    let active = Locked<(current: UInt64?, overlaps: Int, order: [UInt64], queued: [UInt64], first: [UInt64])>(
      (nil, 0, [], [], []))
    h.system.addEventObserver { event in
      active.withLock { state in
        switch event.kind {
        case .didQueue: state.queued.append(event.session)
        case .didBecomeActive:
          if state.current != nil { state.overlaps += 1 }
          state.current = event.session
          state.order.append(event.session)
          // A session that became active without waiting took the radio directly.
          if !state.queued.contains(event.session) { state.first.append(event.session) }
        case .didInvalidate:
          if state.current == event.session { state.current = nil }
        default: break
        }
      }
    }
    let byThread = Locked<[[UInt64]]>(Array(repeating: [], count: threads))
    let started = Atomic<Int>(0)
    // Bounded in real time (the begins come from other threads): a line that never drains fails the test.
    let gaveUp = Atomic<Bool>(false)
    let driver = Thread {
      let deadline = ContinuousClock.now + .seconds(60)
      while started.load(ordering: .acquiring) < threads * perThread || h.system.runningSession != nil {
        guard ContinuousClock.now < deadline else { return gaveUp.store(true, ordering: .releasing) }
        h.clock.runUntilIdle()
      }
      h.clock.runUntilIdle()
    }
    driver.start()
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
      for _ in 0..<perThread {
        let session = h.readSession(delegate)
        byThread.withLock { $0[thread].append(session.identifier) }
        session.begin()
        started.add(1, ordering: .releasing)
      }
    }
    driver.join()
    let drained = !gaveUp.load(ordering: .acquiring)
    #expect(drained, "the line still held sessions after 60 s")
    let state = active.withLock { $0 }
    #expect(state.overlaps == 0)
    #expect(!state.queued.isEmpty, "the begins must have met a running session")
    #expect(state.order.count == threads * perThread)
    #expect(Set(state.order).count == threads * perThread)
    #expect(delegate.recorded.filter { $0 == .didBecomeActive }.count == threads * perThread)
    // Activation order is the order of the line: sessions that found the radio free, interleaved
    // with those that waited, each group in its own order.
    let waitedOrder = state.order.filter { state.queued.contains($0) }
    #expect(waitedOrder == state.queued, "sessions that waited became active in the order they queued")
    let position = Dictionary(uniqueKeysWithValues: state.order.enumerated().map { ($1, $0) })
    for (thread, ids) in byThread.withLock({ $0 }).enumerated() {
      let positions = ids.map { position[$0] ?? -1 }
      #expect(
        positions == positions.sorted(), "thread \(thread)'s sessions became active out of the order it began them")
    }
  }

  @Test func anObserverHearsEverySessionWhileRegisteredAndNothingAfter() {
    let h = NFCHarness()
    let delegate = ReadDelegate()
    let heard = Locked<[String]>([])
    func runSession() -> UInt64 {
      let session = h.readSession(delegate)
      session.begin()
      h.run(.milliseconds(100))
      session.invalidate()
      h.run(.milliseconds(100))
      return session.identifier
    }
    let first = h.system.addEventObserver { event in heard.withLock { $0.append("first \(event.session)") } }
    let one = runSession()
    h.system.removeEventObserver(first)
    let two = runSession()
    let second = h.system.addEventObserver { event in heard.withLock { $0.append("second \(event.session)") } }
    h.system.removeEventObserver(first)  // Gone already: the other observer keeps hearing.
    let three = runSession()
    h.system.removeEventObserver(second)
    _ = runSession()
    let log = heard.withLock { $0 }
    #expect(log.filter { $0 == "first \(one)" }.count == 2, "didBecomeActive and didInvalidate: \(log)")
    #expect(log.filter { $0 == "second \(three)" }.count == 2, "\(log)")
    #expect(log.count == 4, "nothing of session \(two) or of the last one: \(log)")
  }

  @Test func theSimulatedRadioKeepsTheLatestEntriesOfEachLogOldestFirst() {
    let radio = SimulatedNFCRadio(clock: VirtualClock(), seed: 1, logCapacity: 3)
    for index in 1...5 {
      radio.presentSheet(alertMessage: "sheet \(index)")
      radio.setRadio(on: index % 2 == 0)
    }
    #expect(
      radio.sheetLog.map(\.kind) == [
        .presented(alertMessage: "sheet 3"), .presented(alertMessage: "sheet 4"), .presented(alertMessage: "sheet 5"),
      ])
    #expect(radio.worldEvents.map(\.kind) == ["radioOff", "radioOn", "radioOff"], "five changes, the last three kept")
  }
}

extension NFCReaderSystemTests {
  /// The same from many tasks: every session becomes active exactly once, one at a time, in the
  /// order of the line.
  @Test func sessionsBegunFromManyTasksAtOnceRunOneAtATimeInLineOrder() async {
    let h = NFCHarness(timeout: nil, timing: .instant)
    let delegate = ReadDelegate()
    delegate.onActive.withLock { $0 = { $0.invalidate() } }
    let log = Locked<(active: UInt64?, overlaps: Int, activated: [UInt64], queued: [UInt64])>((nil, 0, [], []))
    h.system.addEventObserver { event in
      log.withLock { state in
        switch event.kind {
        case .didQueue: state.queued.append(event.session)
        case .didBecomeActive:
          if state.active != nil { state.overlaps += 1 }
          state.active = event.session
          state.activated.append(event.session)
        case .didInvalidate: if state.active == event.session { state.active = nil }
        default: break
        }
      }
    }
    let sessions = (0..<200).map { _ in h.readSession(delegate) }
    await withTaskGroup(of: Void.self) { group in
      for session in sessions { group.addTask { session.begin() } }
    }
    // Counted: a line that never drains fails the test below instead of spinning.
    for _ in 0..<10_000 {
      if delegate.recorded.filter({ $0 != .didBecomeActive }).count >= sessions.count { break }
      h.clock.runUntilIdle()
    }
    let state = log.withLock { $0 }
    #expect(state.overlaps == 0)
    #expect(state.activated.count == sessions.count)
    #expect(Set(state.activated) == Set(sessions.map(\.identifier)))
    #expect(Array(state.activated.dropFirst()) == state.queued, "the first took the radio, the rest waited in line")
  }
}

/// A thread whose body runs once, joinable.
private final class Thread: Sendable {
  private let body: @Sendable () -> Void
  private let done = DispatchSemaphore(value: 0)
  init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  func start() {
    DispatchQueue.global().async { [self] in
      body()
      done.signal()
    }
  }
  func join() { done.wait() }
}
