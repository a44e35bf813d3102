import NFCKit
import ReaderKit
import ReaderSimulator

/// `readerctl nfc scan` and `readerctl nfc write`: NFC reader sessions on a simulated NFC device.
enum NFCCommand {
  static let help = CommandHelp(
    command: "nfc",
    overview: "Reads and writes NDEF tags through reader sessions on a simulated NFC device.",
    synopses: ["scan [--tags FILE...] [options]", "write RECORD... [options]"],
    discussion: [
      "Reader sessions follow Core NFC's rules: one session at a time, each ending at the system's time limit "
        + "(\(timeLimit) simulated seconds from begin()) unless something ends it first."
    ],
    subcommands: [
      ("scan", "read tag files through reader sessions and print every message read"),
      ("write", "write a message built as `readerctl ndef encode` builds it to a blank tag, and read it back"),
    ],
    notes: ["Run 'readerctl nfc scan --help' or 'readerctl nfc write --help' for their options."],
    exitStatuses: exitStatuses)

  static let scanHelp = CommandHelp(
    command: "nfc scan",
    overview: "Reads NDEF tag files through reader sessions on a simulated NFC device.",
    synopses: ["[--tags FILE...] [--continuous] [--hex] [--seed N] [--speed X] [--json]"],
    discussion: [
      "Begins a session, brings the tags to the device one after another (each held long enough to be read, a "
        + "second apart) and prints every message read, decoded as `ndef decode` prints it. A tag whose message "
        + "is malformed is reported on standard error with the byte offset of the problem, and reading goes on. "
        + "Each session ends at the system's time limit (\(timeLimit) simulated seconds) unless something ends "
        + "it first."
    ],
    arguments: [
      (
        "FILE",
        "a tag: the raw bytes of an NDEF message, as `readerctl ndef encode` writes them (at most 64 KiB); "
          + "an empty file is a blank tag"
      )
    ],
    options: [
      .init(
        "tags", [], "the tags, in the order they are presented: every argument that is not an option",
        shown: "--tags FILE..."),
      .init(
        "continuous", [],
        "read every tag, session after session, through the read loop (NFCReadLoop); reading stops at the first "
          + "time limit after the last tag. Without it the session ends at the first message read "
          + "(invalidateAfterFirstRead)."),
      .init("hex", [], "the files hold hex text (whitespace allowed between bytes)"),
    ] + commonOptions(outcome: "\"messages\": […]"),
    exitStatuses: exitStatuses)

  static let writeHelp = CommandHelp(
    command: "nfc write",
    overview: "Writes a message to a blank simulated tag through a read-write session, and reads it back.",
    synopses: ["RECORD... [--capacity N] [--read-only] [--seed N] [--speed X] [--json]"],
    discussion: [
      "Builds the message exactly as `readerctl ndef encode` does (RECORD is --text TEXT [--lang CODE], --uri "
        + "URI, --mime TYPE FILE, or --poster URI and its options), writes it to a blank simulated tag "
        + "(connect, queryNDEFStatus, writeNDEF), reads it back (readNDEF) and prints it decoded. The message is "
        + "at most 64 KiB."
    ],
    options: RecordOptions.options + [
      .init(
        "capacity", ["N"],
        "the tag's capacity in bytes (default \(SimulatedNFCTag.defaultCapacity), an NTAG215's; 0-65536)"),
      .init("read-only", [], "the tag cannot be written"),
    ] + commonOptions(outcome: "\"status\", \"capacity\", \"length\", \"message\""),
    exitStatuses: exitStatuses)

  /// The options both subcommands take; `outcome` names the outcome line's own fields.
  private static func commonOptions(outcome: String) -> [CommandHelp.Option] {
    [
      .init("seed", ["N"], "seed of the simulated device (default 1); the same seed prints the same run"),
      .init(
        "speed", ["X"],
        "simulated seconds per real second while tags are near (default: 4 on a terminal, 0 = as fast as "
          + "possible otherwise); waiting for the time limit is always skipped"),
      .init(
        "json", [],
        "one JSON object per session event instead of the narration, under NFCReaderEvent's names; the last "
          + "line is the outcome, {\"event\": \"result\", \"exitStatus\": …, \"error\": …, \(outcome)}"),
    ]
  }

  private static let exitStatuses: [(Int32, String)] = [
    (0, "ok"), (64, "usage"),
    (
      65,
      "malformed data: scan read no message but a tag's was malformed or blank, or with --continuous any tag "
        + "gave no message"
    ),
    (66, "a file not found"),
    (
      74,
      "the tag cannot be written (read-only, or too small for the message), or the "
        + "output cannot be written"
    ),
    (75, "no tag was read within the time limit (scan without tags)"), (130, "interrupted"), (1, "other failures"),
  ]

  /// The simulated system's time limit, in seconds, as the usage states it.
  private static let timeLimit = JSONValue.number(SimulatedNFCRadio.documentedSessionTimeout.inSeconds, decimals: 3)
    .rendered

  /// The largest NDEF message a tag file or `write` may hold: more than NFC Forum tags hold, and little
  /// enough that reading or writing it takes the simulated radio seconds, well within a session.
  static let tagLimit = 64 * 1024

  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    guard let subcommand = arguments.first else { throw UsageError("nfc needs a subcommand: scan or write") }
    let rest = Array(arguments.dropFirst())
    switch subcommand {
    case "scan": return try NFCScanCommand.run(rest, console: console)
    case "write": return try NFCWriteCommand.run(rest, console: console)
    case "help":
      console.write(help.text)
      return ExitStatus.success
    default: throw UsageError("unknown subcommand '\(subcommand)' for nfc")
    }
  }

  /// A simulation session for an NFC command: no Bluetooth readers, paced on a terminal.
  static func session(_ options: ArgumentList, console: Console) throws(UsageError) -> SimulationSession {
    let json = options.has("json")
    return SimulationSession(
      seed: try options.integer("seed", default: 1, in: 0...UInt64.max), readers: 0, console: console,
      speed: try options.number("speed", default: console.isTerminal && !json ? 4 : 0, in: 0...1_000_000), json: json)
  }

  /// Reports a failure to read the command's input (a file, a record flag's value) and ends the command:
  /// usage errors go back to the caller, which prints the usage; the others are one line on standard
  /// error and, with `--json`, the outcome line.
  static func fail(_ failure: NDEFCommandFailure, _ nfc: NFCSimulation) throws(UsageError) -> Int32 {
    switch failure {
    case .usage(let message): throw UsageError(message)
    case .invalidArgument:
      nfc.session.console.error(failure.report)
      return failure.status
    case .data(let message), .noInput(let message), .output(let message):
      nfc.session.console.error(failure.report)
      let code = failure.status == ExitStatus.noInput ? "noInput" : "invalidInput"
      return nfc.finish(.failure(code: code, message: message, status: failure.status))
    }
  }

  /// Reports the NFC error that ended the command, after `what`, and ends the command with it and
  /// what it produced (`fields`, and `raw` JSON text).
  static func fail(
    _ what: String, _ error: NFCReaderError, _ nfc: NFCSimulation, fields: [(String, JSONValue)] = [],
    raw: [(String, String)] = []
  ) -> Int32 {
    if Interrupt.requested { nfc.session.screen.lineAfterInterrupt() }
    nfc.session.console.error("readerctl: \(what): \(error)\n")
    var outcome = CommandOutcome.failure(error)
    outcome.fields = fields
    return nfc.finish(outcome, raw: raw)
  }
}
