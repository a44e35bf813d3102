import ReaderKit
import Synchronization

/// `readerctl discover`: scans the simulated world and shows what it finds.
enum DiscoverCommand {
  static let usage = """
    usage: readerctl discover [--proximity] [--timeout S] [--readers N] [--seed N] [--speed X] [--json]

      Scans a simulated Bluetooth world and lists the readers it finds, nearest first.
      --proximity  find the single nearest Chipper 2X held close to the device (reported twice:
                   serial number first, then details; its LEDs flash)
      --timeout S  stop after S simulated seconds (default 10); 0 scans until Ctrl-C
      --readers N  readers in the world (default 3, 0-64)
      --seed N     seed of the simulated world (default 1)
      --speed X    simulated seconds per real second (default: 4 on a terminal, 0 = unpaced otherwise)
      --json       one JSON object per event instead of the table

    exit status: 0 readers found, 64 usage, 69 no reader found (proximity), 75 scan timed out with
    nothing found, 130 interrupted

    """

  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try ArgumentList(
      arguments, flags: ["proximity", "json"], options: ["timeout", "readers", "seed", "speed"])
    _ = try options.positionals(named: [])
    let proximity = options.has("proximity")
    let timeout = try options.number("timeout", default: 10, in: 0...86_400)
    let json = options.has("json")
    // A scan without a limit only ends with Ctrl-C, so it runs at least in real time.
    let speed = try options.number(
      "speed", default: console.isTerminal && !json ? 4 : (timeout == 0 ? 1 : 0), in: 0...1_000_000)
    let session = SimulationSession(
      seed: try options.integer("seed", default: 1, in: 0...UInt64.max),
      readers: try options.integer("readers", default: 3, in: 0...64), console: console, speed: speed, json: json)
    let terminal = session.makeTerminal(store: InMemoryReaderStore())
    if timeout == 0 { Interrupt.install() }

    let listener = DiscoveryListener(session: session, quiet: json)
    let finished = Outcome<ReaderError?>()
    let configuration: any DiscoveryConfiguration
    do throws(ReaderError) {
      configuration =
        proximity
        ? try BluetoothProximityDiscoveryConfiguration.Builder().setSimulated(true).build()
        : try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(true).setTimeout(timeout).build()
    } catch {
      throw UsageError(error.message)
    }
    if !json {
      console.line(
        proximity
          ? "Hold a Chipper 2X close to the device… (simulated world, seed \(session.seed))"
          : "Scanning for readers… (simulated world, seed \(session.seed); \(pacingNote(session)))")
    }
    let discovery = terminal.discoverReaders(configuration, delegate: listener) { finished.set($0) }

    if proximity {
      // Proximity has no timeout of its own: it ends once the reader's details arrive, or at --timeout.
      let limit = timeout == 0 ? Duration.seconds(86_400 * 365) : Duration.seconds(exactly: timeout)!
      session.run(until: { listener.updates.count >= 2 || finished.isSet }, limit: limit)
      stop(discovery, session: session, finished: finished)
      session.screen.detach()
      let found = listener.updates.count >= 2 ? listener.updates.last?.first : nil
      if !json {
        if let found {
          console.line("Nearest reader: \(found) — its LEDs are flashing so you can pick it out.")
        } else {
          console.line("No Chipper 2X was held close to the device.")
        }
      }
      if Interrupt.requested { return ExitStatus.interrupted }
      return found == nil ? ExitStatus.unavailable : ExitStatus.success
    }

    session.run(until: { finished.isSet }, limit: .seconds(86_400 * 365))
    if !finished.isSet { stop(discovery, session: session, finished: finished) }
    let error = finished.value ?? nil
    session.screen.detach()
    if !json {
      let readers = listener.latest
      if !console.isTerminal { console.write(ReaderTable.lines(readers).map { $0 + "\n" }.joined()) }
      switch error?.code {
      case nil:
        console.line(
          "Found \(readers.count) reader\(readers.count == 1 ? "" : "s") in \(SimulationSession.format(session.now)) of simulated time."
        )
      case .canceled?: console.line("Stopped: \(readers.count) reader\(readers.count == 1 ? "" : "s") in view.")
      default: console.line("Discovery failed: \(error!)")
      }
    }
    if let error, error.code == .canceled { return Interrupt.requested ? ExitStatus.interrupted : ExitStatus.success }
    return error.map(ExitStatus.status(for:)) ?? ExitStatus.success
  }

  /// Cancels the discovery and runs the world until it has stopped.
  private static func stop(_ discovery: Cancelable, session: SimulationSession, finished: Outcome<ReaderError?>) {
    let stopped = Outcome<CancelResult>()
    discovery.cancel { stopped.set($0) }
    session.run(until: { stopped.isSet }, limit: .seconds(10), paced: false)
  }

  static func pacingNote(_ session: SimulationSession) -> String {
    session.speed > 0
      ? "simulated time runs \(formatSpeed(session.speed))× real time"
      : "simulated time runs as fast as the machine allows"
  }

  private static func formatSpeed(_ speed: Double) -> String {
    speed == speed.rounded() ? "\(Int(speed))" : "\(speed)"
  }
}

/// Collects discovery updates and shows them: live in the session's region on a terminal, one line
/// per update elsewhere.
nonisolated final class DiscoveryListener: DiscoveryDelegate {
  private let updatesSoFar = Mutex<[[Reader]]>([])
  private let session: SimulationSession
  private let quiet: Bool

  /// A listener that shows updates on `session`'s screen, unless `quiet`.
  init(session: SimulationSession, quiet: Bool) {
    self.session = session
    self.quiet = quiet
  }

  /// Every list reported so far.
  var updates: [[Reader]] { updatesSoFar.withLock { $0 } }

  /// The latest list.
  var latest: [Reader] { updates.last ?? [] }

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    updatesSoFar.withLock { $0.append(readers) }
    guard !quiet else { return }
    if session.console.isTerminal {
      session.screen.show(ReaderTable.lines(readers))
    } else {
      let names = readers.map { "\($0.serialNumber) (\($0.signalStrength.map { "\($0) dBm" } ?? "nearest"))" }
      session.say("\(readers.count) in view: \(names.joined(separator: ", "))")
    }
  }
}
