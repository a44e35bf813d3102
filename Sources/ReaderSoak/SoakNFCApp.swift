import Dispatch
import Foundation
import NFCKit
import ReaderKit
import ReaderSimulator

/// The NFC half of one launch of the app: it begins reader sessions of every kind now and then (a
/// person then holds a tag to the phone), works the tags of read-write sessions, ends sessions itself,
/// and carries out the NFC commands of the fault schedule. Its delegates report every call to the
/// station's `NFCTruth`, and are kept for the whole run so that a late call still finds them.
final class SoakNFCApp: @unchecked Sendable {
  // Confined to the thread that drives the clock.
  let system: NFCReaderSystem
  let process: SoakProcess
  unowned let station: SoakStation
  /// Draws for what the app does on its own (when it begins sessions, and of which kind), kept apart
  /// from those for what it does in reply to events: removing a fault then leaves the routine as it was,
  /// which keeps shrinking a failure effective.
  private var routine: SeededRandom
  private var random: SeededRandom
  private var sessions: [(key: NFCTruth.Key, session: NFCNDEFReaderSession)] = []
  /// Every delegate this launch created: a session holds its delegate weakly.
  private var delegates: [AnyObject] = []
  /// The run is winding down: no new sessions.
  var winding = false

  init(station: SoakStation, process: SoakProcess, seed: UInt64) {
    self.station = station
    self.process = process
    self.routine = SeededRandom(seed: seed)
    self.random = SeededRandom(seed: seed ^ 0x7EAC_7105)
    system = NFCReaderSystem(radio: station.nfcRadio, scheduler: station.clock)
  }

  private var truth: NFCTruth { station.nfcTruth }
  private var radio: SimulatedNFCRadio { station.nfcRadio }

  /// Starts the app's routine: a session every five minutes or so.
  func start() {
    let gap = Duration.seconds(300) * -log1p(-routine.nextUnit())
    let kind = (routine.nextUnit(), Int(routine.next() % 4))
    station.clock.schedule(after: gap) { [self] in
      guard process.isAlive, !winding else { return }
      begin(kind)
      start()
    }
  }

  /// Carries out an NFC command of the fault schedule.
  func command(_ action: SoakAction) {
    guard process.isAlive else { return }
    switch action.kind {
    case .nfcBurst:
      for _ in 0..<max(1, Int(action.amount)) { begin((random.nextUnit(), Int(random.next() % 4))) }
    case .nfcInvalidate:
      let live = sessions.filter { !truth.isInvalidated($0.key) }
      guard !live.isEmpty else { return }
      let chosen = live[Int(action.amount) % live.count].session
      if random.nextUnit() < 0.5 { chosen.invalidate() } else { chosen.invalidate(errorMessage: "Stopped") }
    default:
      break
    }
  }

  /// Invalidates the session that holds the radio, if it is one of this launch's.
  func invalidateRunning() {
    guard process.isAlive, let round = radio.currentRound,
      let running = sessions.first(where: { $0.session.identifier == round.session })?.session
    else { return }
    running.invalidate()
  }

  /// Begins a session of the kind `draw` picks: read-write (with one of four plans), read-only ending
  /// at the first read, or continuous read-only.
  private func begin(_ draw: (roll: Double, plan: Int)) {
    let roll = draw.roll
    let session: NFCNDEFReaderSession
    if roll < 0.3 {
      let delegate = SoakTagSessionDelegate(app: self, plan: draw.plan)
      delegates.append(delegate)
      session = NFCNDEFReaderSession(
        delegate: delegate, queue: station.nfcQueue, invalidateAfterFirstRead: false, system: system)
    } else {
      let delegate = SoakReadSessionDelegate(app: self, continuous: roll > 0.7)
      delegates.append(delegate)
      session = NFCNDEFReaderSession(
        delegate: delegate, queue: station.nfcQueue, invalidateAfterFirstRead: roll <= 0.7, system: system)
    }
    let key = NFCTruth.Key(generation: process.generation, session: session.identifier)
    sessions.append((key, session))
    if sessions.count > 64 { sessions.removeAll { truth.isInvalidated($0.key) } }
    truth.begun(key, readWrite: session.detectsTags)
    session.alertMessage = "Hold a tag near the phone"
    session.begin()
  }

  func key(_ session: NFCNDEFReaderSession) -> NFCTruth.Key {
    NFCTruth.Key(generation: process.generation, session: session.identifier)
  }

  /// The session became active: a person holds a tag to the phone (most of the time); a continuous
  /// session is ended by the app after a while.
  func becameActive(_ session: NFCNDEFReaderSession, continuous: Bool) {
    guard process.isAlive else { return }
    if random.nextUnit() < 0.85 {
      let tag = station.tags[Int(random.next() % UInt64(station.tags.count))].name
      let delay = SoakFault.between(.milliseconds(300), .seconds(4), &random)
      let hold = SoakFault.between(.milliseconds(300), .seconds(5), &random)
      station.clock.schedule(after: delay) { [radio] in radio.present(tag, for: hold) }
    }
    if continuous {
      let after = SoakFault.between(.seconds(5), .seconds(45), &random)
      station.clock.schedule(after: after) { [self] in
        guard process.isAlive else { return }
        session.invalidate()
      }
    }
  }

  /// A read-write session was given tags: connect the first, read it, then do what the plan says
  /// (invalidate, write and invalidate, restart polling once, or nothing).
  func detected(_ tags: [NFCNDEFTag], in session: NFCNDEFReaderSession, plan: Int, firstRound: Bool) {
    guard process.isAlive, let tag = tags.first else { return }
    let key = key(session)
    let (truth, process) = (self.truth, self.process)
    session.connect(to: tag) { error in
      truth.completed(key, operation: "connect", succeeded: error == nil)
      guard error == nil, process.isAlive else { return }
      tag.readNDEF { message, error in
        truth.completed(key, operation: "readNDEF", succeeded: error == nil, message: message)
        guard process.isAlive else { return }
        switch plan {
        case 0:
          session.invalidate()
        case 1:
          guard let message = try? NDEFMessage(.text("soak \(key.session)")) else { return session.invalidate() }
          tag.writeNDEF(message) { error in
            truth.completed(key, operation: "writeNDEF", succeeded: error == nil)
            guard process.isAlive else { return }
            session.invalidate(errorMessage: "Written")
          }
        case 2 where firstRound:
          session.restartPolling()
        default:
          break
        }
      }
    }
  }
}

/// The delegate of a read-only session: reports every call, and lets the app react.
final class SoakReadSessionDelegate: NFCNDEFReaderSessionDelegate, @unchecked Sendable {
  private let app: SoakNFCApp
  private let continuous: Bool
  private let truth: NFCTruth

  init(app: SoakNFCApp, continuous: Bool) {
    self.app = app
    self.continuous = continuous
    self.truth = app.station.nfcTruth
  }

  func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) {
    truth.delivered(app.key(session), .didBecomeActive)
    app.becameActive(session, continuous: continuous)
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
    truth.delivered(app.key(session), .didDetectNDEFs, messages: messages)
  }

  func readerSession(_ session: NFCNDEFReaderSession, didFailToReadNDEF error: NFCReaderError) {
    truth.delivered(app.key(session), .didFailToReadNDEF)
  }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    truth.delivered(app.key(session), .didInvalidate)
  }
}

/// The delegate of a read-write session: reports every call, and works the tags it is given.
final class SoakTagSessionDelegate: NFCNDEFReaderSessionTagDelegate, @unchecked Sendable {
  private let app: SoakNFCApp
  private let plan: Int
  private let truth: NFCTruth

  init(app: SoakNFCApp, plan: Int) {
    self.app = app
    self.plan = plan
    self.truth = app.station.nfcTruth
  }

  func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) {
    truth.delivered(app.key(session), .didBecomeActive)
    app.becameActive(session, continuous: false)
  }

  private var rounds = 0

  func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
    truth.delivered(app.key(session), .didDetectTags)
    rounds += 1
    app.detected(tags, in: session, plan: plan, firstRound: rounds == 1)
  }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    truth.delivered(app.key(session), .didInvalidate)
  }
}
