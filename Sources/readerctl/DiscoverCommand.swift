import ReaderCore
import ReaderKit

/// `readerctl discover`: scans the simulated world and shows what it finds.
enum DiscoverCommand {
  static let help = CommandHelp(
    command: "discover",
    overview: "Scans the simulated world for readers and lists them, nearest first.",
    synopses: ["[--proximity] [--timeout S] [--readers N] [--seed N] [--speed X] [--json]"],
    discussion: [
      "On a terminal the table updates in place and fits the window (\"… and N more\" when it is short); a + "
        + "after a battery level means the reader is charging."
    ],
    options: [
      .init(
        "proximity", [],
        "find the single nearest Chipper 2X held close to the device (reported twice: serial number first, "
          + "then details; its LEDs flash)"),
      .init("timeout", ["S"], "stop after S simulated seconds (default 10); 0 scans until Ctrl-C"),
      .init("readers", ["N"], "readers in the world (default 3, 0-64)"),
      .init("seed", ["N"], "seed of the simulated world (default 1)"),
      .init(
        "speed", ["X"],
        "simulated seconds per real second (default: 4 on a terminal, 0 = unpaced otherwise; 1 for a scan "
          + "without a limit, which cannot run unpaced)"),
      .json(insteadOf: "the table", members: "\"readers\": […]"),
    ],
    exitStatuses: [
      (0, "readers found"), (64, "usage"), (69, "no reader found (proximity)"), (74, "the output cannot be written"),
      (75, "the scan timed out with nothing found"), (130, "interrupted"),
    ])

  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try help.parse(arguments)
    _ = try options.positionals(named: [])
    let proximity = options.has("proximity")
    let timeout = try options.number("timeout", default: 10, in: 0...86_400)
    let json = options.has("json")
    // A scan without a limit only ends with Ctrl-C, so it runs at least in real time.
    let speed = try options.number(
      "speed", default: console.isTerminal && !json ? 4 : (timeout == 0 ? 1 : 0), in: 0...1_000_000)
    if timeout == 0, speed == 0 {
      throw UsageError("a scan without a limit (--timeout 0) cannot run unpaced (--speed 0): it would never end")
    }
    let session = SimulationSession(
      seed: try options.integer("seed", default: 1, in: 0...UInt64.max),
      readers: try options.integer("readers", default: 3, in: 0...64), console: console, speed: speed, json: json)
    let terminal = session.makeTerminal(store: InMemoryReaderStore())
    Interrupt.install()

    let listener = DiscoveryListener(session: session, quiet: json)
    let finished = Outcome<ReaderError?>()
    let configuration: any DiscoveryConfiguration
    do throws(ReaderError) {
      configuration =
        proximity
        ? try BluetoothProximityDiscoveryConfiguration.Builder().setSimulated(true).build()
        : try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(true).setTimeout(.seconds(timeout)).build()
    } catch {
      throw UsageError(error.message)
    }
    if !json {
      session.note(
        proximity
          ? "Hold a Chipper 2X close to the device… (simulated world, seed \(session.seed))"
          : "Scanning for readers… (seed \(session.seed); \(pacingNote(session)))")
    }
    let discovery = terminal.discoverReaders(configuration, delegate: listener) { finished.set($0) }
    // Past a scan's own timeout, a margin in case it never ends by itself.
    let limit = timeout == 0 ? Duration.seconds(86_400 * 365) : Duration.seconds(timeout) + .seconds(10)

    if proximity {
      // Proximity has no timeout of its own: it ends once the reader's details arrive, or at --timeout.
      session.run(
        until: { listener.updateCount >= 2 || finished.isSet },
        limit: timeout == 0 ? limit : Duration.seconds(timeout))
      let found = listener.updateCount >= 2 ? listener.latest.first : nil
      stop(discovery, session: session)
      return end(
        session, found: found.map { [$0] } ?? [], proximity: true,
        error: proximityError(found, finished, timeout: timeout))
    }

    session.run(until: { finished.isSet }, limit: limit)
    if !finished.isSet { stop(discovery, session: session) }
    var error = finished.value ?? nil
    if error?.code == .canceled && !Interrupt.requested {
      error = ReaderError(
        .bluetoothScanTimedOut, "the scan did not end by itself",
        context: ["timeout": Duration.seconds(timeout).contextSeconds])
    }
    return end(session, found: listener.latest, proximity: false, error: error)
  }

  /// Why a proximity discovery found nothing, or `nil` when it found `found`.
  private static func proximityError(_ found: Reader?, _ finished: Outcome<ReaderError?>, timeout: Double)
    -> ReaderError?
  {
    if Interrupt.requested { return .canceled("discoverReaders") }
    if found != nil { return nil }
    if let error = finished.value ?? nil, error.code != .canceled { return error }
    return ReaderError(
      .readerNotFound, "no Chipper 2X was held close to the device within \(timeoutText(timeout))",
      context: ["timeout": Duration.seconds(timeout).contextSeconds])
  }

  /// Shows how the discovery ended — the table when it was not live, the outcome on stdout, a
  /// failure on stderr — and returns the exit status.
  private static func end(_ session: SimulationSession, found readers: [Reader], proximity: Bool, error: ReaderError?)
    -> Int32
  {
    let console = session.console
    if Interrupt.requested { session.screen.lineAfterInterrupt() }
    session.screen.detach()
    if !session.json {
      if !session.screen.isLive && !proximity {
        console.write(ReaderTable.lines(readers).map { $0 + "\n" }.joined())
      }
      let count = "\(readers.count) reader\(readers.count == 1 ? "" : "s")"
      switch error {
      case nil:
        session.note(
          proximity
            ? "Nearest reader: \(readers.first.map { "\($0)" } ?? "none") — its LEDs are flashing so you can pick it out."
            : "Found \(count) in \(SimulationSession.format(session.now)) of simulated time.")
      case let error? where error.code == .canceled:
        console.line("Stopped: \(count) in view.")
      case let error?:
        console.error("readerctl: discovery failed: \(error.report)\n")
      }
    }
    let found: [(String, JSONValue)] = [("readers", .array(readers.map(\.json)))]
    return session.finish(error.map { .failure($0, found) } ?? .success(found))
  }

  /// Cancels the discovery and runs the world until it has stopped, even after Ctrl-C.
  private static func stop(_ discovery: Cancelable, session: SimulationSession) {
    let stopped = Outcome<Bool>()
    discovery.cancel { _ in stopped.set(true) }
    session.run(until: { stopped.isSet }, limit: .seconds(10), paced: false, interruptible: false)
  }

  static func pacingNote(_ session: SimulationSession) -> String {
    session.speed > 0
      ? "simulated time runs \(formatSpeed(session.speed))× real time"
      : "simulated time runs as fast as the machine allows"
  }

  private static func formatSpeed(_ speed: Double) -> String {
    speed == speed.rounded() ? "\(Int(speed))" : "\(speed)"
  }

  /// `3 s`, `0.5 s`.
  static func timeoutText(_ seconds: Double) -> String {
    "\(JSONValue.number(seconds, decimals: 3).rendered) s"
  }
}

/// Collects discovery updates and shows them: as a live table on a terminal that redraws in place,
/// one line per update elsewhere.
nonisolated final class DiscoveryListener: DiscoveryDelegate {
  /// The latest list and how many lists came (not every list: a scan until Ctrl-C may run for days).
  private let received = Locked<(latest: [Reader], count: Int)>(([], 0))
  private let session: SimulationSession
  private let quiet: Bool

  /// A listener that shows updates on `session`'s screen, unless `quiet`.
  init(session: SimulationSession, quiet: Bool) {
    self.session = session
    self.quiet = quiet
  }

  /// How many lists were reported so far.
  var updateCount: Int { received.withLock { $0.count } }

  /// The latest list.
  var latest: [Reader] { received.withLock { $0.latest } }

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    received.withLock { $0 = (readers, $0.count + 1) }
    guard !quiet else { return }
    if session.screen.isLive {
      session.screen.show { space in ReaderTable.lines(readers, fitting: space) }
    } else {
      let names = readers.map { "\($0.serialNumber) (\($0.signalStrength.map { "\($0) dBm" } ?? "nearest"))" }
      session.say("\(readers.count) in view: \(names.joined(separator: ", "))")
    }
  }
}
