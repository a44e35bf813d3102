import Foundation
import ReaderKit

/// `readerctl replay FILE`: runs a recording made with `--record FILE` again — the same command, with
/// the same arguments, through the same terminal — on a virtual clock fed the recorded events at their
/// recorded instants, so it prints what the recorded run printed, at once and without any hardware.
enum ReplayCommand {
  static let help = CommandHelp(
    command: "replay",
    overview: "Runs a recording of a --bluez command again, with the same output, without Bluetooth.",
    synopses: ["FILE"],
    discussion: [
      "FILE is what `--record FILE` wrote: a header with the command and its date, then the radio's and the "
        + "readers' commands and events with their times, one JSON object per line. The command runs again "
        + "through a terminal whose radio and reader link play the events back at their recorded instants, "
        + "on a virtual clock, and check that the terminal gives the recorded commands. The store the command "
        + "read is replayed as it was, and nothing is saved; an update reads its catalog again."
    ],
    arguments: [("FILE", "the recording")],
    exitStatuses: [
      (0, "the recorded command succeeded again"), (64, "usage"),
      (65, "the recording is malformed, or the replay departed from it (standard error says where)"),
      (66, "the recording cannot be read"), (1, "the recorded command's own failures, with its statuses"),
    ])

  /// The largest recording read.
  static let maximumSize = 256 * 1024 * 1024

  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try help.parse(arguments)
    let path = try options.positionals(named: ["FILE"])[0]
    let data: Data
    do {
      let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
      defer { try? handle.close() }
      data = try handle.read(upToCount: maximumSize + 1) ?? Data()
    } catch {
      console.error("readerctl: the recording \(path) cannot be read: \(error.localizedDescription)\n")
      return ExitStatus.noInput
    }
    guard data.count <= maximumSize else {
      console.error("readerctl: the recording \(path) is larger than \(maximumSize) bytes\n")
      return ExitStatus.dataError
    }
    let replay: Replay
    do throws(ReaderError) {
      let (header, records) = try TransportRecord.read(data)
      replay = Replay(header: header, records: records)
    } catch {
      console.error("readerctl: the recording \(path) is malformed: \(error.report)\n")
      return ExitStatus.dataError
    }
    let recorded = replay.header.arguments
    guard let command = recorded.first, recorded.contains("--bluez") else {
      console.error("readerctl: the recording \(path) is not of a --bluez command\n")
      return ExitStatus.dataError
    }
    let rest = Array(recorded.dropFirst())
    let status: Int32
    switch command {
    case "discover": status = try BlueZCommands.discover(rest, console: console, source: .replay(replay))
    case "connect": status = try BlueZCommands.connect(rest, console: console, source: .replay(replay))
    case "reconnect": status = try BlueZCommands.reconnect(rest, console: console, source: .replay(replay))
    case "update": status = try BlueZUpdateCommand.run(rest, console: console, source: .replay(replay))
    default:
      console.error("readerctl: the recording \(path) is of '\(command)', which cannot be replayed\n")
      return ExitStatus.dataError
    }
    let divergences = replay.session.withLock { $0 }?.divergences ?? []
    guard divergences.isEmpty else {
      console.error("readerctl: the replay departed from the recording: \(divergences[0])\n")
      return ExitStatus.dataError
    }
    return status
  }
}
