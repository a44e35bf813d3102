import NFCKit
import ReaderCore
import ReaderKit
import ReaderSimulator

/// The NFC story of `readerctl demo`: reader sessions on a simulated NFC device, on the demo's virtual
/// clock (after the Bluetooth story, or alone with `readerctl demo nfc`).
///
/// A session reads a badge; a second session begun while one runs waits in line and becomes active when
/// the first ends; another app holds the radio and the read loop retries once; a long round of reads in
/// continuous mode outlives two of the system's time limits through the read loop; a damaged label in a
/// read-write session changes what the sheet says and ends it with an error message; the user cancels
/// and nothing is shown. Every scene checks that the API did what the narration says.
final class NFCDemo: Sendable {
  private let nfc: NFCSimulation
  private let narrate: Bool
  private let alone: Bool

  /// Whether `positionals` ask for the NFC story alone (`demo nfc`) rather than both stories.
  static func isAlone(_ positionals: [String]) throws(UsageError) -> Bool {
    guard let story = positionals.first else { return false }
    guard story == "nfc" else { throw UsageError("unexpected argument '\(story)'") }
    if positionals.count > 1 { throw UsageError("unexpected argument '\(positionals[1])'") }
    return true
  }

  /// The story on `session`'s clock; `alone` when it is the whole demo.
  init(session: SimulationSession, narrate: Bool, alone: Bool) {
    nfc = NFCSimulation(session: session, voice: .init(messages: NFCNarration.describe))
    self.narrate = narrate
    self.alone = alone
  }

  private var session: SimulationSession { nfc.session }
  private var radio: SimulatedNFCRadio { nfc.radio }

  /// Plays every scene; returns how it ended.
  func play() -> CommandOutcome {
    if narrate {
      if alone {
        session.note("ReaderKit demo: a simulated NFC device (seed \(session.seed)).")
        session.note(
          "Times are simulated: \(DiscoverCommand.pacingNote(session)) while something happens, "
            + "and long waits are skipped.")
      } else {
        session.console.line()
        session.note("Now NFC: reader sessions on a simulated NFC device, on the same virtual clock.")
      }
      session.console.line()
    }
    do throws(NFCDemoFailure) {
      try readABadge()
      try waitInLine()
      try retryABusySystem()
      try readALongRound()
      try giveUpOnADamagedLabel()
      try cancel()
      nfc.say("That is a reader session's whole life: one at a time, single-use, ended for one reason each time.")
      return .success()
    } catch {
      if Interrupt.requested {
        session.screen.lineAfterInterrupt()
        session.console.error("readerctl: interrupted\n")
        return .failure(.canceled("demo"))
      }
      session.console.error("readerctl: the demo stopped: \(error.message)\n")
      return .failure(code: "demoStepFailed", message: error.message, status: ExitStatus.failure)
    }
  }

  // MARK: Scenes

  private func readABadge() throws(NFCDemoFailure) {
    nfc.say(
      "The app checks readingAvailable (\(nfc.system.readingAvailable)) and begins a session that ends after "
        + "its first read (invalidateAfterFirstRead).")
    let watcher = SessionEndWatcher()
    let reading = makeSession(watcher, alert: "Hold your badge near the top of the phone.")
    reading.begin()
    try pause(.seconds(1))
    nfc.say("Ada holds her badge near the phone.")
    let badge = try Tags.badge()
    radio.present(badge)
    let end = try awaitEnd(watcher)
    try expect(end, .readerSessionInvalidationErrorFirstNDEFTagRead)
    radio.remove(badge.name)
  }

  private func waitInLine() throws(NFCDemoFailure) {
    try pause(.seconds(1))
    nfc.say(
      "Two screens of the app want the reader at once: check-in begins a session, and the room screen begins "
        + "another before the first has ended.")
    let first = SessionEndWatcher()
    let second = SessionEndWatcher()
    let checkIn = makeSession(first, alert: "Check in: hold your badge near the phone.")
    let room = makeSession(second, alert: "Hold the phone near the room's tag.")
    checkIn.begin()
    try pause(.milliseconds(500))
    room.begin()
    try pause(.seconds(1))
    nfc.say("Ada holds her badge near the phone again.")
    let badge = try Tags.badge()
    radio.present(badge)
    try expect(try awaitEnd(first), .readerSessionInvalidationErrorFirstNDEFTagRead)
    radio.remove(badge.name)
    try pause(.seconds(1))
    nfc.say("She holds the phone near the tag beside the door of room 4.")
    let roomTag = try Tags.room()
    radio.present(roomTag)
    try expect(try awaitEnd(second), .readerSessionInvalidationErrorFirstNDEFTagRead)
    radio.remove(roomTag.name)

    let events = nfc.events
    let queued = events.contains { $0.session == room.identifier && $0.name == "didQueue" }
    let firstEnd = events.firstIndex { $0.session == checkIn.identifier && $0.name == "didInvalidateWithError" }
    let secondActive = events.firstIndex { $0.session == room.identifier && $0.name == "didBecomeActive" }
    try check(queued, "the second session did not wait in line")
    try check(
      firstEnd != nil && secondActive != nil && firstEnd! < secondActive!,
      "the second session did not become active after the first ended")
  }

  private func retryABusySystem() throws(NFCDemoFailure) {
    try pause(.seconds(1))
    nfc.say(
      "A wallet app holds the NFC radio just as the app begins reading a parcel's label with the read loop "
        + "(NFCReadLoop).")
    radio.setHeldByAnotherApp(true)
    let token = nfc.system.addEventObserver { [nfc] event in
      guard event.error?.code == .readerSessionInvalidationErrorSystemIsBusy else { return }
      nfc.radio.setHeldByAnotherApp(false)
      nfc.say("The wallet app lets go of the radio; the read loop retries once, without a word to the user.")
    }
    defer { nfc.system.removeEventObserver(token) }
    let finished = Outcome<NFCReadLoop.Outcome>()
    let loop = NFCReadLoop(
      system: nfc.system, alertMessage: "Hold the phone near the parcel's label.", onMessages: { _ in },
      completion: { finished.set($0) })
    loop.start()
    try pause(.seconds(1))
    nfc.say("The courier holds the phone near the label.")
    let label = try Tags.parcel(1)
    radio.add(label)
    radio.present(label.name, for: nfc.holdTime(forTagOf: label.ndefBytes?.count ?? 0))
    try check(nfc.run(until: { finished.isSet }, limit: .seconds(10)), "the read loop did not finish")
    try check(finished.value == .finished, "the read loop ended with \(String(describing: finished.value))")
    try check(loop.sessionsBegun == 2, "the read loop began \(loop.sessionsBegun) sessions, not 2")
    nfc.say("The label was read on the retry; a second busy system in a row would have been reported.")
  }

  private func readALongRound() throws(NFCDemoFailure) {
    try pause(.seconds(1))
    guard let limit = nfc.sessionTimeout else {
      nfc.say("This system sets no time limit on sessions; the long round is not needed.")
      return
    }
    nfc.say(
      "The courier scans a whole round of parcels in continuous mode. The system ends every session "
        + "\(DiscoverCommand.timeoutText(limit.inSeconds)) after its begin() (its rule: no session API sets it), so the "
        + "read loop begins a new session each time one times out.")
    let reads = Locked(0)
    let finished = Outcome<NFCReadLoop.Outcome>()
    let loop = NFCReadLoop(
      system: nfc.system, continuous: true, alertMessage: "Scan the next parcel.",
      onMessages: { messages in reads.withLock { $0 += messages.count } }, completion: { finished.set($0) })
    let timeoutsBefore = count("didInvalidateWithError") { $0.code == .readerSessionInvalidationErrorSessionTimeout }
    var parcel = 2
    loop.start()
    for street in 0..<3 {
      let active = count("didBecomeActive")
      let waited = nfc.run(
        until: { self.count("didBecomeActive") > active }, limit: limit + .seconds(5), paced: street == 0)
      try check(waited, "the read loop began no new session")
      let target = reads.withLock { $0 } + 3
      var at = Duration.milliseconds(500)
      for _ in 0..<3 {
        let tag = try Tags.parcel(parcel)
        let hold = nfc.holdTime(forTagOf: tag.ndefBytes?.count ?? 0)
        radio.add(tag)
        session.clock.schedule(after: at) { [radio] in radio.present(tag.name, for: hold) }
        at += hold + .milliseconds(500)
        parcel += 1
      }
      try check(
        nfc.run(until: { reads.withLock { $0 } >= target }, limit: .seconds(20)),
        "the parcels of street \(street + 1) were not all read")
      if street < 2 {
        try pause(.seconds(1))
        nfc.say("The courier drives to the next street; no tag comes near for a while (skipped).")
      }
    }
    try pause(.seconds(1))
    nfc.say("The round is done: the courier taps Done, and the app stops the read loop (invalidate()).")
    loop.stop()
    try check(nfc.run(until: { finished.isSet }, limit: .seconds(10)), "the read loop did not stop")
    try check(finished.value == .stopped, "the read loop ended with \(String(describing: finished.value))")
    let timeouts =
      count("didInvalidateWithError") { $0.code == .readerSessionInvalidationErrorSessionTimeout } - timeoutsBefore
    try check(timeouts == 2, "the round saw \(timeouts) time limits, not 2")
    nfc.say(
      "\(reads.withLock { $0 }) parcels read in \(loop.sessionsBegun) sessions: the round outlived "
        + "\(timeouts) time limits.")
  }

  private func giveUpOnADamagedLabel() throws(NFCDemoFailure) {
    try pause(.seconds(1))
    nfc.say(
      "At the warehouse the app checks a shelf label in a read-write session: it connects to the tag and reads "
        + "it itself, so it can say what went wrong.")
    let checker = LabelChecker(nfc: nfc)
    let checking = NFCNDEFReaderSession(delegate: checker, invalidateAfterFirstRead: false, system: nfc.system)
    checking.alertMessage = "Hold the phone near the shelf label."
    checking.begin()
    try pause(.seconds(1))
    nfc.say("The worker holds the phone near a scuffed label.")
    radio.add(Tags.damagedLabel)
    radio.present(Tags.damagedLabel.name, for: .seconds(1))
    try pause(.seconds(2))
    nfc.say("The worker tries again, the phone flat against the label.")
    radio.present(Tags.damagedLabel.name, for: .seconds(1))
    let end = try withExtendedLifetime(checker) { () throws(NFCDemoFailure) in
      try check(nfc.run(until: { checker.ended.isSet }, limit: .seconds(10)), "the label session did not end")
      guard let end = checker.ended.value else { throw NFCDemoFailure("the label session did not end") }
      return end
    }
    try expect(end, .readerSessionInvalidationErrorUserCanceled)
    try check(end.context["by"] == "app", "the label session was not ended by the app")
    let closed = radio.sheetLog.contains { $0.kind == .dismissed(errorMessage: LabelChecker.giveUp) }
    try check(closed, "the sheet did not close with the app's error message")
  }

  private func cancel() throws(NFCDemoFailure) {
    try pause(.seconds(1))
    nfc.say("Back at the desk the app begins reading again, and the user changes their mind.")
    let finished = Outcome<NFCReadLoop.Outcome>()
    let loop = NFCReadLoop(
      system: nfc.system, alertMessage: "Hold your badge near the phone.", onMessages: { _ in },
      completion: { finished.set($0) })
    loop.start()
    try pause(.seconds(2))
    nfc.say("The user taps Cancel on the sheet.")
    radio.tapCancel()
    try check(nfc.run(until: { finished.isSet }, limit: .seconds(10)), "the read loop did not stop")
    try check(finished.value == .stopped, "the read loop ended with \(String(describing: finished.value))")
    nfc.say("The read loop stops quietly: the user chose to stop, so there is nothing to tell them.")
  }

  // MARK: Helpers

  private func makeSession(_ delegate: SessionEndWatcher, alert: String) -> NFCNDEFReaderSession {
    let session = NFCNDEFReaderSession(delegate: delegate, invalidateAfterFirstRead: true, system: nfc.system)
    session.alertMessage = alert
    return session
  }

  /// Runs until the watched session has ended; returns why.
  private func awaitEnd(_ watcher: SessionEndWatcher) throws(NFCDemoFailure) -> NFCReaderError {
    try withExtendedLifetime(watcher) { () throws(NFCDemoFailure) in
      try check(nfc.run(until: { watcher.ended.isSet }, limit: .seconds(10)), "the session did not end")
      guard let end = watcher.ended.value else { throw NFCDemoFailure("the session did not end") }
      return end
    }
  }

  /// How many events named `name` (and whose error passes `filter`) were published so far.
  private func count(_ name: String, where filter: (NFCReaderError) -> Bool = { _ in true }) -> Int {
    nfc.events.filter { $0.name == name && ($0.error.map(filter) ?? true) }.count
  }

  private func pause(_ duration: Duration) throws(NFCDemoFailure) {
    try check(nfc.run(for: duration), "interrupted")
  }

  private func expect(_ error: NFCReaderError, _ code: NFCReaderError.Code) throws(NFCDemoFailure) {
    try check(error.code == code, "a session ended with \(error), not \(code)")
  }

  private func check(_ condition: Bool, _ message: @autoclosure () -> String) throws(NFCDemoFailure) {
    if Interrupt.requested { throw NFCDemoFailure("interrupted") }
    if !condition { throw NFCDemoFailure(message()) }
  }
}

private struct NFCDemoFailure: Error {
  var message: String
  init(_ message: String) { self.message = message }
}

/// The tags of the story.
private enum Tags {
  static func badge() throws(NFCDemoFailure) -> SimulatedNFCTag {
    try tag("badge") { () throws(NDEFError) in
      [try .text("Ada Lovelace, Engines"), try .uri("https://example.com/staff/ada")]
    }
  }

  static func room() throws(NFCDemoFailure) -> SimulatedNFCTag {
    try tag("room-4-tag") { () throws(NDEFError) in [try .uri("https://example.com/rooms/4"), try .text("Room 4")] }
  }

  /// A Text record whose PAYLOAD_LENGTH (8) points past the end of the bytes: malformed at byte 2.
  static let damagedLabel = SimulatedNFCTag(
    name: "shelf-label", ndef: [0xD1, 0x01, 0x08, 0x54, 0x02, 0x65, 0x6E, 0x68, 0x69])

  static func parcel(_ number: Int) throws(NFCDemoFailure) -> SimulatedNFCTag {
    try tag("parcel-\(number)") { () throws(NDEFError) in [try .text("Parcel \(1040 + number)")] }
  }

  private static func tag(_ name: String, _ records: () throws(NDEFError) -> [NDEFRecord]) throws(NFCDemoFailure)
    -> SimulatedNFCTag
  {
    do throws(NDEFError) {
      return SimulatedNFCTag(name: name, message: try NDEFMessage(records: records()))
    } catch {
      throw NFCDemoFailure("the tag \(name) cannot be built: \(error.message)")
    }
  }
}

/// The app's side of the shelf-label check: connect, read, and on a failure first ask the worker to try
/// again (the sheet's message changes), then give up with an error message on the sheet.
private final class LabelChecker: NFCNDEFReaderSessionTagDelegate, Sendable {
  static let tryAgain = "That label could not be read. Hold the phone flat against it."
  static let giveUp = "This label is damaged. Please replace it."

  let nfc: NFCSimulation
  let ended = Outcome<NFCReaderError>()
  private let failures = Locked(0)

  init(nfc: NFCSimulation) { self.nfc = nfc }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    ended.set(NFCReaderError(invalidation: error))
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
    guard let tag = tags.first else { return }
    session.connect(to: tag) { [self] error in
      if let error {
        nfc.say("connect failed: \(NFCNarration.failure(error)).")
        return
      }
      tag.readNDEF { [self] message, error in
        guard let error else {
          nfc.say("readNDEF: \(message.map(NFCNarration.summary) ?? "no message").")
          session.invalidate()
          return
        }
        nfc.say("readNDEF failed: \(NFCNarration.failure(error)).")
        let count = failures.withLock { count in
          count += 1
          return count
        }
        if count == 1 {
          nfc.say("The app asks the worker to try again (alertMessage).")
          session.alertMessage = Self.tryAgain
        } else {
          nfc.say("The app gives up and ends the session with invalidate(errorMessage:).")
          session.invalidate(errorMessage: Self.giveUp)
        }
      }
    }
  }
}
