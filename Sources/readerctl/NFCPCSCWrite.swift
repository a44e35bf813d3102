import NFCKit
import ReaderCore
import ReaderKit
import Synchronization

/// `readerctl nfc write --pcsc`: a message built as `readerctl ndef encode` builds it, written to the
/// first tag presented to a PC/SC reader through a read-write session and read back, with the simulated
/// write's narration, output and statuses.
enum NFCPCSCWrite {
  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    // The record flags keep their order, as `ndef encode` takes them; the rest are this command's options.
    var specs: [NDEFCommand.RecordSpec] = []
    var rest: [String] = []
    var index = 0
    while index < arguments.count {
      if arguments[index] == "--" {
        rest += arguments[index...]
        break
      }
      do throws(NDEFCommandFailure) {
        if try NDEFCommand.takeRecordFlag(arguments, at: &index, into: &specs) { continue }
      } catch {
        guard case .usage(let message?) = error else { throw UsageError("bad record options") }
        throw UsageError(message)
      }
      rest.append(arguments[index])
      index += 1
    }
    let options = try ArgumentList(rest, flags: ["pcsc", "json"], options: ["reader"])
    _ = try options.positionals(named: [])
    guard !specs.isEmpty else { throw UsageError("nfc write needs at least one --text, --uri or --mime") }
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
      if case .usage(let text) = error { throw UsageError(text ?? "bad record options") }
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
    let writer = Writer(message: message, device: device)
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

  private static func finish(_ writer: Writer, _ device: NFCDeviceRun) -> Int32 {
    let result = writer.result
    var fields: [(String, JSONValue)] = []
    if let status = result.status {
      fields += [("status", .string(status.description)), ("capacity", .int(result.capacity))]
    }
    fields.append(("length", .int(writer.message.length)))
    let raw = [("message", result.readBack.map { NDEFJSON.render($0) } ?? "null")]
    if let failure = result.failure {
      return device.fail("writing the tag failed", failure, fields: fields, raw: raw)
    }
    guard let readBack = result.readBack else {
      let error =
        writer.ended.value.flatMap { $0.code == .readerSessionInvalidationErrorUserCanceled ? nil : $0 }
        ?? NFCReaderError(.readerSessionInvalidationErrorUserCanceled, "interrupted", context: ["by": "app"])
      return device.fail(
        Interrupt.requested ? "interrupted" : "no tag was written", error, fields: fields, raw: raw)
    }
    guard readBack == writer.message else {
      device.console.error("readerctl: the tag reads back another message: \(NDEFJSON.render(readBack))\n")
      var outcome = CommandOutcome.failure(
        code: "readBackMismatch", message: "the tag reads back another message", status: ExitStatus.failure)
      outcome.fields = fields
      return device.finish(outcome, raw: raw)
    }
    if !device.json { device.console.line(NDEFJSON.render(readBack)) }
    return device.finish(.success(fields), raw: raw)
  }

  /// The app's side of the read-write session: connect, status, write, read back, end.
  private final class Writer: NFCNDEFReaderSessionTagDelegate {
    struct Result {
      var status: NFCNDEFStatus?
      var capacity = 0
      var readBack: NDEFMessage?
      var failure: NFCReaderError?
    }

    let message: NDEFMessage
    let device: NFCDeviceRun
    let ended = Outcome<NFCReaderError>()
    private let state = Mutex(Result())

    init(message: NDEFMessage, device: NFCDeviceRun) {
      self.message = message
      self.device = device
    }

    var result: Result { state.withLock { $0 } }

    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
      ended.set(
        error as? NFCReaderError
          ?? NFCReaderError(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly, "\(error)"))
    }

    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
      guard let tag = tags.first else { return }
      session.connect(to: tag) { [self] error in
        if let error { return fail(session, "connect", error) }
        tag.queryNDEFStatus { [self] status, capacity, error in
          if let error { return fail(session, "queryNDEFStatus", error) }
          state.withLock {
            $0.status = status
            $0.capacity = capacity
          }
          device.say("Connected; queryNDEFStatus: \(status), capacity \(capacity) bytes.")
          tag.writeNDEF(message) { [self] error in
            if let error { return fail(session, "writeNDEF", error) }
            device.say("writeNDEF: \(message.length) bytes written.")
            tag.readNDEF { [self] readBack, error in
              guard let readBack else {
                return fail(
                  session, "readNDEF", error ?? NFCReaderError(.readerTransceiveErrorTagResponseError, "no message"))
              }
              state.withLock { $0.readBack = readBack }
              device.say("readNDEF: \(NFCNarration.summary(readBack)).")
              session.alertMessage = "Tag written."
              session.invalidate()
            }
          }
        }
      }
    }

    private func fail(_ session: NFCNDEFReaderSession, _ operation: String, _ error: NFCReaderError) {
      state.withLock { $0.failure = error }
      device.say("\(operation) failed: \(error.code) (\(error.errorCode)).")
      session.invalidate(errorMessage: "The tag could not be written.")
    }
  }
}
