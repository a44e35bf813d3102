import NFCKit
import ReaderCore
import ReaderKit
import ReaderSimulator

/// `readerctl nfc scan`: tag files brought one after another to the simulated NFC device, read through
/// a reader session (or, `--continuous`, through the read loop's sessions).
///
/// How it ends, and its status (see `NFCCommand.scanHelp`):
/// - one session (`invalidateAfterFirstRead`): the first message read ends it (0). A session that reads
///   nothing ends at the system's time limit: 65 when a tag's message was malformed or blank (the
///   first such tag's error, with its byte offset), 75 when no tag gave anything (no tags at all).
/// - `--continuous`: reading stops at the first time limit after the last tag has left: 0 when every tag
///   gave a message, 65 when one did not (each reported as it happened), 75 without tags.
enum NFCScanCommand {
  /// What the sheet asks of the person.
  static let alertMessage = "Hold an NFC tag near the reader."
  /// When the first tag comes near, after the session begins.
  private static let lead = Duration.milliseconds(500)
  /// The pause between one tag leaving and the next coming near.
  private static let gap = Duration.seconds(1)

  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try NFCCommand.scanHelp.parse(arguments)
    let files = options.positionals
    if !options.has("tags"), let first = files.first {
      throw UsageError("unexpected argument '\(first)': tag files follow --tags")
    }
    if options.has("tags"), files.isEmpty { throw UsageError("--tags needs at least one FILE") }
    let continuous = options.has("continuous")
    let session = try NFCCommand.session(options, console: console)
    let nfc = NFCSimulation(
      session: session,
      voice: .init(messages: { $0.map { NDEFJSON.render($0) }.joined(separator: " ") }, narratesReadFailures: false))
    Interrupt.install()

    var tags: [SimulatedNFCTag] = []
    do throws(NDEFCommandFailure) {
      for path in files { tags.append(SimulatedNFCTag(name: path, ndef: try readTag(path, hex: options.has("hex")))) }
    } catch {
      return try NFCCommand.fail(error, nfc)
    }
    if !session.json {
      let count = tags.isEmpty ? "no tags" : tags.count == 1 ? "1 tag" : "\(tags.count) tags, one after another"
      session.note(
        "Reading NFC tags on a simulated device (seed \(session.seed); \(count)"
          + "\(continuous ? ", continuous" : ""); \(DiscoverCommand.pacingNote(session))).")
    }

    let scan = Scan(nfc: nfc, tags: tags, continuous: continuous)
    return scan.run()
  }

  /// The bytes of a tag file: raw NDEF, or hex text with `hex`; at most `NFCCommand.tagLimit` bytes.
  private static func readTag(_ path: String, hex: Bool) throws(NDEFCommandFailure) -> [UInt8] {
    let reader = NDEFCommand(inputLimit: hex ? ReaderCtl.maximumInputSize : NFCCommand.tagLimit)
    var bytes = try reader.readFile(path)
    if hex {
      do {
        bytes = try NDEFCommand.parseHex(bytes)
      } catch .data(let message) {
        throw .data("\(path): \(message)")
      }
      guard bytes.count <= NFCCommand.tagLimit else {
        throw .data("\(path) holds \(bytes.count) bytes of NDEF; a tag holds at most \(NFCCommand.tagLimit) bytes")
      }
    }
    return bytes
  }

  /// One run: the tags brought near on schedule, the session or the read loop, and what came of it.
  private final class Scan: Sendable {
    private struct Record {
      var messages: [NDEFMessage] = []
      var read: Set<String> = []
      var failures: [(tag: String, error: NFCReaderError)] = []
    }

    let nfc: NFCSimulation
    let tags: [SimulatedNFCTag]
    let continuous: Bool
    /// When the last tag has left (the start, without tags): from then on nothing more comes.
    let quietFrom: Duration
    private let record = Locked(Record())

    init(nfc: NFCSimulation, tags: [SimulatedNFCTag], continuous: Bool) {
      self.nfc = nfc
      self.tags = tags
      self.continuous = continuous
      var at = NFCScanCommand.lead
      var lastGone = Duration.zero
      for tag in tags {
        nfc.radio.add(tag)
        let hold = nfc.holdTime(forTagOf: tag.ndefBytes?.count ?? 0)
        nfc.session.clock.schedule(after: at) { [radio = nfc.radio] in radio.present(tag.name, for: hold) }
        lastGone = at + hold
        at += hold + NFCScanCommand.gap
      }
      quietFrom = nfc.session.now + lastGone
    }

    func run() -> Int32 {
      let console = nfc.session.console
      let loop = Outcome<NFCReadLoop>()
      nfc.system.addEventObserver { [self] event in
        let tag = nfc.tagInField ?? "a tag"
        switch event.kind {
        case .didDetectNDEFs(let messages):
          record.withLock { record in
            record.messages += messages
            record.read.insert(tag)
          }
        case .didFailToReadNDEF(let error):
          console.error("readerctl: \(tag): \(NFCNarration.failure(error))\n")
          record.withLock { $0.failures.append((tag, error)) }
        case .didInvalidate(let error)
        where error.code == .readerSessionInvalidationErrorSessionTimeout && nfc.session.now >= quietFrom:
          // Nothing more is coming: the read loop is stopped before it would begin another session.
          loop.value?.stop()
        default:
          break
        }
      }
      return continuous ? readContinuously(loop) : readOnce()
    }

    /// One session that ends at its first read.
    private func readOnce() -> Int32 {
      let watcher = SessionEndWatcher()
      let session = NFCNDEFReaderSession(delegate: watcher, invalidateAfterFirstRead: true, system: nfc.system)
      session.alertMessage = NFCScanCommand.alertMessage
      session.begin()
      let ended = withExtendedLifetime(watcher) { awaitEnd({ watcher.ended.isSet }, stop: session.invalidate) }
      guard ended, let error = watcher.ended.value else {
        return NFCCommand.fail(
          "reading failed",
          NFCReaderError(
            .readerSessionInvalidationErrorUserCanceled, "the session did not end", context: ["by": "app"]),
          nfc)
      }
      switch error.code {
      case .readerSessionInvalidationErrorFirstNDEFTagRead:
        return succeed()
      case .readerSessionInvalidationErrorSessionTimeout:
        if let first = record.withLock({ $0.failures.first }) {
          return NFCCommand.fail("no tag gave a message; \(first.tag)", first.error, nfc, raw: messagesField)
        }
        return NFCCommand.fail("no tag was read", error, nfc, raw: messagesField)
      default:
        return NFCCommand.fail(Interrupt.requested ? "interrupted" : "reading failed", error, nfc, raw: messagesField)
      }
    }

    /// The read loop, session after session, until the first time limit after the last tag.
    private func readContinuously(_ loopSlot: Outcome<NFCReadLoop>) -> Int32 {
      let finished = Outcome<NFCReadLoop.Outcome>()
      let loop = NFCReadLoop(
        system: nfc.system, continuous: true, alertMessage: NFCScanCommand.alertMessage, onMessages: { _ in },
        completion: { finished.set($0) })
      loopSlot.set(loop)
      loop.start()
      guard awaitEnd({ finished.isSet }, stop: loop.stop), let outcome = finished.value else {
        return NFCCommand.fail(
          "reading failed",
          NFCReaderError(
            .readerSessionInvalidationErrorUserCanceled, "the read loop did not end", context: ["by": "app"]),
          nfc)
      }
      let lastEnd = nfc.events.last { $0.name == "didInvalidateWithError" }?.error
      switch outcome {
      case .failed(let error):
        return NFCCommand.fail("reading failed", error, nfc, raw: messagesField)
      case .stopped where Interrupt.requested:
        return NFCCommand.fail(
          "interrupted",
          lastEnd ?? NFCReaderError(.readerSessionInvalidationErrorUserCanceled, "interrupted", context: ["by": "app"]),
          nfc, raw: messagesField)
      case .stopped, .finished:
        let (read, failures) = record.withLock { ($0.read, $0.failures) }
        if tags.isEmpty, let lastEnd {
          return NFCCommand.fail("no tag was read", lastEnd, nfc, raw: messagesField)
        }
        let unread = failures.filter { !read.contains($0.tag) }
        if let first = unread.first {
          let count = Set(unread.map(\.tag)).count
          return NFCCommand.fail(
            "\(count) of \(tags.count) tag\(tags.count == 1 ? "" : "s") gave no message; \(first.tag)", first.error,
            nfc,
            raw: messagesField)
        }
        return succeed(sessions: loop.sessionsBegun)
      }
    }

    /// Runs the world until `ended` holds: paced while tags come and go, unpaced while it waits for the
    /// time limit. After Ctrl-C, `stop` ends the reading and the world runs until it has ended.
    private func awaitEnd(_ ended: () -> Bool, stop: () -> Void) -> Bool {
      let limit = (nfc.sessionTimeout ?? .seconds(3600)) * 2
      if nfc.run(until: ended, limit: max(quietFrom - nfc.session.now, .zero))
        || nfc.run(until: ended, limit: limit, paced: false)
      {
        return true
      }
      stop()
      return nfc.run(until: ended, limit: .seconds(10), paced: false, interruptible: false)
    }

    private var messagesField: [(String, String)] {
      [("messages", NFCJSON.messages(record.withLock { $0.messages }))]
    }

    private func succeed(sessions: Int = 1) -> Int32 {
      let (count, tagCount) = record.withLock { ($0.messages.count, $0.read.count) }
      if !nfc.session.json {
        nfc.session.console.line(
          "Read \(count) message\(count == 1 ? "" : "s") from \(tagCount) tag\(tagCount == 1 ? "" : "s") in "
            + "\(SimulationSession.format(nfc.session.now)) of simulated time, in \(sessions) "
            + "session\(sessions == 1 ? "" : "s").")
      }
      return nfc.finish(.success(), raw: messagesField)
    }
  }
}
