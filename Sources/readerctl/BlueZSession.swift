import Foundation
import ReaderCore
import ReaderKit

#if canImport(BlueZ)
  import BlueZ
#endif

/// A `--bluez` command's readers: real ones through BlueZ on the D-Bus system bus, or a recording of
/// such a run played back (`readerctl replay`).
///
/// Either way the terminal runs on a `VirtualClock` that this session drives: live, in step with the
/// wall clock (D-Bus messages land at the instant they arrive), instant by instant with the command's
/// condition checked in between; replayed, from recorded instant to recorded instant. Between the
/// terminal and BlueZ sits a `RecordingTransport` (writing to `--record FILE` when given, to nothing
/// otherwise), so a run behaves the same whether it is recorded or not, and its replay gives the same
/// output. Narration is stamped with the time since the start; the terminal sees the real date.
final class BlueZSession: ReaderSession {
  let console: Console
  let json: Bool
  let screen: LiveRegion
  let clock: VirtualClock
  /// The clock's time when the session started: how far after `Terminal.simulationEpoch` it started.
  let origin: Duration
  /// What the recording's header says, or will say: the store's path, the reader saved in it.
  let notes: [String: String]
  private let transport: any BluetoothCentral & ReaderLink
  private let replay: ReplayingTransport?
  private let inbox: Inbox?
  private let wallStart = ContinuousClock.now
  /// What prints each terminal's events with `--json`.
  private let printing: TerminalEventPrinter

  var simulated: Bool { false }
  var now: Duration { clock.elapsed - origin }
  var date: Date { Terminal.simulationEpoch.addingTimeInterval(clock.elapsed.inSeconds) }
  /// Whether this is a replay of a recording.
  var isReplay: Bool { replay != nil }
  /// Where the replay departed from its recording (empty for a live run, and while it follows it).
  var divergences: [String] { replay?.divergences ?? [] }

  private init(
    console: Console, json: Bool, clock: VirtualClock, notes: [String: String], inbox: Inbox? = nil,
    transport: (Duration) -> (any BluetoothCentral & ReaderLink, ReplayingTransport?)
  ) {
    self.inbox = inbox
    self.console = console
    self.json = json
    self.screen = LiveRegion(console: console)
    self.notes = notes
    self.clock = clock
    origin = clock.elapsed
    printing = TerminalEventPrinter(console: console, origin: origin)
    (self.transport, replay) = transport(origin)
  }

  /// A clock that starts at `start`: a terminal on a virtual clock dates its events from the
  /// simulation's epoch, so the clock starts that far on (not earlier than the epoch).
  private static func clock(startingAt start: Date) -> VirtualClock {
    let clock = VirtualClock()
    clock.advance(to: max(.zero, Duration.seconds(exactly: start.timeIntervalSince(Terminal.simulationEpoch)) ?? .zero))
    return clock
  }

  /// A session on the real readers BlueZ reports (on `adapter`, or the first one), recording to
  /// `record` when given: the header holds `arguments` and `notes`.
  /// - Throws: `bluetoothUnsupported` naming what is missing (within a second), or `storeUnavailable`
  ///   when the recording cannot be created.
  static func live(
    adapter: String?, record: String?, arguments: [String], notes: [String: String] = [:], console: Console,
    json: Bool
  ) throws(ReaderError) -> BlueZSession {
    #if canImport(BlueZ)
      let file = try record.map { path throws(ReaderError) in try RecordFile(path: path) }
      let start = Date()
      let clock = clock(startingAt: start)
      var configuration = BlueZConfiguration()
      if let adapter { configuration.adapterName = adapter }
      let inbox = Inbox(clock: clock)
      let central = try BlueZCentral.open(
        configuration: configuration, scheduler: inbox, sha256: { SHA256Checksum.compute($0) })
      // What BlueZ said on opening (its objects: the radio's state) is taken in before anything records.
      inbox.deliver()
      return BlueZSession(console: console, json: json, clock: clock, notes: notes, inbox: inbox) { origin in
        let recorder = RecordingTransport(
          central: central, link: central, scheduler: clock, origin: origin, write: { file?.write($0) })
        file?.write(
          TransportRecord.header(
            TransportRecordHeader(
              startedAt: start, arguments: arguments, isPoweredOn: recorder.initialPowerState, notes: notes)
          ).line)
        return (recorder, nil)
      }
    #else
      throw ReaderError(.bluetoothUnsupported, "BlueZ is only on Linux", context: ["missing": "bluez"])
    #endif
  }

  /// A replay of a recording.
  static func replay(_ header: TransportRecordHeader, _ records: [TransportRecord], console: Console, json: Bool)
    -> BlueZSession
  {
    let clock = clock(startingAt: header.startedAt)
    return BlueZSession(console: console, json: json, clock: clock, notes: header.notes) { origin in
      let replay = ReplayingTransport(header: header, records: records, clock: clock, origin: origin)
      return (replay, replay)
    }
  }

  func makeTerminal(store: any ReaderStore, updateCatalog: (any UpdateCatalog)?) -> Terminal {
    let terminal = Terminal(
      central: transport, readerLink: transport, scheduler: clock, store: store, delegateExecutor: .scheduler,
      updateCatalog: updateCatalog)
    if json { printing.start(terminal) }
    return terminal
  }

  /// Stops printing `terminal`'s events (a command done with one terminal before it makes the next).
  func stopPrinting(_ terminal: Terminal) { printing.stop(terminal) }

  @discardableResult
  func run(until condition: () -> Bool, limit: Duration, paced: Bool, interruptible: Bool, pace: () -> Double) -> Bool {
    if let replay { return replay.run(until: condition, limit: limit) }
    guard let inbox else { return condition() }
    let (wallStart, origin) = (self.wallStart, self.origin)
    return inbox.drive(
      until: condition, end: clock.elapsed + max(limit, .zero),
      stop: { interruptible && Interrupt.requested },
      wall: { origin + (ContinuousClock.now - wallStart) },
      idle: { Thread.sleep(forTimeInterval: 0.001) })
  }

  func say(_ text: String) {
    guard !json else { return }
    screen.say("[\(SimulationSession.format(now))] \(text)")
  }

  func finish(_ outcome: CommandOutcome) -> Int32 {
    if json { console.line(outcome.json(at: now).rendered) }
    return outcome.status
  }
}

/// A recording being written: one line per record, appended as they come.
final class RecordFile: Sendable {
  private let handle: FileHandle
  private let failed = Locked(false)

  /// Creates (or empties) the file at `path`.
  /// - Throws: `storeUnavailable` naming the path when it cannot be created.
  init(path: String) throws(ReaderError) {
    guard FileManager.default.createFile(atPath: path, contents: nil),
      let handle = FileHandle(forWritingAtPath: path)
    else {
      throw ReaderError(.storeUnavailable, "the recording \(path) cannot be created", context: ["path": path])
    }
    self.handle = handle
  }

  /// Appends `line` and a newline; after a failed write, writes nothing more.
  func write(_ line: String) {
    guard !failed.withLock({ $0 }) else { return }
    do { try handle.write(contentsOf: Data((line + "\n").utf8)) } catch { failed.withLock { $0 = true } }
  }
}
