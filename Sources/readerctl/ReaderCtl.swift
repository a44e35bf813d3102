/// `readerctl`: the ReaderKit command-line tool. Dispatches to a subcommand and returns the exit
/// status; usage errors print the subcommand's usage on standard error and exit 64.
enum ReaderCtl {
  /// The version `readerctl --version` prints: ReaderKit's, which this tool ships with.
  static let version = "0.1.0"

  static let usage = """
    usage: readerctl <command> [options]
           readerctl --version

    commands:
      demo       a narrated run of the reader lifecycle on the built-in simulator
      discover   scan the simulated world for readers (--proximity for the nearest Chipper 2X)
      connect    connect a simulated reader to a location and save it for the next launch
      reconnect  reconnect to the saved reader, as an app does at launch
      update     check a simulated reader against an update manifest, and install what applies
      ndef       decode and encode NFC Forum NDEF messages
      nfc        read and write NDEF tags through reader sessions on a simulated NFC device
      help       show this text, or `readerctl help <command>` for one command

    Run `readerctl <command> --help` for a command's options. `--` ends a command's options: what
    follows is an argument even if it starts with `-` (`readerctl ndef decode -- -file.ndef`).

    """

  static func main(_ arguments: [String], console: Console) -> Int32 {
    guard let command = arguments.first else {
      console.error(usage)
      return ExitStatus.usage
    }
    if command == "--version" || command == "-V" {
      console.line("readerctl \(version)")
      return ExitStatus.success
    }
    let rest = Array(arguments.dropFirst())
    let options = rest.prefix { $0 != "--" }
    if ["--help", "-h"].contains(where: options.contains), let text = usage(of: command) {
      console.write(text)
      return ExitStatus.success
    }
    do throws(UsageError) {
      switch command {
      case "demo": return try DemoCommand.run(rest, console: console)
      case "discover" where options.contains("--bluez"): return try BlueZDiscoverCommand.run(rest, console: console)
      case "discover": return try DiscoverCommand.run(rest, console: console)
      case "connect": return try LinkCommands.connect(rest, console: console)
      case "reconnect": return try LinkCommands.reconnect(rest, console: console)
      case "update": return try UpdateCommand.run(rest, console: console)
      case "ndef":
        return runNDEFCommand(
          rest, inputLimit: maximumInputSize, stdin: { console.readInput(limit: maximumInputSize) },
          stdout: console.write, stdoutBytes: { console.write(bytes: $0) }, stderr: console.error,
          stdoutIsTerminal: console.isTerminal)
      case "nfc": return try NFCCommand.run(rest, console: console)
      case "help", "--help", "-h":
        guard let topic = rest.first else {
          console.write(usage)
          return ExitStatus.success
        }
        guard let text = self.usage(of: topic) else { throw UsageError("no command '\(topic)'") }
        console.write(text)
        return ExitStatus.success
      default:
        throw UsageError("unknown command '\(command)'")
      }
    } catch {
      console.error("readerctl: \(error.message)\n\n" + (usage(of: command) ?? usage))
      return ExitStatus.usage
    }
  }

  /// The largest input `ndef decode -` reads from standard input (an NDEF message is at most a few
  /// kilobytes on a tag; this leaves room for files built by tools).
  static let maximumInputSize = 16 * 1024 * 1024

  private static func usage(of command: String) -> String? {
    switch command {
    case "demo": DemoCommand.usage
    case "discover": DiscoverCommand.usage
    case "connect": LinkCommands.connectUsage
    case "reconnect": LinkCommands.reconnectUsage
    case "update": UpdateCommand.usage
    case "ndef": ndefUsage
    case "nfc": NFCCommand.usage
    case "help": usage
    default: nil
    }
  }
}
