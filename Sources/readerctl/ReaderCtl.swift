import ReaderKit

/// `readerctl`: the ReaderKit command-line tool. Dispatches to a subcommand and returns the exit
/// status. `--help` (`-h`) and `--version` (`-V`) work after any command; a usage error prints the
/// error and one line pointing to the command's help, and exits 64.
enum ReaderCtl {
  /// The version `readerctl --version` prints: ReaderKit's, which this tool ships with.
  static let version = UpdatePolicy.readerKitVersion.description

  static let help = CommandHelp(
    command: "",
    overview: "The ReaderKit command-line tool: reader lifecycles and NFC reader sessions on the built-in "
      + "simulator, NDEF messages, and software update manifests.",
    synopses: ["<command> [options]", "--version"],
    subcommands: [
      ("demo", "a narrated run of the reader lifecycle on the built-in simulator"),
      ("discover", "scan the simulated world for readers (--proximity for the nearest Chipper 2X)"),
      ("connect", "connect a simulated reader to a location and save it for the next launch"),
      ("reconnect", "reconnect to the saved reader, as an app does at launch"),
      ("update", "check a simulated reader against an update manifest, and install what applies"),
      ("replay", "run a recording of a --bluez command again, with the same output"),
      ("ndef", "decode and encode NFC Forum NDEF messages"),
      ("nfc", "read and write NDEF tags through reader sessions on a simulated NFC device"),
      ("help", "show this text, or `readerctl help <command>` for one command"),
    ],
    notes: [
      "Run 'readerctl <command> --help' for a command's options. `--` ends a command's options: what follows "
        + "is an argument even if it starts with - (readerctl ndef decode -- -file.ndef).",
      "discover, connect, reconnect and update take --bluez for real Bluetooth LE readers through BlueZ on Linux "
        + "(readerctl <command> --bluez --help).",
    ])

  static func main(_ arguments: [String], console: Console) -> Int32 {
    let options = arguments.prefix { $0 != "--" }
    let topic = helpTopic(arguments)
    if options.contains("--version") || options.contains("-V") {
      console.line("readerctl \(version)")
      return ExitStatus.success
    }
    if options.contains("--help") || options.contains("-h") {
      console.write(topic.text)
      return ExitStatus.success
    }
    guard let command = arguments.first else {
      console.error("readerctl: no command given\n\(help.seeHelp)\n")
      return ExitStatus.usage
    }
    let rest = Array(arguments.dropFirst())
    do throws(UsageError) {
      switch command {
      case "demo": return try DemoCommand.run(rest, console: console)
      case "discover" where options.contains("--bluez"):
        return try BlueZCommands.discover(rest, console: console, source: .live(arguments: arguments))
      case "connect" where options.contains("--bluez"):
        return try BlueZCommands.connect(rest, console: console, source: .live(arguments: arguments))
      case "reconnect" where options.contains("--bluez"):
        return try BlueZCommands.reconnect(rest, console: console, source: .live(arguments: arguments))
      case "update" where options.contains("--bluez"):
        return try BlueZUpdateCommand.run(rest, console: console, source: .live(arguments: arguments))
      case "replay": return try ReplayCommand.run(rest, console: console)
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
      case "help":
        guard !rest.isEmpty else {
          console.write(help.text)
          return ExitStatus.success
        }
        guard let text = self.help(of: rest) else { throw UsageError("no command '\(rest.joined(separator: " "))'") }
        console.write(text.text)
        return ExitStatus.success
      default:
        throw UsageError("unknown command '\(command)'")
      }
    } catch {
      console.error("readerctl: \(error.message)\n\(topic.seeHelp)\n")
      return ExitStatus.usage
    }
  }

  /// The largest input `ndef decode -` reads from standard input (an NDEF message is at most a few
  /// kilobytes on a tag; this leaves room for files built by tools).
  static let maximumInputSize = 16 * 1024 * 1024

  /// The help of the command `arguments` run: a subcommand's (`nfc scan`) when one is named, the
  /// command's, or the tool's.
  private static func helpTopic(_ arguments: [String]) -> CommandHelp {
    if arguments.prefix(while: { $0 != "--" }).contains("--bluez"), let first = arguments.first,
      let bluez = help(of: [first, "--bluez"])
    {
      return bluez
    }
    return help(of: Array(arguments.prefix(2))) ?? help(of: Array(arguments.prefix(1))) ?? help
  }

  /// The help of the command named by `words` (`["nfc", "scan"]`), if there is one.
  private static func help(of words: [String]) -> CommandHelp? {
    switch words {
    case ["demo"], ["demo", "nfc"]: DemoCommand.help
    case ["discover"]: DiscoverCommand.help
    case ["discover", "--bluez"]: BlueZCommands.discoverHelp
    case ["connect", "--bluez"]: BlueZCommands.connectHelp
    case ["reconnect", "--bluez"]: BlueZCommands.reconnectHelp
    case ["update", "--bluez"]: BlueZUpdateCommand.help
    case ["replay"]: ReplayCommand.help
    case ["connect"]: LinkCommands.connectHelp
    case ["reconnect"]: LinkCommands.reconnectHelp
    case ["update"]: UpdateCommand.help
    case ["ndef"]: NDEFCommand.help
    case ["ndef", "decode"]: NDEFCommand.decodeHelp
    case ["ndef", "encode"]: NDEFCommand.encodeHelp
    case ["nfc"]: NFCCommand.help
    case ["nfc", "scan"]: NFCCommand.scanHelp
    case ["nfc", "write"]: NFCCommand.writeHelp
    case ["help"]: help
    default: nil
    }
  }

  /// Every command's help, for the tests that hold them to the width and sections.
  static let allHelp: [CommandHelp] = [
    help, DemoCommand.help, DiscoverCommand.help, LinkCommands.connectHelp, LinkCommands.reconnectHelp,
    UpdateCommand.help, NDEFCommand.help, NDEFCommand.decodeHelp, NDEFCommand.encodeHelp, NFCCommand.help,
    NFCCommand.scanHelp, NFCCommand.writeHelp, BlueZCommands.discoverHelp, BlueZCommands.connectHelp,
    BlueZCommands.reconnectHelp, BlueZUpdateCommand.help, ReplayCommand.help,
  ]
}
