import Dispatch
import NFCKit
import ReaderCore
import ReaderSimulator
import Synchronization
import TestSupport
import Testing

/// A session's life on the simulated system: how it starts, reads, and ends for each reason.
@Suite(.timeLimit(.minutes(2))) struct NFCNDEFReaderSessionTests {
  @Test func aReadOnlySessionBecomesActiveReadsTheTagAndEndsWithFirstNDEFTagRead() {
    let h = NFCHarness()
    h.radio.present(SimulatedNFCTag(name: "sticker", message: NFCHarness.hello))
    let delegate = ReadDelegate()
    let session = h.readSession(delegate)
    #expect(!session.isReady)
    session.begin()
    h.run(.seconds(1))
    #expect(
      delegate.recorded == [
        .didBecomeActive, .didDetectNDEFs([NFCHarness.hello]),
        .didInvalidate(.readerSessionInvalidationErrorFirstNDEFTagRead),
      ])
    #expect(h.names(session) == ["didBecomeActive", "didDetectNDEFs", "didInvalidateWithError"])
    #expect(!session.isReady)
    #expect(h.system.runningSession == nil)
    #expect(h.clock.checkNoPendingWork() == nil)
  }

  @Test func didBecomeActiveComesBeforeADetectionEvenForATagAlreadyInTheField() {
    let h = NFCHarness(timing: .instant)
    h.radio.present(SimulatedNFCTag(name: "sticker", message: NFCHarness.hello))
    let delegate = ReadDelegate()
    let isReadyWhenActive = Box<Bool>()
    delegate.onActive.withLock { $0 = { isReadyWhenActive.put($0.isReady) } }
    h.readSession(delegate).begin()
    h.clock.runUntilIdle()
    #expect(delegate.recorded.first == .didBecomeActive)
    #expect(delegate.recorded.count == 3)
    #expect(isReadyWhenActive.all == [true])
  }

  @Test func aContinuousReadOnlySessionReadsEveryPresentationUntilItsTimeLimit() {
    let h = NFCHarness(timeout: .seconds(60))
    h.radio.add(SimulatedNFCTag(name: "a", message: NFCHarness.hello))
    h.radio.add(SimulatedNFCTag(name: "b", message: NFCHarness.poster))
    let delegate = ReadDelegate()
    let session = h.readSession(delegate, firstReadOnly: false)
    session.begin()
    h.run(.seconds(1))
    h.radio.present("a", for: .seconds(2))
    h.run(.seconds(5))
    h.radio.present("b", for: .seconds(2))
    h.run(.seconds(5))
    h.radio.present("a")
    h.run(.seconds(5))
    #expect(
      delegate.recorded == [
        .didBecomeActive, .didDetectNDEFs([NFCHarness.hello]), .didDetectNDEFs([NFCHarness.poster]),
        .didDetectNDEFs([NFCHarness.hello]),
      ])
    #expect(session.isReady)
    h.run(.seconds(60))
    #expect(delegate.recorded.last == .didInvalidate(.readerSessionInvalidationErrorSessionTimeout))
  }

  // MARK: Invalidation reasons

  @Test func theAppsInvalidateReportsUserCanceledMarkedAsTheAppsAndClosesTheSheet() {
    let h = NFCHarness()
    let delegate = ReadDelegate()
    let session = h.readSession(delegate)
    session.alertMessage = "Hold near the tag"
    session.begin()
    h.run(.seconds(1))
    #expect(h.radio.sheetText == "Hold near the tag")
    session.invalidate()
    #expect(!session.isReady, "isReady turns false at the call")
    h.clock.runUntilIdle()
    #expect(delegate.recorded == [.didBecomeActive, .didInvalidate(.readerSessionInvalidationErrorUserCanceled)])
    #expect(delegate.errors.withLock { $0.last?.context["by"] } == "app")
    #expect(h.radio.sheetText == nil)
    #expect(h.radio.sheetLog.last?.kind == .dismissed(errorMessage: nil))
    #expect(!h.radio.isPolling && h.radio.currentRound == nil)
  }

  /// The app's `invalidate()` may run on its thread after the system has decided that the session
  /// becomes active and before it has said so. The radio is asked to show the sheet in that very step,
  /// just before `didBecomeActive` is published, so the app's call made from there lands exactly in the
  /// window: `isReady` stays false from the call on, even as `didBecomeActive` goes out, and the session
  /// ends with the app's reason. Both ways of publishing are covered: with and without an observer of
  /// the whole system.
  @Test(arguments: [true, false])
  func anInvalidateBetweenTheDecisionToBecomeActiveAndItsPublicationKeepsTheSessionNotReady(systemObserved: Bool) {
    let clock = VirtualClock()
    let radio = SimulatedNFCRadio(clock: clock, seed: 1, timing: .instant)
    let sessions = Box<NFCNDEFReaderSession>()
    let readyAfterInvalidate = Box<Bool>()
    let recorder = RecordingNFCRadio(wrapping: radio, scheduler: clock) { line in
      guard line.contains("\"presentSheet\""), let session = sessions.last else { return }
      session.invalidate()
      readyAfterInvalidate.put(session.isReady)
    }
    let system = NFCReaderSystem(radio: recorder, scheduler: clock)
    let events = Box<NFCReaderEvent>()
    if systemObserved { system.addEventObserver { events.put($0) } }
    let delegate = ReadDelegate()
    let readyWhenActive = Box<Bool>()
    delegate.onActive.withLock { $0 = { readyWhenActive.put($0.isReady) } }
    let session = NFCNDEFReaderSession(delegate: delegate, queue: nil, invalidateAfterFirstRead: true, system: system)
    sessions.put(session)
    session.begin()
    clock.runUntilIdle()
    #expect(readyAfterInvalidate.all == [false])
    #expect(readyWhenActive.all == [false], "didBecomeActive went out after the app's invalidate()")
    #expect(delegate.recorded.last == .didInvalidate(.readerSessionInvalidationErrorUserCanceled))
    #expect(delegate.errors.withLock { $0.last?.context["by"] } == "app")
    #expect(!session.isReady)
    #expect(events.all.map(\.name) == (systemObserved ? ["didBecomeActive", "didInvalidateWithError"] : []))
  }

  @Test func invalidateWithAnErrorMessageShowsItAsTheSheetCloses() {
    let h = NFCHarness()
    let delegate = ReadDelegate()
    let session = h.readSession(delegate)
    session.begin()
    h.run(.seconds(1))
    session.invalidate(errorMessage: "Tag not supported")
    h.clock.runUntilIdle()
    #expect(h.radio.sheetLog.last?.kind == .dismissed(errorMessage: "Tag not supported"))
    #expect(delegate.recorded.last == .didInvalidate(.readerSessionInvalidationErrorUserCanceled))
  }

  @Test func theUserTappingCancelEndsTheSessionWithUserCanceledMarkedAsTheUsers() {
    let h = NFCHarness()
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(1))
    h.radio.tapCancel()
    h.clock.runUntilIdle()
    #expect(delegate.recorded == [.didBecomeActive, .didInvalidate(.readerSessionInvalidationErrorUserCanceled)])
    #expect(delegate.errors.withLock { $0.last?.context["by"] } == "user")
  }

  @Test func theSessionTimesOutExactlyAtTheSystemsLimitCountedFromBegin() {
    let h = NFCHarness(timeout: .seconds(20))
    let delegate = ReadDelegate()
    h.run(.seconds(3))
    h.readSession(delegate).begin()
    h.clock.runUntilIdle()
    h.clock.advance(to: .seconds(23) - .milliseconds(1))
    #expect(delegate.recorded == [.didBecomeActive])
    h.clock.advance(to: .seconds(23))
    #expect(delegate.recorded == [.didBecomeActive, .didInvalidate(.readerSessionInvalidationErrorSessionTimeout)])
    #expect(h.events.last?.time == .seconds(23))
  }

  @Test func aSystemWithoutATimeLimitNeverTimesASessionOut() {
    let h = NFCHarness(timeout: nil)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(24 * 3600))
    #expect(delegate.recorded == [.didBecomeActive])
  }

  @Test func theAppMovingToTheBackgroundEndsTheSessionUnexpectedly() {
    let h = NFCHarness()
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(1))
    h.radio.terminateSessions()
    h.clock.runUntilIdle()
    #expect(
      delegate.recorded == [
        .didBecomeActive, .didInvalidate(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly),
      ])
    #expect(h.radio.sheetText == nil)
  }

  @Test func anotherAppHoldingTheRadioEndsTheSessionWithSystemIsBusy() {
    let h = NFCHarness()
    h.radio.setHeldByAnotherApp(true)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(1))
    #expect(delegate.recorded == [.didInvalidate(.readerSessionInvalidationErrorSystemIsBusy)])
    #expect(h.radio.sheetLog.isEmpty, "a refused session never shows the sheet")
  }

  @Test func aSessionBegunWithoutTheCapabilityEndsWithUnsupportedFeature() {
    let h = NFCHarness(readingAvailable: false)
    #expect(!h.system.readingAvailable)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(1))
    #expect(delegate.recorded == [.didInvalidate(.readerErrorUnsupportedFeature)])
  }

  @Test func aSessionBegunWithTheRadioOffEndsWithRadioDisabledThoughReadingIsAvailable() {
    let h = NFCHarness()
    h.radio.setRadio(on: false)
    #expect(h.system.readingAvailable, "readingAvailable is a capability, not the radio's state")
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(1))
    #expect(delegate.recorded == [.didInvalidate(.readerErrorRadioDisabled)])
  }

  @Test func theRadioGoingOffWhileASessionRunsEndsItWithRadioDisabled() {
    let h = NFCHarness()
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(1))
    h.radio.setRadio(on: false)
    h.clock.runUntilIdle()
    #expect(delegate.recorded == [.didBecomeActive, .didInvalidate(.readerErrorRadioDisabled)])
  }

  /// The only test that touches the per-process system; it puts the default back.
  @Test func theDefaultSystemIsTheHostsUntilTheAppInstallsOne() {
    let original = NFCReaderSystem.shared
    // On Linux the host's NFC is PC/SC when pcsc-lite can be loaded: readable while pcscd runs with a
    // reader; without pcsc-lite (and elsewhere) nothing can be read.
    #if os(Linux)
      if original.radio is PCSCNFCRadio {
        #expect(NFCNDEFReaderSession.readingAvailable == original.radio.isReadingAvailable)
      } else {
        #expect(original.radio is UnavailableNFCRadio)
        #expect(!NFCNDEFReaderSession.readingAvailable)
      }
    #else
      #expect(!NFCNDEFReaderSession.readingAvailable)
    #endif
    #expect(NFCReaderSystem.shared === original)
    let delegate = ReadDelegate()
    let unsupported = NFCNDEFReaderSession(delegate: delegate, queue: nil, invalidateAfterFirstRead: true)
    #expect(unsupported.system === original)
    let h = NFCHarness()
    NFCReaderSystem.install(h.system)
    defer { NFCReaderSystem.install(original) }
    #expect(NFCNDEFReaderSession.readingAvailable)
    let session = NFCNDEFReaderSession(delegate: delegate, queue: nil, invalidateAfterFirstRead: true)
    #expect(session.system === h.system)
  }

  @Test func aSessionOnTheDefaultSystemEndsWithUnsupportedFeature() async {
    // What `NFCReaderSystem.shared` is made of until an app installs another.
    let scheduler = LiveScheduler<ContinuousClock>(label: "test.unavailable")
    let system = NFCReaderSystem(radio: UnavailableNFCRadio(scheduler: scheduler), scheduler: scheduler)
    let session = NFCNDEFReaderSession(invalidateAfterFirstRead: true, system: system)
    let events = session.events()
    session.begin()
    var errors: [NFCReaderError.Code] = []
    for await event in events { if let error = event.error { errors.append(error.code) } }
    #expect(errors == [.readerErrorUnsupportedFeature])
  }

  // MARK: Single use

  @Test func beginOnAnInvalidatedSessionReportsSessionInvalidatedAndDeliversNothing() {
    let h = NFCHarness()
    let delegate = ReadDelegate()
    let session = h.readSession(delegate)
    #expect(session.begin() == nil)
    h.run(.seconds(1))
    session.invalidate()
    h.run(.seconds(1))
    let before = delegate.recorded
    #expect(session.begin()?.code == .readerTransceiveErrorSessionInvalidated)
    h.radio.present(SimulatedNFCTag(name: "sticker", message: NFCHarness.hello))
    h.run(.seconds(5))
    #expect(delegate.recorded == before)
    #expect(h.radio.currentRound == nil, "the radio was never asked to poll again")
  }

  @Test func beginRightAfterInvalidateIsRefusedEvenBeforeTheSystemHasRun() {
    let h = NFCHarness()
    let session = h.readSession(ReadDelegate())
    session.begin()
    session.invalidate()
    #expect(session.begin()?.code == .readerTransceiveErrorSessionInvalidated)
  }

  @Test func aSecondBeginOnARunningSessionChangesNothing() {
    let h = NFCHarness()
    let delegate = ReadDelegate()
    let session = h.readSession(delegate)
    session.begin()
    h.run(.seconds(1))
    #expect(session.begin() == nil)
    h.run(.seconds(1))
    #expect(delegate.recorded == [.didBecomeActive])
  }

  @Test func invalidatingASessionNeverBegunReportsOnceAndItCannotBeBegunAfter() {
    let h = NFCHarness()
    let delegate = ReadDelegate()
    let session = h.readSession(delegate)
    session.invalidate()
    session.invalidate()
    h.run(.seconds(1))
    #expect(delegate.recorded == [.didInvalidate(.readerSessionInvalidationErrorUserCanceled)])
    #expect(session.begin()?.code == .readerTransceiveErrorSessionInvalidated)
    h.run(.seconds(1))
    #expect(delegate.recorded.count == 1)
  }

  @Test func nothingReachesTheDelegateAfterInvalidationEvenWhenTheTagAnswersLate() throws {
    let h = NFCHarness()
    let tag = SimulatedNFCTag(
      name: "big",
      ndef: fixture(or: NDEFMessage(.empty)) {
        NDEFMessage(try .unknown(payload: NDEFBytes([UInt8](repeating: 7, count: 400))))
      }.encoded())
    h.radio.present(tag)
    let delegate = ReadDelegate()
    let session = h.readSession(delegate)
    session.begin()
    try #require(h.run(until: { h.radio.worldEvents.contains(where: { $0.kind == "detected" }) }))
    session.invalidate()  // The read (60 ms for 400 bytes) is in flight.
    h.run(.seconds(5))
    #expect(delegate.recorded == [.didBecomeActive, .didInvalidate(.readerSessionInvalidationErrorUserCanceled)])
  }

  // MARK: Queues

  @Test func callbacksRunOnTheQueueGiven() {
    let h = NFCHarness()
    let queue = identifiedQueue("test.delegate")
    let delegate = ReadDelegate()
    delegate.expectedQueue.withLock { $0 = queue }
    h.radio.present(SimulatedNFCTag(name: "sticker", message: NFCHarness.hello))
    let session = h.readSession(delegate, queue: queue)
    #expect(session.sessionQueue === queue)
    session.begin()
    h.run(.seconds(1))
    #expect(delegate.recorded.count == 3)
    #expect(delegate.wrongQueue.load(ordering: .relaxed) == 0)
  }

  @Test func callbacksRunOnAPrivateSerialQueueWhenNoneIsGiven() {
    let h = NFCHarness()
    let delegate = ReadDelegate()
    h.radio.present(SimulatedNFCTag(name: "sticker", message: NFCHarness.hello))
    let session = h.readSession(delegate)
    let queue = session.sessionQueue
    queue.setSpecific(key: queueKey, value: ObjectIdentifier(queue).hashValue)
    delegate.expectedQueue.withLock { $0 = queue }
    #expect(queue !== DispatchQueue.main)
    session.begin()
    h.run(.seconds(1))
    #expect(delegate.recorded.count == 3)
    #expect(delegate.wrongQueue.load(ordering: .relaxed) == 0)
  }

  @Test func aPrivateQueueTheAppHasSeenIsNeverHandedToAnotherSession() {
    // Private queues only deliveries ran on are used again by later sessions; one the app asked for
    // (and may have marked or run work on) must stay its session's own.
    let h = NFCHarness()
    let delegate = ReadDelegate()
    let marker = 0x5E55_1011
    weak var gone: NFCNDEFReaderSession?
    do {
      let seen = h.readSession(delegate)
      seen.sessionQueue.setSpecific(key: queueKey, value: marker)
      seen.begin()
      h.run(.milliseconds(100))
      seen.invalidate()
      h.run(.milliseconds(100))
      gone = seen
    }
    #expect(gone == nil, "the session and its queue were freed")
    var seenAgain = 0
    for _ in 0..<40 {
      let session = h.readSession(delegate)
      session.begin()
      h.run(.milliseconds(100))
      session.invalidate()
      h.run(.milliseconds(100))
      if session.sessionQueue.sync(execute: { DispatchQueue.getSpecific(key: queueKey) }) == marker { seenAgain += 1 }
    }
    #expect(seenAgain == 0)
  }

  @Test func aClockDrivenFromTheDelegateQueueDeliversInPlaceInsteadOfDeadlocking() {
    let h = NFCHarness()
    let queue = DispatchQueue(label: "test.driver")
    let delegate = ReadDelegate()
    h.radio.present(SimulatedNFCTag(name: "sticker", message: NFCHarness.hello))
    let session = h.readSession(delegate, queue: queue)
    session.begin()
    queue.sync { h.run(.seconds(1)) }
    #expect(delegate.recorded.count == 3)
  }

  // MARK: Sheet

  @Test func theSheetRecordShowsEachAlertMessageAndTheClosingError() {
    let h = NFCHarness()
    let delegate = ReadDelegate()
    let session = h.readSession(delegate)
    session.alertMessage = "Hold near the tag"
    session.begin()
    h.run(.seconds(1))
    session.alertMessage = "Almost there"
    h.clock.runUntilIdle()
    #expect(session.alertMessage == "Almost there")
    session.invalidate(errorMessage: "Try again")
    h.clock.runUntilIdle()
    #expect(
      h.radio.sheetLog.map(\.kind) == [
        .presented(alertMessage: "Hold near the tag"), .alertMessageChanged("Almost there"),
        .dismissed(errorMessage: "Try again"),
      ])
  }

  @Test func anAlertMessageSetWhileWaitingIsTheOneTheSheetOpensWith() {
    let h = NFCHarness()
    let first = h.readSession(ReadDelegate())
    let second = h.readSession(ReadDelegate())
    first.begin()
    second.begin()
    h.run(.seconds(1))
    second.alertMessage = "Second in line"
    first.invalidate()
    h.run(.seconds(1))
    #expect(h.radio.sheetText == "Second in line")
    #expect(h.radio.sheetLog.last?.kind == .presented(alertMessage: "Second in line"))
  }

  @Test func aSessionWhoseEventStreamNeverEndsIsFreedOnceTheAppDropsIt() {
    let h = NFCHarness()
    weak var dropped: NFCNDEFReaderSession?
    var stream: AsyncStream<NFCReaderEvent>?
    do {
      let session = NFCNDEFReaderSession(invalidateAfterFirstRead: true, system: h.system)
      stream = session.events()  // Never begun: the stream never finishes.
      dropped = session
    }
    #expect(dropped == nil, "the stream the app still holds does not keep the session alive")
    #expect(stream != nil)
  }
}
