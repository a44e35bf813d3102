import Foundation
import ReaderCore
import ReaderKit

/// `readerctl connect` and `readerctl reconnect`: the two halves of reconnect-at-launch, each in its
/// own process. `connect` saves the reader it connects to in the store; a later `reconnect` (a new
/// process, the same `--seed` so it sees the same simulated world) finds it again from that record.
enum LinkCommands {
  /// The options `connect` and `reconnect` share, after `--store`.
  private static func sharedOptions(seedNote: String) -> [CommandHelp.Option] {
    [
      .init("seed", ["N"], "seed of the simulated world (default 1)" + seedNote),
      .init("readers", ["N"], "readers in the world (default 3, 1-64)"),
      .init("timeout", ["S"], "how long to look for the reader, in simulated seconds (default 30)"),
      .init("speed", ["X"], "simulated seconds per real second (default: 4 on a terminal, 0 = unpaced otherwise)"),
      .json(members: "\"reader\": …"),
    ]
  }

  static let connectHelp = CommandHelp(
    command: "connect",
    overview: "Connects a simulated reader to a location and saves it for `readerctl reconnect`.",
    synopses: ["SERIAL --location ID [--store FILE] [--seed N] [--readers N] [--timeout S] [--speed X] [--json]"],
    discussion: [
      "Scans the simulated world for the reader SERIAL, connects it to location ID and saves it in the store. The "
        + "store is checked before the scan: one that cannot be written fails at once."
    ],
    arguments: [("SERIAL", "the serial number of the reader to connect")],
    options: [
      .init("location", ["ID"], "the location to connect the reader to (required, not empty)"),
      .init(
        "store", ["FILE"],
        "the store's file (default: $XDG_DATA_HOME/readerkit/last-reader.json); missing directories on the way "
          + "are created (mode 0700)"),
    ] + sharedOptions(seedNote: ""),
    exitStatuses: [
      (0, "connected and saved"), (64, "usage"), (69, "reader not found"),
      (74, "the store or the output cannot be written"), (75, "timed out"), (130, "interrupted"),
      (1, "other failures"),
    ])

  static let reconnectHelp = CommandHelp(
    command: "reconnect",
    overview: "Reconnects to the reader saved by `readerctl connect`, as an app does at launch.",
    synopses: ["[--store FILE] [--seed N] [--readers N] [--timeout S] [--speed X] [--json]"],
    discussion: [
      "Looks the reader's serial number up in the store, scans for it, and connects it to the saved location. "
        + "A reader saved by an app for real hardware (its record is not \"simulated\") fails with "
        + "bluetoothUnsupported: readerctl drives only the simulator."
    ],
    options: [
      .init("store", ["FILE"], "the store's file (default: $XDG_DATA_HOME/readerkit/last-reader.json)")
    ] + sharedOptions(seedNote: "; use the one given to `connect`"),
    exitStatuses: [
      (0, "reconnected"), (64, "usage"), (65, "corrupt store"), (66, "nothing saved"),
      (69, "reader not found in time, or a real reader, which needs Bluetooth hardware"),
      (74, "the store cannot be read, or the output written"), (130, "interrupted"), (1, "other failures"),
    ])

  static func connect(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try connectHelp.parse(arguments)
    let (serial, location) = try target(options)
    let (session, store, timeout) = try setUp(options, console: console)
    let configuration = try connectionConfiguration(location)
    return connect(
      serial, configuration, session: session, store: store, storePath: store.fileURL.path, timeout: timeout,
      checkStore: store.checkCanSave)
  }

  /// The reader and location `connect` is given.
  static func target(_ options: ArgumentList) throws(UsageError) -> (serial: String, location: String) {
    let serial = try options.positionals(named: ["SERIAL"])[0]
    guard !serial.allSatisfy(\.isWhitespace) else { throw UsageError("SERIAL must not be empty") }
    guard let location = options.string("location") else { throw UsageError("--location is required") }
    return (serial, location)
  }

  static func connectionConfiguration(_ location: String) throws(UsageError) -> BluetoothConnectionConfiguration {
    do throws(ReaderError) {
      return try BluetoothConnectionConfiguration.Builder(delegate: QuietReaderDelegate(), locationId: location)
        .build()
    } catch {
      throw UsageError(error.message)
    }
  }

  /// Scans `session` for `serial`, connects it with `configuration` and saves it in `store`: the body of
  /// `connect`, on simulated and real readers alike. `checkStore` says at once whether the store can be
  /// written (rather than after the scan and the connection).
  static func connect(
    _ serial: String, _ configuration: BluetoothConnectionConfiguration, session: any ReaderSession,
    store: any ReaderStore, storePath: String, timeout: Duration, checkStore: () throws(ReaderError) -> Void
  ) -> Int32 {
    let location = configuration.locationId
    let say = session.say
    do throws(ReaderError) {
      try checkStore()
    } catch {
      return fail(session, "the store cannot be written", error)
    }
    let terminal = session.makeTerminal(store: store, updateCatalog: nil)
    let saveError = Outcome<ReaderError>()
    terminal.addEventObserver { event in
      if case .didSaveReader(_, let error?) = event.kind { saveError.set(error) }
    }

    say("Looking for \(serial)…")
    let listener = LatestReaders()
    let scan: BluetoothScanDiscoveryConfiguration
    do throws(ReaderError) {
      scan = try session.scanConfiguration(timeout: timeout)
    } catch {
      return fail(session, "connecting failed", error)
    }
    let scanEnded = Outcome<ReaderError?>()
    let discovery = terminal.discoverReaders(scan, delegate: listener) { scanEnded.set($0) }
    let seen = session.run(
      until: { listener.latest.contains { $0.serialNumber == serial } || scanEnded.isSet }, limit: timeout + .seconds(1)
    )
    guard seen, let reader = listener.latest.first(where: { $0.serialNumber == serial }) else {
      let stopped = Outcome<Bool>()
      discovery.cancel { _ in stopped.set(true) }
      session.run(until: { stopped.isSet }, limit: .seconds(10), paced: false, interruptible: false)
      if Interrupt.requested { return fail(session, "interrupted", .canceled("connectReader")) }
      let nearby = listener.latest.map(\.serialNumber).joined(separator: ", ")
      return fail(
        session, "connecting failed",
        ReaderError(
          .readerNotFound,
          "reader \(serial) not found within \(DiscoverCommand.timeoutText(timeout.inSeconds)); "
            + "nearby: \(nearby.isEmpty ? "none" : nearby)",
          context: ["serialNumber": serial, "timeout": timeout.contextSeconds]))
    }

    say("Connecting \(serial) to location \(location)…")
    let result = Outcome<Result<Reader, ReaderError>>()
    let connecting = terminal.connectReader(reader, connectionConfig: configuration) { result.set($0) }
    session.run(until: { result.isSet }, limit: .seconds(3600))
    if !result.isSet {
      connecting.cancel { _ in }
      session.run(until: { result.isSet }, limit: .seconds(60), paced: false, interruptible: false)
    }
    switch result.value {
    case .success(let connected)?:
      if let error = saveError.value {
        return fail(session, "connected, but the reader could not be saved", error)
      }
      say("Connected to \(connected) at \(connected.locationId ?? location); saved in \(storePath).")
      if let information = connected.deviceInformation { say(information.line) }
      return session.finish(.success([("reader", connected.json)]))
    case .failure(let error)?:
      return fail(session, Interrupt.requested ? "interrupted" : "connecting failed", error)
    case nil:
      return fail(session, "interrupted", .canceled("connectReader"))
    }
  }

  static func reconnect(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try reconnectHelp.parse(arguments)
    _ = try options.positionals(named: [])
    let (session, store, timeout) = try setUp(options, console: console)
    return reconnect(session: session, store: store, storePath: store.fileURL.path, timeout: timeout)
  }

  /// Reconnects to the reader saved in `store`, as an app does at launch: the body of `reconnect`, on
  /// simulated and real readers alike.
  static func reconnect(session: any ReaderSession, store: any ReaderStore, storePath: String, timeout: Duration)
    -> Int32
  {
    let say = session.say
    let terminal = session.makeTerminal(store: store, updateCatalog: nil)
    terminal.addEventObserver { event in
      switch event.kind {
      case .didStartLaunchReconnect(let serial): say("Reconnecting to your reader \(serial)…")
      case .didFindSavedReader(let reader): say("Found \(reader); connecting…")
      default: break
      }
    }
    let result = Outcome<Result<Reader?, ReaderError>>()
    let launch = terminal.reconnectToSavedReader(delegate: QuietReaderDelegate(), timeout: timeout) { result.set($0) }
    session.run(until: { result.isSet }, limit: timeout + .seconds(3600))
    if !result.isSet {
      launch.cancel { _ in }
      session.run(until: { result.isSet }, limit: .seconds(60), paced: false, interruptible: false)
    }
    switch result.value {
    case .success(let reader?)?:
      say("Reconnected to \(reader) at \(reader.locationId ?? "?").")
      if let information = reader.deviceInformation { say(information.line) }
      return session.finish(.success([("reader", reader.json)]))
    case .success(nil)?:
      session.console.error("readerctl: no reader saved in \(storePath); run `readerctl connect` first\n")
      return session.finish(
        .failure(code: "noSavedReader", message: "no reader saved in \(storePath)", status: ExitStatus.noInput))
    case .failure(let error)?:
      return fail(session, Interrupt.requested ? "interrupted" : "reconnecting failed", error)
    case nil:
      return fail(session, "interrupted", .canceled("reconnectToSavedReader"))
    }
  }

  /// Reports `error` on stderr after `what`, ends the command with it, and returns its status.
  static func fail(_ session: any ReaderSession, _ what: String, _ error: ReaderError) -> Int32 {
    if Interrupt.requested { session.screen.lineAfterInterrupt() }
    session.console.error("readerctl: \(what): \(error.report)\n")
    return session.finish(.failure(error))
  }

  // MARK: Helpers

  private static func setUp(_ options: ArgumentList, console: Console) throws(UsageError)
    -> (SimulationSession, FileReaderStore, Duration)
  {
    let json = options.has("json")
    let session = SimulationSession(
      seed: try options.integer("seed", default: 1, in: 0...UInt64.max),
      readers: try options.integer("readers", default: 3, in: 1...64), console: console,
      speed: try options.number("speed", default: console.isTerminal && !json ? 4 : 0, in: 0...1_000_000), json: json)
    let timeout = try options.number("timeout", default: 30, in: 0.001...86_400)
    let path = options.string("store")
    if let path, path.isEmpty { throw UsageError("--store needs a file path") }
    let url = path.map { URL(fileURLWithPath: $0) } ?? FileReaderStore.defaultLocation()
    Interrupt.install()
    return (session, FileReaderStore(fileURL: url), Duration.seconds(exactly: timeout)!)
  }
}

/// A connection's delegate for commands that report through the event stream instead.
nonisolated final class QuietReaderDelegate: MobileReaderDelegate {}

/// A discovery delegate that keeps the latest list, quietly.
nonisolated final class LatestReaders: DiscoveryDelegate {
  private let received = Locked<[Reader]>([])

  /// The latest list.
  var latest: [Reader] { received.withLock { $0 } }

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    received.withLock { $0 = readers }
  }
}
