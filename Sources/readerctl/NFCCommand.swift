import NFCKit
import ReaderKit
import ReaderSimulator

/// `readerctl nfc scan` and `readerctl nfc write`: NFC reader sessions on a simulated NFC device.
enum NFCCommand {
  static let usage = """
    usage: readerctl nfc scan [--tags FILE...] [--continuous] [--hex] [--seed N] [--speed X] [--json]
           readerctl nfc write (--text TEXT [--lang CODE] | --uri URI | --mime TYPE FILE)... [--capacity N]
                               [--read-only] [--seed N] [--speed X] [--json]
           readerctl nfc readers | scan --pcsc | write --pcsc | replay FILE   (real readers: `readerctl nfc help pcsc`)

      Reader sessions on a simulated NFC device with Core NFC's rules: one session at a time, each
      ending at the system's time limit (\(timeLimit) simulated seconds from begin()) unless something
      ends it first.

      scan   begins a session, brings the tags to the device one after another (each held long enough to
             be read, a second apart) and prints every message read, decoded as `ndef decode` prints it.
             Each FILE holds the raw bytes of an NDEF message, as `readerctl ndef encode` writes them; an
             empty file is a blank tag. A tag whose message is malformed is reported on standard error
             with the byte offset of the problem, and reading goes on.
        --tags FILE...  the tags, in the order they are presented: every argument that is not an option
        --continuous    read every tag, session after session, through the read loop (NFCReadLoop): a
                        session that reaches the time limit is followed by a new one, and reading stops at
                        the first time limit after the last tag. Without it the session ends at the first
                        message read (invalidateAfterFirstRead).
        --hex           the files hold hex text (whitespace allowed between bytes)
      write  builds a message exactly as `readerctl ndef encode` does (one record per --text, --uri or
             --mime, in order), writes it to a blank simulated tag through a read-write session
             (connect, queryNDEFStatus, writeNDEF), reads it back (readNDEF) and prints it decoded.
        --capacity N    the tag's capacity in bytes (default \(SimulatedNFCTag.defaultCapacity), an NTAG215's; 0-65536)
        --read-only     the tag cannot be written
      --seed N   seed of the simulated device (default 1); the same seed prints the same run
      --speed X  simulated seconds per real second while tags are near (default: 4 on a terminal, 0 = as
                 fast as possible otherwise); waiting for the time limit is always skipped
      --json     one JSON object per session event instead of the narration, under NFCReaderEvent's names
                 (didQueue, didBecomeActive, didDetectNDEFs, didDetectTags, didFailToReadNDEF,
                 didInvalidateWithError); the last line is the outcome, {"event": "result", "exitStatus": …,
                 "error": …, "messages": […]} (write: "status", "capacity", "length", "message")

      A tag file, and a message to write, is at most 64 KiB (65536 bytes).

    exit status: 0 ok; 64 usage; 65 malformed data: scan read no message but a tag's was malformed or
    blank, or with --continuous any tag gave no message; 66 a file not found; 74 the tag cannot be
    written (read-only, or too small for the message); 75 no tag was read within the time limit (scan
    without tags); 130 interrupted; 1 other failures

    """

  /// The simulated system's time limit, in seconds, as the usage states it.
  private static let timeLimit = JSONValue.number(SimulatedNFCRadio.documentedSessionTimeout.inSeconds, decimals: 3)
    .rendered

  /// The largest NDEF message a tag file or `write` may hold: more than NFC Forum tags hold, and little
  /// enough that reading or writing it takes the simulated radio seconds, well within a session.
  static let tagLimit = 64 * 1024

  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    guard let subcommand = arguments.first else {
      throw UsageError("nfc needs a subcommand: scan, write, readers or replay")
    }
    let rest = Array(arguments.dropFirst())
    switch subcommand {
    case "scan" where rest.contains("--pcsc"): return try NFCPCSCCommand.scan(rest, console: console)
    case "write" where rest.contains("--pcsc"): return try NFCPCSCWrite.run(rest, console: console)
    case "scan": return try NFCScanCommand.run(rest, console: console)
    case "write": return try NFCWriteCommand.run(rest, console: console)
    case "readers": return try NFCPCSCCommand.readers(rest, console: console)
    case "replay": return try NFCReplayCommand.run(rest, console: console)
    case "help":
      console.write(rest.first == "pcsc" ? NFCPCSCCommand.usage : usage)
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
    case .usage(let message): throw UsageError(message ?? "bad record options")
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
