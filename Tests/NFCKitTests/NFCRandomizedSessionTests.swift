import NFCKit
import ReaderCore
import ReaderSimulator
import TestSupport
import Testing

/// Random worlds: sessions of every kind begun, invalidated and re-labelled at random times, tags and
/// faults from a seeded schedule. After every event the invariants are checked against the simulated
/// system's ground truth (its radio, sheet and log). A failure names its seed; `World(seed:)` replays it.
@Suite struct NFCRandomizedSessionTests {
  @Test(arguments: 0..<48 as Range<UInt64>)
  func everyEventKeepsTheSessionAndSystemInvariants(seed: UInt64) {
    let world = World(seed: seed)
    world.run()
    for violation in world.checker.violations.prefix(10) {
      Issue.record("seed \(seed): \(violation)")
    }
    #expect(world.checker.eventCount > 0, "seed \(seed): nothing happened")
  }

  @Test(arguments: [3, 17, 40] as [UInt64])
  func theSameSeedGivesTheSameEventLog(seed: UInt64) {
    let first = World(seed: seed)
    first.run()
    let second = World(seed: seed)
    second.run()
    #expect(first.log.all == second.log.all, "seed \(seed)")
    #expect(first.radio.sheetLog == second.radio.sheetLog, "seed \(seed)")
    #expect(first.log.count > 10)
  }
}

/// What a session of the random world is.
private enum Kind: CaseIterable {
  case firstRead, continuous, readWrite
}

/// What a read-write session's delegate does with the first tag it is given.
private enum Plan: CaseIterable {
  case readThenInvalidate, writeThenInvalidateWithMessage, restartPolling, nothing
}

/// One seeded world: a simulated system, its schedule of tags and faults, and an app's random script.
private final class World: Sendable {
  static let duration = Duration.seconds(90)
  static let tags: [SimulatedNFCTag] = [
    SimulatedNFCTag(name: "hello", message: fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .text("hello")) }),
    SimulatedNFCTag(
      name: "poster", message: fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .uri("https://example.com/poster")) }),
    .blank(name: "blank"),
    .unformatted(name: "card"),
    SimulatedNFCTag(name: "broken", ndef: [0xD1, 0x01, 0x08, 0x54, 0x02, 0x65, 0x6E]),
    SimulatedNFCTag(
      name: "small", message: fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .text("s")) }, capacity: 12),
  ]

  let seed: UInt64
  let system: NFCReaderSystem
  let radio: SimulatedNFCRadio
  let checker: Checker
  let log = Box<String>()
  private let random: Locked<SeededRandom>
  private let delegates = Locked<[UInt64: AnyObject]>([:])

  init(seed: UInt64) {
    self.seed = seed
    var random = SeededRandom(seed: seed)
    let timeout = [Duration.seconds(10), .seconds(20), .seconds(60)][Int(random.next() % 3)]
    let whenBusy: NFCSystemPolicy.BusyBehavior = random.next() % 5 == 0 ? .refuse : .queue
    let policy = NFCSystemPolicy(sessionTimeout: timeout, whenBusy: whenBusy)
    (system, radio) = NFCReaderSystem.simulated(seed: seed, policy: policy)
    for tag in Self.tags { radio.add(tag) }
    checker = Checker(radio: radio, policy: policy)
    self.random = Locked(random)
    system.addEventObserver { [checker, log] event in
      checker.check(event)
      log.put("\(event.time) #\(event.session) \(event.name) \(event.error.map { "\($0.code)" } ?? "")")
    }
  }

  func run() {
    SimulatedNFCSchedule.random(seed: seed, tags: Self.tags.map(\.name), over: Self.duration).apply(to: radio)
    var time = Duration.zero
    while true {
      let (gap, roll) = random.withLock { ($0.nextUnit(), $0.next() % 10) }
      time += .milliseconds(Int64(gap * 8000))
      guard time < Self.duration else { break }
      radio.clock.schedule(after: time) { [self] in act(roll) }
    }
    let timeout = checker.policy.sessionTimeout ?? .zero
    radio.clock.advance(to: Self.duration + timeout + .seconds(20))
    checker.finish(delegates: delegates.withLock { $0 })
    if let pending = radio.clock.checkNoPendingWork() { checker.violations.append("left work behind: \(pending)") }
  }

  /// One step of the app's script, on the clock.
  private func act(_ roll: UInt64) {
    switch roll {
    case 0..<6:
      let count = random.withLock { Int($0.next() % 3) + 1 }
      for _ in 0..<count { beginSession() }
    case 6..<9:
      guard let id = checker.randomLiveSession(random.withLock { $0.next() }) else { return }
      let session = delegates.withLock { ($0[id] as? Holder)?.session }
      checker.appInvalidated(id)
      if roll == 8 { session?.invalidate(errorMessage: "stopped") } else { session?.invalidate() }
    default:
      guard let id = checker.randomLiveSession(random.withLock { $0.next() }) else { return }
      delegates.withLock { ($0[id] as? Holder)?.session }?.alertMessage = "step \(roll)"
    }
  }

  private func beginSession() {
    let (kind, plan) = random.withLock {
      (Kind.allCases[Int($0.next() % 3)], Plan.allCases[Int($0.next() % 4)])
    }
    let session: NFCNDEFReaderSession
    let holder: Holder
    switch kind {
    case .firstRead, .continuous:
      let delegate = Recorder()
      session = NFCNDEFReaderSession(
        delegate: delegate, queue: nil, invalidateAfterFirstRead: kind == .firstRead, system: system)
      holder = Holder(recorder: delegate, session: session)
    case .readWrite:
      let delegate = TagRecorder(plan: plan, checker: checker)
      session = NFCNDEFReaderSession(delegate: delegate, queue: nil, invalidateAfterFirstRead: false, system: system)
      holder = Holder(recorder: delegate, session: session)
    }
    delegates.withLock { $0[session.identifier] = holder }
    checker.register(session.identifier, kind: kind, at: radio.clock.elapsed)
    session.begin()
  }
}

/// Keeps a session and its delegate (held weakly by the session) for the whole run.
private final class Holder: Sendable {
  let recorder: any CallLog
  let session: NFCNDEFReaderSession
  init(recorder: any CallLog, session: NFCNDEFReaderSession) {
    self.recorder = recorder
    self.session = session
  }
}

private protocol CallLog: Sendable {
  var calls: [String] { get }
}

private final class Recorder: NFCNDEFReaderSessionDelegate, CallLog {
  private let log = Locked<[String]>([])
  var calls: [String] { log.withLock { $0 } }
  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    log.withLock { $0.append("didInvalidate") }
  }
  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
    log.withLock { $0.append("didDetectNDEFs") }
  }
  func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) { log.withLock { $0.append("didBecomeActive") } }
  func readerSession(_ session: NFCNDEFReaderSession, didFailToReadNDEF error: NFCReaderError) {
    log.withLock { $0.append("didFailToReadNDEF") }
  }
}

private final class TagRecorder: NFCNDEFReaderSessionTagDelegate, CallLog {
  private let log = Locked<[String]>([])
  private let plan: Plan
  private let checker: Checker
  var calls: [String] { log.withLock { $0 } }

  init(plan: Plan, checker: Checker) {
    self.plan = plan
    self.checker = checker
  }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    log.withLock { $0.append("didInvalidate") }
  }
  func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) { log.withLock { $0.append("didBecomeActive") } }

  func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
    log.withLock { $0.append("didDetectTags") }
    guard let tag = tags.first else { return }
    let (plan, checker) = (self.plan, self.checker)
    session.connect(to: tag) { error in
      guard error == nil else { return }
      tag.readNDEF { message, error in
        checker.checkRead(message.flatMap { try? NDEFMessage($0) }, readerError(error), session: session.identifier)
        switch plan {
        case .readThenInvalidate:
          checker.appInvalidated(session.identifier)
          session.invalidate()
        case .writeThenInvalidateWithMessage:
          tag.writeNDEF(fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .text("hello")) }) { _ in
            checker.appInvalidated(session.identifier)
            session.invalidate(errorMessage: "written")
          }
        case .restartPolling:
          session.restartPolling()
        case .nothing:
          break
        }
      }
    }
  }
}

/// The invariants, checked on every event against the simulated system's ground truth.
private final class Checker: @unchecked Sendable {
  // Touched on the scheduler (events, script steps and delegate calls it waits for) and read at the end.
  enum Phase { case begun, queued, active, ended }

  struct Session {
    var kind: Kind
    var begunAt: Duration
    var phase = Phase.begun
    var appInvalidated = false
    var lastNDEFs: Duration?
  }

  let radio: SimulatedNFCRadio
  let policy: NFCSystemPolicy
  private(set) var sessions: [UInt64: Session] = [:]
  private var active: UInt64?
  private var queued: [UInt64] = []
  private var activatedFromLine: [UInt64] = []
  private let knownMessages: [NDEFMessage]
  var violations: [String] = []
  private(set) var eventCount = 0

  init(radio: SimulatedNFCRadio, policy: NFCSystemPolicy) {
    self.radio = radio
    self.policy = policy
    knownMessages = World.tags.compactMap { $0.ndefBytes.flatMap { try? NDEFMessage(decoding: $0) } }
  }

  func register(_ id: UInt64, kind: Kind, at time: Duration) {
    sessions[id] = Session(kind: kind, begunAt: time)
  }

  func appInvalidated(_ id: UInt64) { sessions[id]?.appInvalidated = true }

  func randomLiveSession(_ draw: UInt64) -> UInt64? {
    let live = sessions.filter { $0.value.phase != .ended }.keys.sorted()
    return live.isEmpty ? nil : live[Int(draw % UInt64(live.count))]
  }

  private func fail(_ message: String, _ event: NFCReaderEvent) {
    violations.append("\(event.time) session \(event.session) \(event.name): \(message)")
  }

  /// Whether the simulated world logged `kind` at `time`.
  private func worldLogged(_ kind: String, at time: Duration) -> Bool {
    radio.worldEvents.reversed().prefix { $0.time >= time }.contains { $0.time == time && $0.kind == kind }
  }

  func checkRead(_ message: NDEFMessage?, _ error: NFCReaderError?, session: UInt64) {
    if let message,
      !(knownMessages + [fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .text("hello")) }]).contains(message)
    {
      violations.append("session \(session) read a message no tag holds: \(message)")
    }
    if message == nil && error == nil { violations.append("session \(session) read neither a message nor an error") }
  }

  func check(_ event: NFCReaderEvent) {
    eventCount += 1
    guard var session = sessions[event.session] else {
      fail("an event of a session the app never began", event)
      return
    }
    defer { sessions[event.session] = session }
    let round = radio.currentRound
    switch event.kind {
    case .didQueue:
      if session.phase != .begun { fail("queued in phase \(session.phase)", event) }
      if policy.whenBusy == .refuse { fail("queued on a refusing system", event) }
      session.phase = .queued
      queued.append(event.session)
    case .didBecomeActive:
      if session.phase != .begun && session.phase != .queued { fail("active in phase \(session.phase)", event) }
      if let other = active { fail("active while session \(other) is", event) }
      if session.phase == .queued { activatedFromLine.append(event.session) }
      session.phase = .active
      active = event.session
      if !radio.isPolling || round?.session != event.session {
        fail("active but the radio polls for \(String(describing: round))", event)
      }
      if radio.sheetText == nil { fail("active without a sheet", event) }
    case .didDetectNDEFs(let messages):
      if session.phase != .active { fail("detection in phase \(session.phase)", event) }
      if session.kind == .readWrite { fail("messages reported to a read-write session", event) }
      if round?.session != event.session {
        fail("detection while the radio polls for \(String(describing: round))", event)
      }
      if messages.contains(where: { !knownMessages.contains($0) }) { fail("a message no tag holds", event) }
      session.lastNDEFs = event.time
    case .didDetectTags:
      if session.phase != .active { fail("detection in phase \(session.phase)", event) }
      if session.kind != .readWrite { fail("tags reported to a read-only session", event) }
      if round?.session != event.session {
        fail("detection while the radio polls for \(String(describing: round))", event)
      }
    case .didFailToReadNDEF(let error):
      if session.phase != .active { fail("detection in phase \(session.phase)", event) }
      switch error.code {
      case .ndefReaderSessionErrorZeroLengthMessage, .readerTransceiveErrorTagConnectionLost: break
      case .readerTransceiveErrorTagResponseError:
        let malformed = error.context["reason"] == "malformedMessage" && error.ndefError != nil
        if !malformed && error.context["reason"] != "notNDEFFormatted" { fail("unexplained tag error \(error)", event) }
      default: fail("unexpected read failure \(error)", event)
      }
    case .didInvalidate(let error):
      if session.phase == .ended { fail("invalidated twice", event) }
      let wasActive = session.phase == .active
      if wasActive { active = nil }
      session.phase = .ended
      if wasActive && round?.session == event.session { fail("the radio still polls for the ended session", event) }
      if wasActive && radio.sheetText != nil { fail("the sheet stays up after the end", event) }
      let deadline = policy.sessionTimeout.map { session.begunAt + $0 }
      if let deadline, event.time > deadline { fail("ended after its time limit \(deadline)", event) }
      checkReason(error, session, event, deadline: deadline)
    }
  }

  private func checkReason(_ error: NFCReaderError, _ session: Session, _ event: NFCReaderEvent, deadline: Duration?) {
    switch error.code {
    case .readerSessionInvalidationErrorFirstNDEFTagRead:
      if session.kind != .firstRead || session.lastNDEFs != event.time { fail("first-read end without a read", event) }
    case .readerSessionInvalidationErrorSessionTimeout:
      if event.time != deadline {
        fail("timed out at \(event.time), its limit is \(String(describing: deadline))", event)
      }
    case .readerSessionInvalidationErrorUserCanceled:
      if !session.appInvalidated && !worldLogged("cancelTapped", at: event.time) { fail("canceled by nobody", event) }
    case .readerSessionInvalidationErrorSystemIsBusy:
      if policy.whenBusy != .refuse && !worldLogged("pollingRefused(busy)", at: event.time) {
        fail("busy while nothing held the radio", event)
      }
    case .readerSessionInvalidationErrorSessionTerminatedUnexpectedly:
      if !worldLogged("appMovedToBackground", at: event.time) { fail("terminated while the app stayed", event) }
    case .readerErrorRadioDisabled:
      if radio.isRadioOn { fail("radio disabled while it is on", event) }
    default:
      fail("unexpected end \(error)", event)
    }
  }

  func finish(delegates: [UInt64: AnyObject]) {
    for (id, session) in sessions.sorted(by: { $0.key < $1.key }) where session.phase != .ended {
      violations.append("session \(id) never ended (phase \(session.phase))")
    }
    let lineOrder = queued.filter { activatedFromLine.contains($0) }
    if lineOrder != activatedFromLine {
      violations.append("the line is not FIFO: queued \(lineOrder), activated \(activatedFromLine)")
    }
    for (id, holder) in delegates.sorted(by: { $0.key < $1.key }) {
      guard let calls = (holder as? Holder)?.recorder.calls else { continue }
      if calls.filter({ $0 == "didInvalidate" }).count != 1 || calls.last != "didInvalidate" {
        violations.append("session \(id)'s delegate heard \(calls)")
      }
      if let first = calls.firstIndex(where: { $0.hasPrefix("didDetect") || $0 == "didFailToReadNDEF" }),
        !calls[..<first].contains("didBecomeActive")
      {
        violations.append("session \(id)'s delegate heard a detection before didBecomeActive: \(calls)")
      }
    }
  }
}
