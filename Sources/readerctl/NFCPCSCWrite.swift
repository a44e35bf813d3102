import NFCKit
import ReaderCore
import ReaderKit

/// `readerctl nfc write --pcsc`: a message built as `readerctl ndef encode` builds it, written to the
/// first tag presented to a PC/SC reader through a read-write session and read back, with the simulated
/// write's narration, output and statuses.
enum NFCPCSCWrite {
  static let help = CommandHelp(
    command: "nfc write",
    overview: "Writes a message to the first tag presented to a PC/SC reader, and reads it back.",
    synopses: ["--pcsc [--reader NAME] RECORD... [--json]"],
    discussion: [
      "Builds the message exactly as `readerctl ndef encode` does (RECORD is --text TEXT [--lang CODE], --uri "
        + "URI, --mime TYPE FILE, or --poster URI and its options), writes it to the first tag presented "
        + "(connect, queryNDEFStatus, writeNDEF) and reads it back (readNDEF)."
    ],
    options: RecordOptions.options + [
      .init("pcsc", [], "use a real reader through pcscd"),
      .init("reader", ["NAME"], "the PC/SC reader to use (default: every reader)"),
      .init("json", [], "one JSON object per session event; the last line is the outcome"),
    ])

  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try help.parse(arguments)
    _ = try options.positionals(named: [])
    let specs = try RecordOptions.specs(options)
    guard !specs.isEmpty else { throw UsageError("nfc write needs at least one --text, --uri, --mime or --poster") }
    let json = options.has("json")

    let message: NDEFMessage
    do throws(NDEFCommandFailure) {
      let builder = NDEFCommand(inputLimit: NFCCommand.tagLimit)
      let bytes = try builder.message(specs)
      try builder.refuseWhatDecodeWould(bytes, hexOutput: false)
      do {
        message = try NDEFDecoder().decode(bytes)
      } catch {
        throw .data(NDEFCommand.malformed(error))
      }
    } catch {
      if case .usage(let text) = error { throw UsageError(text) }
      console.error(error.report)
      return error.status
    }

    let opened: NFCPCSCCommand.Opened
    switch NFCPCSCCommand.open(reader: options.string("reader"), console: console, json: json) {
    case .success(let value): opened = value
    case .failure(let status): return status.value
    }
    let system = NFCReaderSystem(radio: opened.radio, scheduler: opened.scheduler)
    let device = NFCDeviceRun(
      system: system, pace: .live(opened.scheduler), console: console, json: json,
      voice: .init(messages: NFCNarration.describe))
    if !json {
      console.line(
        "Writing a \(message.length)-byte NDEF message to the first tag presented to "
          + "\(opened.readers.map(\.name).joined(separator: ", ")) (\(NFCPCSCCommand.limitNote(opened.configuration)))."
      )
    }
    Interrupt.install()
    let writer = NDEFTagWriter(message: message) { [device] in device.say($0) }
    let session = NFCNDEFReaderSession(delegate: writer, invalidateAfterFirstRead: false, system: system)
    session.alertMessage = NFCWriteCommand.alertMessage
    session.begin()
    let limit = (device.sessionTimeout ?? .seconds(3600)) + .seconds(1)
    withExtendedLifetime(writer) {
      if !device.run(until: { writer.ended.isSet }, for: limit) {
        session.invalidate()
        device.run(until: { writer.ended.isSet }, for: .seconds(10), interruptible: false)
      }
    }
    return finish(writer, device)
  }

  private static func finish(_ writer: NDEFTagWriter, _ device: NFCDeviceRun) -> Int32 {
    let (fields, raw) = (writer.fields, writer.raw)
    switch writer.verdict {
    case .failed(let summary, let error):
      return device.fail(summary, error, fields: fields, raw: raw)
    case .readBackMismatch(let readBack):
      device.console.error("readerctl: the tag reads back another message: \(NDEFJSON.render(readBack))\n")
      var outcome = CommandOutcome.failure(
        code: "readBackMismatch", message: "the tag reads back another message", status: ExitStatus.failure)
      outcome.fields = fields
      return device.finish(outcome, raw: raw)
    case .written(let readBack):
      if !device.json { device.console.line(NDEFJSON.render(readBack)) }
      return device.finish(.success(fields), raw: raw)
    }
  }
}
