import Foundation
import NFCKit
import ReaderCore
import ReaderKit

/// `readerctl nfc replay FILE`: a scan recorded with `nfc scan --pcsc --record FILE`, run again through
/// the same session code on a virtual clock. The recorded radio events arrive at their recorded times,
/// the recorded Ctrl-C (`stop`) stops the run at its time, and the output is what the recorded run
/// printed. Commands the sessions give that the recording does not hold are reported and make the
/// replay fail (status 1): the session code behaves differently from when the recording was made.
enum NFCReplayCommand {
  /// The largest recording read.
  static let limit = 64 * 1024 * 1024

  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try ArgumentList(arguments, flags: ["json"])
    let path = try options.positionals(named: ["FILE"])[0]
    let json = options.has("json")
    func fail(_ code: String, _ message: String, _ status: Int32) -> Int32 {
      console.error("readerctl: \(message)\n")
      if json {
        console.line(CommandOutcome.failure(code: code, message: message, status: status).json(at: .zero).rendered)
      }
      return status
    }
    guard let file = FileHandle(forReadingAtPath: path) else {
      return fail("noInput", "cannot read \(path)", ExitStatus.noInput)
    }
    let data = (try? file.read(upToCount: limit + 1)) ?? Data()
    try? file.close()
    guard data.count <= limit else {
      return fail("invalidInput", "\(path) is larger than 64 MiB", ExitStatus.dataError)
    }
    let records: [NFCRadioRecord]
    do {
      records = try NFCRadioRecord.parse(String(decoding: data, as: UTF8.self))
    } catch {
      return fail("invalidInput", "\(path) is not a recording: \(error)", ExitStatus.dataError)
    }
    let clock = VirtualClock()
    let radio = ReplayingNFCRadio(records: records, clock: clock)
    let command = radio.notes.first { $0.text.hasPrefix("readerctl nfc scan") }?.text
    guard let command else {
      return fail("invalidInput", "\(path) is not a recording of `readerctl nfc scan`", ExitStatus.dataError)
    }
    let system = NFCReaderSystem(radio: radio, scheduler: clock)
    let device = NFCDeviceRun(
      system: system, pace: .replay(clock), console: console, json: json,
      voice: .init(messages: { $0.map { NDEFJSON.render($0) }.joined(separator: " ") }, narratesReadFailures: false))
    // Without a recorded stop, the run ends a time limit after the recording does.
    let stop =
      radio.notes.first { $0.text == "stop" }?.time
      ?? radio.duration + (radio.policy.sessionTimeout ?? .seconds(60))
    let status = NFCDeviceScan.run(device, continuous: command.hasSuffix("--continuous"), stopAt: stop) {}
    let divergences =
      radio.divergences + (radio.commandsLeft > 0 ? ["\(radio.commandsLeft) recorded command(s) never given"] : [])
    guard divergences.isEmpty else {
      console.error("readerctl: the replay differs from the recording:\n" + divergences.map { "  \($0)\n" }.joined())
      return ExitStatus.failure
    }
    return status
  }
}
