import Foundation
import ReaderCore
import ReaderKit

/// The `--bluez` forms of `discover`, `connect` and `reconnect`: the same commands on real Bluetooth
/// LE readers through BlueZ (`bluetoothd`) on the D-Bus system bus, with the simulated forms' output
/// and exit statuses. Each can write its run to `--record FILE`, which `readerctl replay FILE` plays
/// back with the same output.
enum BlueZCommands {
  /// What every `--bluez` command takes.
  static let sharedOptions: [CommandHelp.Option] = [
    .init("bluez", [], "use real readers through BlueZ (bluetoothd) on the D-Bus system bus"),
    .init("adapter", ["NAME"], "the Bluetooth adapter, e.g. hci0 (default: the first one bluetoothd reports)"),
    .init(
      "record", ["FILE"],
      "write the radio's and the readers' commands and events, with their times, to FILE as JSON lines; "
        + "`readerctl replay FILE` runs them again"),
  ]

  static let busNote =
    "The system bus is DBUS_SYSTEM_BUS_ADDRESS, else /var/run/dbus/system_bus_socket; the process needs "
    + "access to bluetoothd (root, the bluetooth group, or a D-Bus policy or polkit rule)."

  /// The exit status and line when BlueZ cannot be used.
  static let missingStatus: (Int32, String) = (
    69,
    "no system bus, no bluetoothd, no such adapter or no permission (within a second; the line on standard "
      + "error says which)"
  )

  static let discoverHelp = CommandHelp(
    command: "discover --bluez",
    overview: "Scans for real readers through BlueZ and lists them, nearest first.",
    synopses: ["[--adapter NAME] [--timeout S] [--record FILE] [--json]"],
    discussion: [
      "Lists the Bluetooth LE devices that advertise the MCUmgr SMP service, named by their advertised name. "
        + busNote
    ],
    options: sharedOptions + [
      .init("timeout", ["S"], "stop after S seconds (default 10); 0 scans until Ctrl-C"),
      .json(insteadOf: "the table", members: "\"readers\": […]"),
    ],
    exitStatuses: [
      (0, "readers found"), (64, "usage"), missingStatus, (74, "the output or the recording cannot be written"),
      (75, "the scan timed out with nothing found"), (130, "interrupted"),
    ])

  static let connectHelp = CommandHelp(
    command: "connect --bluez",
    overview: "Connects a real reader to a location through BlueZ and saves it for `readerctl reconnect --bluez`.",
    synopses: ["SERIAL --location ID [--store FILE] [--adapter NAME] [--timeout S] [--record FILE] [--json]"],
    discussion: [
      "Scans for the reader SERIAL (its advertised name), connects it to location ID (a required software "
        + "update would install first: connect runs without a catalog, so none does) and saves it in the store. "
        + busNote
    ],
    arguments: [("SERIAL", "the serial number of the reader to connect")],
    options: sharedOptions + [
      .init("location", ["ID"], "the location to connect the reader to (required, not empty)"),
      .init("store", ["FILE"], "the store's file (default: $XDG_DATA_HOME/readerkit/last-reader.json)"),
      .init("timeout", ["S"], "how long to look for the reader, in seconds (default 30)"),
      .json(members: "\"reader\": …"),
    ],
    exitStatuses: [
      (0, "connected and saved"), (64, "usage"), (69, "reader not found; or " + missingStatus.1),
      (74, "the store, the output or the recording cannot be written"), (75, "timed out"), (130, "interrupted"),
      (1, "other failures"),
    ])

  static let reconnectHelp = CommandHelp(
    command: "reconnect --bluez",
    overview: "Reconnects to the real reader saved by `readerctl connect --bluez`, as an app does at launch.",
    synopses: ["[--store FILE] [--adapter NAME] [--timeout S] [--record FILE] [--json]"],
    discussion: [
      "Looks the reader's serial number up in the store, scans for it through BlueZ (a reader BlueZ still "
        + "holds connected counts as found), and connects it to the saved location. " + busNote
    ],
    options: sharedOptions + [
      .init("store", ["FILE"], "the store's file (default: $XDG_DATA_HOME/readerkit/last-reader.json)"),
      .init("timeout", ["S"], "how long to look for the reader, in seconds (default 30)"),
      .json(members: "\"reader\": …"),
    ],
    exitStatuses: [
      (0, "reconnected"), (64, "usage"), (65, "corrupt store"), (66, "nothing saved"),
      (69, "reader not found in time; or " + missingStatus.1),
      (74, "the store, the output or the recording cannot be written"), (130, "interrupted"), (1, "other failures"),
    ])

  // MARK: Running

  /// How a `--bluez` command gets its session: live (opening BlueZ, recording if asked) or replayed.
  enum Source {
    case live(arguments: [String])
    case replay(Replay)

    /// The session, or the failure line and status when BlueZ cannot be used.
    func session(_ options: ArgumentList, notes: [String: String], console: Console, what: String) -> Result<
      BlueZSession, Failure
    > {
      let json = options.has("json")
      switch self {
      case .replay(let replay):
        let session = BlueZSession.replay(replay.header, replay.records, console: console, json: json)
        replay.session.withLock { $0 = session }
        return .success(session)
      case .live(let arguments):
        do throws(ReaderError) {
          return .success(
            try BlueZSession.live(
              adapter: options.string("adapter"), record: options.string("record"), arguments: arguments, notes: notes,
              console: console, json: json))
        } catch {
          return .failure(Failure(error: error, what: what, json: json, console: console))
        }
      }
    }

    /// The store a command uses: the file, or for a replay one holding what the file held.
    func store(_ url: URL, notes: [String: String]) -> any ReaderStore {
      switch self {
      case .live: FileReaderStore(fileURL: url)
      case .replay: ReplayedStore(notes: notes)
      }
    }
  }

  /// A `--bluez` command that could not start: says so on standard error (the message alone: it names
  /// what is missing) and ends with the error's status (69 when BlueZ cannot be used).
  struct Failure: Error {
    let error: ReaderError
    let what: String
    let json: Bool
    let console: Console

    func report(_ fields: [(String, JSONValue)] = []) -> Int32 {
      let outcome = CommandOutcome.failure(error, fields)
      if json {
        console.line(outcome.json(at: .zero).rendered)
      } else {
        console.error("readerctl: \(what) failed: \(error.message)\n")
      }
      return outcome.status
    }
  }

  static func connect(_ arguments: [String], console: Console, source: Source) throws(UsageError) -> Int32 {
    let options = try connectHelp.parse(arguments)
    let (serial, location) = try LinkCommands.target(options)
    let timeout = try options.number("timeout", default: 30, in: 0.001...86_400)
    let url = try storeURL(options)
    let configuration = try LinkCommands.connectionConfiguration(location)
    Interrupt.install()
    switch source.session(options, notes: ["store": url.path], console: console, what: "connecting") {
    case .failure(let failure): return failure.report()
    case .success(let session):
      let store = source.store(url, notes: session.notes)
      return LinkCommands.connect(
        serial, configuration, session: session, store: store, storePath: session.notes["store"] ?? url.path,
        timeout: .seconds(timeout),
        checkStore: { () throws(ReaderError) in try (store as? FileReaderStore)?.checkCanSave() })
    }
  }

  static func reconnect(_ arguments: [String], console: Console, source: Source) throws(UsageError) -> Int32 {
    let options = try reconnectHelp.parse(arguments)
    _ = try options.positionals(named: [])
    let timeout = try options.number("timeout", default: 30, in: 0.001...86_400)
    let url = try storeURL(options)
    Interrupt.install()
    var notes = ["store": url.path]
    if case .live = source { notes.merge(ReplayedStore.notes(describing: FileReaderStore(fileURL: url))) { $1 } }
    switch source.session(options, notes: notes, console: console, what: "reconnecting") {
    case .failure(let failure): return failure.report()
    case .success(let session):
      return LinkCommands.reconnect(
        session: session, store: source.store(url, notes: session.notes),
        storePath: session.notes["store"] ?? url.path, timeout: .seconds(timeout))
    }
  }

  static func discover(_ arguments: [String], console: Console, source: Source) throws(UsageError) -> Int32 {
    let options = try discoverHelp.parse(arguments)
    _ = try options.positionals(named: [])
    let timeout = try options.number("timeout", default: 10, in: 0...86_400)
    Interrupt.install()
    let session: BlueZSession
    switch source.session(options, notes: [:], console: console, what: "discovery") {
    case .failure(let failure): return failure.report([("readers", .array([]))])
    case .success(let opened): session = opened
    }
    let configuration: BluetoothScanDiscoveryConfiguration
    do throws(ReaderError) {
      configuration = try session.scanConfiguration(timeout: .seconds(timeout))
    } catch {
      throw UsageError(error.message)
    }
    let terminal = session.makeTerminal(store: InMemoryReaderStore(), updateCatalog: nil)
    if !session.json { console.line("Scanning for readers through BlueZ…") }
    let listener = ScanListener(session: session)
    let finished = Outcome<ReaderError?>()
    let discovery = terminal.discoverReaders(configuration, delegate: listener) { finished.set($0) }
    let limit = timeout == 0 ? Duration.seconds(86_400 * 365) : Duration.seconds(timeout) + .seconds(10)
    session.run(until: { finished.isSet }, limit: limit)
    if !finished.isSet {
      let stopped = Outcome<Bool>()
      discovery.cancel { _ in stopped.set(true) }
      session.run(until: { stopped.isSet }, limit: .seconds(10), paced: false, interruptible: false)
    }
    var error = finished.value ?? nil
    if Interrupt.requested { error = .canceled("discoverReaders") }
    let readers = listener.latest
    if !session.json {
      if Interrupt.requested { session.screen.lineAfterInterrupt() }
      console.write(ReaderTable.lines(readers).map { $0 + "\n" }.joined())
      let count = "\(readers.count) reader\(readers.count == 1 ? "" : "s")"
      switch error?.code {
      case nil: console.line("Found \(count) in \(JSONValue.number(session.now.inSeconds, decimals: 1).rendered) s.")
      case .canceled?: console.line("Stopped: \(count) in view.")
      default: console.error("readerctl: discovery failed: \(error!.report)\n")
      }
    }
    let found: [(String, JSONValue)] = [("readers", .array(readers.map(\.json)))]
    return session.finish(error.map { .failure($0, found) } ?? .success(found))
  }

  private static func storeURL(_ options: ArgumentList) throws(UsageError) -> URL {
    let path = options.string("store")
    if let path, path.isEmpty { throw UsageError("--store needs a file path") }
    return path.map { URL(fileURLWithPath: $0) } ?? FileReaderStore.defaultLocation()
  }

  /// Keeps the latest list and prints one line per update (nothing with `--json`).
  nonisolated final class ScanListener: DiscoveryDelegate {
    private let received = Locked<[Reader]>([])
    private let session: BlueZSession

    init(session: BlueZSession) { self.session = session }

    var latest: [Reader] { received.withLock { $0 } }

    func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
      received.withLock { $0 = readers }
      guard !session.json else { return }
      let names = readers.map { "\($0.serialNumber) (\($0.signalStrength.map { "\($0) dBm" } ?? "nearest"))" }
      session.console.line("\(readers.count) in view: \(names.joined(separator: ", "))")
    }
  }
}

/// A recording to play back, and the session that plays it once the command made it.
final class Replay: Sendable {
  let header: TransportRecordHeader
  let records: [TransportRecord]
  let session = Locked<BlueZSession?>(nil)

  init(header: TransportRecordHeader, records: [TransportRecord]) {
    self.header = header
    self.records = records
  }
}

/// The store of a replayed run: it holds what the recorded run's store held when it started (the
/// header's notes), and keeps what the replay saves in memory, never on disk.
final class ReplayedStore: ReaderStore {
  private let stored: Locked<Result<SavedReader?, ReaderError>>

  init(notes: [String: String]) {
    if let code = notes["storeError"].flatMap(ReaderError.Code.init(name:)) {
      stored = Locked(.failure(ReaderError(code, notes["storeErrorMessage"] ?? "")))
    } else {
      // A recording is any file: its saved reader is one flat object, read within a record's bounds.
      let saved = notes["savedReader"].flatMap { text in
        (try? JSONReader.read(text.utf8, limits: JSONReader.Limits(maximumSize: 64 * 1024, maximumDepth: 8)))
          .flatMap { try? JSONValueDecoder().decode(SavedReader.self, from: $0) }
      }
      stored = Locked(.success(saved))
    }
  }

  /// What a live run's store holds now, as notes for its recording's header.
  static func notes(describing store: any ReaderStore) -> [String: String] {
    do throws(ReaderError) {
      guard let saved = try store.loadLastReader(), let data = try? JSONEncoder().encode(saved) else { return [:] }
      return ["savedReader": String(decoding: data, as: UTF8.self)]
    } catch {
      return ["storeError": error.code.description, "storeErrorMessage": error.message]
    }
  }

  func loadLastReader() throws(ReaderError) -> SavedReader? { try stored.withLock { $0 }.get() }
  func saveLastReader(_ reader: SavedReader) throws(ReaderError) { stored.withLock { $0 = .success(reader) } }
  func clearLastReader() throws(ReaderError) { stored.withLock { $0 = .success(nil) } }
}
