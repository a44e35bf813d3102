import Dispatch
import Foundation
import ReaderKit
import Synchronization

/// `readerctl discover --bluez`: scans for real Bluetooth LE readers through BlueZ on the D-Bus
/// system bus, with the simulated form's plain output and exit statuses.
enum BlueZDiscoverCommand {
  static let usage = """
    usage: readerctl discover --bluez [--adapter NAME] [--timeout S] [--json]

      Scans for real readers through BlueZ (bluetoothd) on the D-Bus system bus: LE devices that
      advertise the MCUmgr SMP service, named by their advertised name, nearest first.
      --adapter NAME  the Bluetooth adapter (default: the first one bluetoothd reports), e.g. hci0
      --timeout S     stop after S seconds (default 10); 0 scans until Ctrl-C
      --json          only the outcome, as one JSON line:
                      {"event": "result", "exitStatus": …, "error": …, "readers": […]}

    The system bus is DBUS_SYSTEM_BUS_ADDRESS, else /var/run/dbus/system_bus_socket.

    exit status: 0 readers found, 64 usage, 69 no system bus, no bluetoothd or no such adapter (within
    a second; the line on standard error says which), 75 scan timed out with nothing found, 130 interrupted

    """

  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try ArgumentList(arguments, flags: ["bluez", "json"], options: ["adapter", "timeout"])
    _ = try options.positionals(named: [])
    let timeout = try options.number("timeout", default: 10, in: 0...86_400)
    let json = options.has("json")
    let started = ContinuousClock.now
    let terminal: Terminal
    do {
      terminal = try Terminal(
        bluezAdapter: options.string("adapter"), store: InMemoryReaderStore(), delegateExecutor: .scheduler)
    } catch {
      return finish(.failure(error, [("readers", .array([]))]), console: console, json: json, started: started)
    }
    let configuration: BluetoothScanDiscoveryConfiguration
    do throws(ReaderError) {
      configuration = try BluetoothScanDiscoveryConfiguration.Builder().setTimeout(.seconds(timeout)).build()
    } catch {
      throw UsageError(error.message)
    }
    if !json { console.line("Scanning for readers through BlueZ…") }
    let listener = Listener(console: console, quiet: json)
    let done = DispatchSemaphore(value: 0)
    let outcome = Mutex<ReaderError??>(nil)
    terminal.discoverReaders(configuration, delegate: listener) { error in
      outcome.withLock { $0 = .some(error) }
      done.signal()
    }
    done.wait()
    let readers = listener.latest
    let error = outcome.withLock { $0 } ?? nil
    if !json {
      console.write(ReaderTable.lines(readers).map { $0 + "\n" }.joined())
      if error == nil {
        let count = "\(readers.count) reader\(readers.count == 1 ? "" : "s")"
        console.line("Found \(count) in \(format(ContinuousClock.now - started)).")
      }
    }
    let found: [(String, JSONValue)] = [("readers", .array(readers.map(\.json)))]
    return finish(error.map { .failure($0, found) } ?? .success(found), console: console, json: json, started: started)
  }

  /// Shows a failure on standard error (or the outcome as JSON) and returns the exit status.
  private static func finish(_ outcome: CommandOutcome, console: Console, json: Bool, started: ContinuousClock.Instant)
    -> Int32
  {
    if json {
      console.line(outcome.json(at: ContinuousClock.now - started).rendered)
    } else if case .object(let fields) = outcome.error, let message = fields.first(where: { $0.0 == "message" }) {
      console.error("readerctl: discovery failed: \(message.1.plainText)\n")
    }
    return outcome.status
  }

  private static func format(_ duration: Duration) -> String {
    "\(JSONValue.number(duration.inSeconds, decimals: 1).rendered) s"
  }

  /// Keeps the latest list and prints one line per update.
  nonisolated final class Listener: DiscoveryDelegate {
    private let received = Mutex<[Reader]>([])
    private let console: Console
    private let quiet: Bool

    init(console: Console, quiet: Bool) {
      self.console = console
      self.quiet = quiet
    }

    var latest: [Reader] { received.withLock { $0 } }

    func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
      received.withLock { $0 = readers }
      guard !quiet else { return }
      let names = readers.map { "\($0.serialNumber) (\($0.signalStrength.map { "\($0) dBm" } ?? "nearest"))" }
      console.line("\(readers.count) in view: \(names.joined(separator: ", "))")
    }
  }
}

extension JSONValue {
  /// A string's text as is; anything else rendered as JSON.
  fileprivate var plainText: String {
    if case .string(let text) = self { return text }
    return rendered
  }
}
