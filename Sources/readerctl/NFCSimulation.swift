import NFCKit
import ReaderCore
import ReaderKit
import ReaderSimulator

/// The simulated NFC device a command runs against, and what the command shows of it.
///
/// The `SimulatedNFCRadio` runs on the session's virtual clock, so NFC and Bluetooth share one timeline
/// and one pacing (`SimulationSession.run`); its `NFCReaderSystem` has the simulated system's rules
/// (Core NFC's documented time limit, a FIFO line). Every session event is shown as it is published,
/// before the delegate call it mirrors: with `--json` as one line (`NFCReaderEvent.jsonLine`), otherwise
/// as a narration line, preceded by what the system's sheet did meanwhile.
final class NFCSimulation: Sendable {
  /// How the narration tells what a session read and what a tag failed to give.
  struct Voice: Sendable {
    /// The text for the messages read from a tag.
    var messages: @Sendable ([NDEFMessage]) -> String
    /// Whether `didFailToReadNDEF` is narrated; a command that reports it as an error says false.
    var narratesReadFailures = true
  }

  let session: SimulationSession
  let radio: SimulatedNFCRadio
  let system: NFCReaderSystem
  /// The radio's timings, for holding tags near it long enough to be read.
  let timing: SimulatedNFCRadio.Timing
  private let voice: Voice
  private let state = Locked(State())

  private struct State {
    var events: [NFCReaderEvent] = []
    /// How many entries of the radio's sheet log have been narrated.
    var sheetNarrated = 0
  }

  /// A device on `session`'s clock, seeded with its seed.
  init(session: SimulationSession, voice: Voice) {
    self.session = session
    self.voice = voice
    let timing = SimulatedNFCRadio.Timing()
    self.timing = timing
    radio = SimulatedNFCRadio(clock: session.clock, seed: session.seed, timing: timing)
    system = NFCReaderSystem(radio: radio, scheduler: session.clock)
    system.addEventObserver { [weak self] event in self?.show(event) }
  }

  /// The clock's reading when the session's simulated time began: event and sheet times are clock
  /// readings, stamps count from the session's start (`SimulationSession.now`).
  private var origin: Duration { session.clock.elapsed - session.now }

  /// Every event so far, in order.
  var events: [NFCReaderEvent] { state.withLock { $0.events } }

  /// The system's time limit for a session (its own rule, not the app's).
  var sessionTimeout: Duration? { radio.policy.sessionTimeout }

  /// The simulated tag in the field, when there is one.
  var tagInField: String? { radio.tagsInField.last }

  /// How long a person holds a tag of `size` bytes near the device: long enough for it to be found and
  /// read twice over.
  func holdTime(forTagOf size: Int) -> Duration {
    .seconds(1) + (timing.command + timing.perByte * size) * 2
  }

  /// Runs the world until `condition` holds or `limit` has passed (see `SimulationSession.run`),
  /// narrating the sheet's changes as they happen; returns whether `condition` holds.
  @discardableResult
  func run(until condition: () -> Bool, limit: Duration, paced: Bool = true, interruptible: Bool = true)
    -> Bool
  {
    let held = session.run(
      until: {
        self.narrateSheet()
        return condition()
      }, limit: limit, paced: paced, interruptible: interruptible)
    narrateSheet()
    return held
  }

  /// Runs the world for `duration`; false when interrupted.
  @discardableResult
  func run(for duration: Duration, paced: Bool = true) -> Bool {
    run(until: { false }, limit: duration, paced: paced)
    return !Interrupt.requested
  }

  /// Prints a narration line stamped with `time` (now by default); silent with `--json`.
  func say(_ text: String, at time: Duration? = nil) {
    session.narrate(text, at: time)
  }

  /// Ends the command: with `--json` prints its outcome as the last line, with `raw` members (JSON text,
  /// such as NDEF messages) after the outcome's own; returns the status.
  func finish(_ outcome: CommandOutcome, raw: [(String, String)] = []) -> Int32 {
    guard session.json, case .object(let members) = outcome.json(at: session.now) else {
      return session.finish(outcome)
    }
    session.console.line(NFCJSON.object(members, raw: raw))
    return outcome.status
  }

  private func show(_ event: NFCReaderEvent) {
    state.withLock { $0.events.append(event) }
    let tag = tagInField
    if session.json {
      session.console.line(event.jsonLine(tag: tag, since: origin))
      return
    }
    narrateSheet()
    if case .didFailToReadNDEF = event.kind, !voice.narratesReadFailures { return }
    say(NFCNarration.sentence(for: event, tag: tag, messages: voice.messages), at: event.time - origin)
  }

  /// Narrates the sheet's changes not yet told, at the times they happened.
  private func narrateSheet() {
    guard !session.json else { return }
    let log = radio.sheetLog
    let start = state.withLock { state in
      defer { state.sheetNarrated = log.count }
      return state.sheetNarrated
    }
    for entry in log[min(start, log.count)...] { say(NFCNarration.sentence(for: entry), at: entry.time - origin) }
  }
}

/// The sentences the NFC narration is made of.
enum NFCNarration {
  /// What an event means, for people.
  static func sentence(
    for event: NFCReaderEvent, tag: String?, messages describe: ([NDEFMessage]) -> String
  ) -> String {
    let session = "Session \(event.session)"
    switch event.kind {
    case .didQueue(let position):
      return "\(session) waits in line (position \(position)): one reader session runs at a time."
    case .didBecomeActive:
      return "\(session) is active: the radio polls for tags."
    case .didDetectNDEFs(let messages):
      return "\(session) read \(tag ?? "a tag"): \(describe(messages))"
    case .didDetectTags(let tags):
      return "\(session) detected \(tag ?? "\(tags.count) tag\(tags.count == 1 ? "" : "s")")."
    case .didFailToReadNDEF(let error):
      return "\(session) could not read \(tag ?? "a tag"): \(failure(error))"
    case .didInvalidate(let error):
      return "\(session) ended: \(error.code) (\(error.errorCode)), \(reason(error))."
    }
  }

  /// What the sheet did.
  static func sentence(for entry: SimulatedNFCRadio.SheetEntry) -> String {
    switch entry.kind {
    case .presented(let message): "The sheet shows “\(message)”"
    case .alertMessageChanged(let message): "The sheet now says “\(message)”"
    case .dismissed(nil): "The sheet closes."
    case .dismissed(let message?): "The sheet closes showing “\(message)”"
    }
  }

  /// Why a tag gave no message: a malformed one as `readerctl ndef decode` reports it (with the byte
  /// offset), anything else by its code.
  static func failure(_ error: NFCReaderError) -> String {
    if let ndefError = error.ndefError {
      return "\(error.code) (\(error.errorCode)): \(NDEFCommand.malformed(ndefError))"
    }
    return "\(error.code) (\(error.errorCode)): \(error.message)"
  }

  /// Why a tag command failed, as `failure(_:)` says it; the error of a tag's completion handler.
  static func failure(_ error: any Error) -> String {
    failure(error as? NFCReaderError ?? NFCReaderError(.readerTransceiveErrorTagResponseError, "\(error)"))
  }

  /// Why a session ended, in words.
  static func reason(_ error: NFCReaderError) -> String {
    switch error.code {
    case .readerSessionInvalidationErrorFirstNDEFTagRead:
      "its first NDEF message was read, a normal end"
    case .readerSessionInvalidationErrorUserCanceled:
      error.context["by"] == "user" ? "the user tapped Cancel" : "the app invalidated it"
    case .readerSessionInvalidationErrorSessionTimeout:
      error.context["while"] == "waiting"
        ? "the system's time limit ran out while it waited in line" : "the system's time limit ran out"
    case .readerSessionInvalidationErrorSystemIsBusy:
      error.context["runningSession"] != nil
        ? "another session is running" : "the system is busy: another app holds the radio"
    case .readerSessionInvalidationErrorSessionTerminatedUnexpectedly:
      "the system ended it (the app moved to the background)"
    case .readerErrorUnsupportedFeature: "this device cannot read NFC tags"
    case .readerErrorRadioDisabled: "the NFC radio is off"
    default: error.message
    }
  }

  /// Messages as a person reads them, ` | ` between messages.
  static func describe(_ messages: [NDEFMessage]) -> String {
    messages.map(summary).joined(separator: " | ")
  }

  /// A message as a person reads it: each record's meaning, `; ` between records.
  static func summary(_ message: NDEFMessage) -> String {
    message.records.map(summary).joined(separator: "; ")
  }

  /// A message read from a tag (Core NFC's face), as `summary(_:)` says it.
  static func summary(_ message: NFCNDEFMessage) -> String {
    (try? NDEFMessage(message)).map(summary) ?? "a message that is not valid NDEF"
  }

  private static func summary(_ record: NDEFRecord) -> String {
    if record.isWellKnown("T"), let text = try? TextRecord(record) {
      return "Text “\(text.text)” (\(text.languageCode))"
    }
    if record.isWellKnown("U"), let uri = try? URIRecord(record) {
      return "URI \(uri.uri)"
    }
    if record.isWellKnown("Sp"), let poster = try? SmartPosterRecord(record) {
      let title = poster.titles.first.map { " “\($0.text)”" } ?? ""
      return "Smart Poster \(poster.uri.uri)\(title)"
    }
    if let type = record.mediaType { return "\(type), \(record.payload.count) bytes" }
    return "a record of TNF \(record.typeNameFormat.rawValue), \(record.payload.count) bytes"
  }
}

/// The delegate of a read-only session whose events the command follows through the system's event
/// log: it keeps how the session ended.
final class SessionEndWatcher: NFCNDEFReaderSessionDelegate {
  /// Why the session ended, once it has.
  let ended = Outcome<NFCReaderError>()

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    ended.set(NFCReaderError(invalidation: error))
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
}
