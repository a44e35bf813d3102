import Foundation
import NFCKit
import PCSCKit
import ReaderCore
import ReaderKit

/// `readerctl nfc readers`, `nfc scan --pcsc` and `nfc write --pcsc`: reader sessions on the PC/SC readers
/// pcscd drives, with the system's rules from its configuration file (`NFCSystemConfiguration`), never
/// from the command line: the time limit, what a second session gets, how long a tag may take.
enum NFCPCSCCommand {
  static let usage = """
    usage: readerctl nfc readers [--reader NAME] [--json]
           readerctl nfc scan --pcsc [--reader NAME] [--continuous] [--record FILE] [--json]
           readerctl nfc write --pcsc [--reader NAME] (--text TEXT [--lang CODE] | --uri URI | --mime TYPE FILE)...
                               [--json]
           readerctl nfc replay FILE [--json]

      Reader sessions on real NFC readers through pcscd (pcsc-lite), with Core NFC's rules: one session
      at a time on the machine, across processes; each ending at the system's time limit.

      readers  lists the PC/SC readers and whether a card is in each.
      scan     as the simulated scan, on the readers: prints every message read; without --continuous
               the first message read ends the session.
        --continuous     session after session (the read loop) until Ctrl-C
        --record FILE    writes every radio command and event, with its time, to FILE as JSON lines
      write    as the simulated write, on the first tag presented: connect, queryNDEFStatus, writeNDEF,
               readNDEF.
      replay   runs a recording made with --record through the same session code, on a virtual clock,
               printing what the recorded scan printed; a difference in what the sessions asked of the
               radio is an error.
      --reader NAME  only readers whose name contains NAME (the configuration's `reader` otherwise)
      --json         one JSON object per session event, then the outcome line, as the simulated commands

      The system's rules come from the first of $READERKIT_NFC_CONFIG, $XDG_CONFIG_HOME/readerkit/nfc.conf
      (~/.config/readerkit/nfc.conf) and /etc/readerkit/nfc.conf; see the README.

    exit status: as the simulated commands; 69 when pcscd is not running, libpcsclite is missing or no
    reader is connected; 65 for a configuration file or a recording that cannot be used

    """

  /// The host's PC/SC radio, ready: the configuration read, pcscd answering, a reader there.
  struct Opened {
    let radio: PCSCNFCRadio
    let scheduler: LiveScheduler<ContinuousClock>
    let readers: [PCSCReaderState]
    let configuration: NFCSystemConfiguration
  }

  /// Opens the host's PC/SC radio, or reports in one line why it cannot be used (and, with `json`, the
  /// outcome line) and returns the status: 69 without pcsc-lite, pcscd or a reader, 65 for a bad
  /// configuration file.
  static func open(reader: String?, console: Console, json: Bool) -> Result<Opened, Status> {
    func fail(_ code: String, _ message: String, _ status: Int32) -> Result<Opened, Status> {
      console.error("readerctl: \(message)\n")
      if json {
        console.line(CommandOutcome.failure(code: code, message: message, status: status).json(at: .zero).rendered)
      }
      return .failure(Status(value: status))
    }
    var configuration: NFCSystemConfiguration
    do {
      configuration = try NFCSystemConfiguration.load()
    } catch {
      return fail("invalidConfiguration", "the NFC system configuration cannot be used: \(error)", ExitStatus.dataError)
    }
    if let reader { configuration.reader = reader }
    let scheduler = LiveScheduler<ContinuousClock>(label: "readerctl.nfc.pcsc")
    guard let radio = PCSCNFCRadio(configuration: configuration, scheduler: scheduler) else {
      return fail(
        "pcscUnavailable",
        "PC/SC is not available: \(PCSCLibrary.fileName) cannot be loaded; install pcscd (Debian: apt-get install pcscd)",
        ExitStatus.unavailable)
    }
    switch radio.readers() {
    case .failure(let error) where error.code == .noService:
      return fail(
        "pcscdNotRunning",
        "pcscd is not running (\(error.code)); start it with `sudo systemctl start pcscd` or `sudo pcscd`",
        ExitStatus.unavailable)
    case .failure(let error):
      return fail("pcscdUnavailable", "pcscd does not answer: \(error)", ExitStatus.unavailable)
    case .success(let readers) where readers.isEmpty:
      if let wanted = configuration.reader {
        return fail("noReader", "no PC/SC reader's name contains \"\(wanted)\"", ExitStatus.unavailable)
      }
      return fail(
        "noReader", "no PC/SC reader is connected: pcscd runs but has no reader; plug one in",
        ExitStatus.unavailable)
    case .success(let readers):
      return .success(Opened(radio: radio, scheduler: scheduler, readers: readers, configuration: configuration))
    }
  }

  /// An exit status, as an error.
  struct Status: Error {
    var value: Int32
  }

  // MARK: readers

  static func readers(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try ArgumentList(arguments, flags: ["json"], options: ["reader"])
    _ = try options.positionals(named: [])
    let json = options.has("json")
    let opened: Opened
    switch open(reader: options.string("reader"), console: console, json: json) {
    case .success(let value): opened = value
    case .failure(let status): return status.value
    }
    let rows: [(name: String, card: String?, atr: String)] = opened.readers.map { reader in
      let card = reader.hasCard ? TagFamily(atr: reader.atr).description : nil
      return (reader.name, card, reader.atr.map { byte in String(format: "%02X", byte) }.joined())
    }
    if json {
      let readers = JSONValue.array(
        rows.map { row in
          .object([
            ("name", .string(row.name)), ("card", .bool(row.card != nil)),
            ("family", row.card.map(JSONValue.string) ?? .null), ("atr", row.card == nil ? .null : .string(row.atr)),
          ])
        })
      console.line(CommandOutcome.success([("readers", readers)]).json(at: .zero).rendered)
    } else {
      let width = rows.map(\.name.count).max() ?? 0
      for row in rows {
        let padding = String(repeating: " ", count: width - row.name.count)
        console.line("\(row.name)\(padding)  \(row.card.map { "card present (\($0), ATR \(row.atr))" } ?? "no card")")
      }
    }
    return ExitStatus.success
  }

  // MARK: scan --pcsc

  static func scan(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try ArgumentList(
      arguments, flags: ["pcsc", "continuous", "json"], options: ["reader", "record"])
    _ = try options.positionals(named: [])
    let json = options.has("json")
    let continuous = options.has("continuous")
    let opened: Opened
    switch open(reader: options.string("reader"), console: console, json: json) {
    case .success(let value): opened = value
    case .failure(let status): return status.value
    }
    let origin = opened.scheduler.elapsed
    var radio: any NFCRadio = opened.radio
    var recorder: RecordingNFCRadio?
    if let path = options.string("record") {
      guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path)
      else {
        console.error("readerctl: cannot write the recording \(path)\n")
        return ExitStatus.ioError
      }
      let recording = RecordingNFCRadio(wrapping: opened.radio, scheduler: opened.scheduler, origin: origin) { line in
        try? file.write(contentsOf: Data((line + "\n").utf8))
      }
      recording.note("readerctl nfc scan" + (continuous ? " --continuous" : ""))
      recorder = recording
      radio = recording
    }
    let system = NFCReaderSystem(radio: radio, scheduler: opened.scheduler)
    let device = NFCDeviceRun(
      system: system, pace: .live(opened.scheduler), console: console, json: json,
      voice: .init(messages: { $0.map { NDEFJSON.render($0) }.joined(separator: " ") }, narratesReadFailures: false),
      origin: origin)
    if !json {
      console.line(
        "Reading NFC tags on \(opened.readers.map(\.name).joined(separator: ", ")) through pcscd "
          + "(\(limitNote(opened.configuration))\(continuous ? "; Ctrl-C to stop" : "")).")
    }
    Interrupt.install()
    return NFCDeviceScan.run(device, continuous: continuous, stopAt: nil) { [recorder] in recorder?.note("stop") }
  }

  /// `the system's time limit: 60 s per session, from /etc/readerkit/nfc.conf`.
  static func limitNote(_ configuration: NFCSystemConfiguration) -> String {
    let limit = configuration.sessionTimeout.map { "\($0.formattedSeconds) per session" } ?? "none"
    return "the system's time limit: \(limit), from \(configuration.source ?? "the defaults")"
  }
}
