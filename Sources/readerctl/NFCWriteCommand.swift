import NFCKit
import ReaderCore
import ReaderKit
import ReaderSimulator

/// `readerctl nfc write`: a message built as `readerctl ndef encode` builds it, written to a blank
/// simulated tag through a read-write session and read back.
///
/// The app's side is what Core NFC's guidance describes: connect to the tag, ask its NDEF status, write,
/// read back, and end the session — with `invalidate(errorMessage:)` when something failed, so the
/// sheet says what. Whether the tag takes the message (its capacity, whether it is writable) is the
/// tag's answer (`ndefReaderSessionErrorTagSizeTooSmall`, `ndefReaderSessionErrorTagNotWritable`), not
/// something the command decides.
enum NFCWriteCommand {
  static let alertMessage = "Hold the tag near the reader to write it."

  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try NFCCommand.writeHelp.parse(arguments)
    _ = try options.positionals(named: [])
    let specs = try RecordOptions.specs(options)
    guard !specs.isEmpty else { throw UsageError("nfc write needs at least one --text, --uri, --mime or --poster") }
    let capacity = try options.integer(
      "capacity", default: SimulatedNFCTag.defaultCapacity, in: 0...NFCCommand.tagLimit)
    let readOnly = options.has("read-only")
    let session = try NFCCommand.session(options, console: console)
    let nfc = NFCSimulation(session: session, voice: .init(messages: NFCNarration.describe))
    Interrupt.install()

    let message: NDEFMessage
    do throws(NDEFCommandFailure) {
      let builder = NDEFCommand(inputLimit: NFCCommand.tagLimit)
      let bytes = try builder.message(specs)
      try builder.refuseWhatDecodeWould(bytes, hexOutput: false)
      message = try decoded(bytes)
    } catch {
      return try NFCCommand.fail(error, nfc)
    }
    if !session.json {
      session.note(
        "Writing a \(message.length)-byte NDEF message to a simulated tag (capacity \(capacity) bytes, "
          + "\(readOnly ? "read-only" : "writable"); seed \(session.seed); \(DiscoverCommand.pacingNote(session))).")
    }

    var tag = SimulatedNFCTag.blank(name: readOnly ? "read-only-tag" : "blank-tag", capacity: capacity)
    tag.isWritable = !readOnly
    nfc.radio.add(tag)
    let writer = NDEFTagWriter(message: message) { [nfc] in nfc.say($0) }
    let readerSession = NFCNDEFReaderSession(delegate: writer, invalidateAfterFirstRead: false, system: nfc.system)
    readerSession.alertMessage = alertMessage
    readerSession.begin()
    session.clock.schedule(after: .milliseconds(500)) { [radio = nfc.radio, name = tag.name] in radio.present(name) }

    let limit = (nfc.sessionTimeout ?? .seconds(3600)) + .seconds(1)
    withExtendedLifetime(writer) {
      if !nfc.run(until: { writer.ended.isSet }, limit: limit) {
        readerSession.invalidate()
        nfc.run(until: { writer.ended.isSet }, limit: .seconds(10), paced: false, interruptible: false)
      }
    }
    return finish(writer, nfc)
  }

  /// The message in `bytes` (which `refuseWhatDecodeWould` has let through).
  private static func decoded(_ bytes: [UInt8]) throws(NDEFCommandFailure) -> NDEFMessage {
    do {
      return try NDEFDecoder().decode(bytes)
    } catch {
      throw .data(NDEFCommand.malformed(error))
    }
  }

  private static func finish(_ writer: NDEFTagWriter, _ nfc: NFCSimulation) -> Int32 {
    let (fields, raw) = (writer.fields, writer.raw)
    switch writer.verdict {
    case .failed(let summary, let error):
      return NFCCommand.fail(summary, error, nfc, fields: fields, raw: raw)
    case .readBackMismatch(let readBack):
      nfc.session.console.error("readerctl: the tag reads back another message: \(NDEFJSON.render(readBack))\n")
      var outcome = CommandOutcome.failure(
        code: "readBackMismatch", message: "the tag reads back another message", status: ExitStatus.failure)
      outcome.fields = fields
      return nfc.finish(outcome, raw: raw)
    case .written(let readBack):
      if !nfc.session.json { nfc.session.console.line(NDEFJSON.render(readBack)) }
      return nfc.finish(.success(fields), raw: raw)
    }
  }
}
