import Foundation
import ReaderCore
import Testing

import ReaderKit
@testable import readerctl

/// How a live `--bluez` session orders BlueZ's work against the terminal's, and that its recording
/// replays the same way, on a machine too busy to keep up with its timers.
struct InboxTests {
  /// A radio on the session's inbox that, once scanning, hears a reader after `first` and again after
  /// `second` (BlueZ's work, waiting in the inbox until the session delivers it).
  final class ScriptedRadio: BluetoothCentral, ReaderLink, Sendable {
    let scheduler: any Scheduler
    let times: [Duration]
    private let handler = Locked<(@Sendable (BluetoothEvent) -> Void)?>(nil)

    init(scheduler: any Scheduler, hearsAfter times: [Duration]) {
      self.scheduler = scheduler
      self.times = times
    }

    func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) {
      self.handler.withLock { $0 = handler }
    }

    var isPoweredOn: Bool { true }

    func startScan() {
      let advertisement = Advertisement(
        serialNumber: "STRM2-0001", deviceType: .stripeM2, signalStrength: -50, info: ReaderInfo())
      for time in times {
        scheduler.schedule(after: time) { [self] in handler.withLock { $0 }?(.advertisement(advertisement)) }
      }
    }

    func stopScan() {}
    func connect(serialNumber: String) {}
    func cancelConnect(serialNumber: String) {}
    func disconnect(serialNumber: String) {}
    func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {}
    func flashLEDs(serialNumber: String) {}
    func reboot(serialNumber: String) {}
    func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?) {}
    func cancelUpdate(serialNumber: String) {}
  }

  /// Scans until the terminal reports a reader, then stops the scan: what `update` and `connect` do
  /// first. `run` drives the clock until its condition holds or the limit passes.
  static func scanUntilSeen(_ terminal: Terminal, run: (() -> Bool, Duration) -> Void) throws -> [Reader] {
    let listener = LatestReaders()
    let scan = try BluetoothScanDiscoveryConfiguration.Builder().setTimeout(.seconds(30)).build()
    let discovery = terminal.discoverReaders(scan, delegate: listener) { _ in }
    run({ !listener.latest.isEmpty }, .seconds(31))
    let stopped = Locked(false)
    discovery.cancel { _ in stopped.withLock { $0 = true } }
    run({ stopped.withLock { $0 } }, .seconds(10))
    return listener.latest
  }

  @Test func whatWaitedInTheInboxAtATimersInstantLandsAfterItSoTheRecordingReplaysWithoutDiverging() throws {
    // The terminal reports what it heard every 0.5 s; the radio hears the reader at 0.2 s and, again,
    // at 0.5 s, the instant of that report. The machine is busy: the session first looks at the wall
    // clock 0.6 s in, when both are already due, and then sees it move 0.1 s per turn.
    let clock = VirtualClock()
    let inbox = Inbox(clock: clock)
    let radio = ScriptedRadio(scheduler: inbox, hearsAfter: [.milliseconds(200), .milliseconds(500)])
    let lines = Locked<[String]>([])
    let recorder = RecordingTransport(
      central: radio, link: radio, scheduler: clock, origin: .zero,
      write: { line in lines.withLock { $0.append(line) } })
    let header = TransportRecord.header(
      TransportRecordHeader(
        startedAt: Terminal.simulationEpoch, arguments: ["discover", "--bluez"], isPoweredOn: true, notes: [:]))
    let wall = Locked(Duration.milliseconds(600))
    let live = try Self.scanUntilSeen(
      Terminal(central: recorder, readerLink: recorder, scheduler: clock, store: InMemoryReaderStore())
    ) { condition, limit in
      _ = inbox.drive(
        until: condition, end: clock.elapsed + limit, stop: { false }, wall: { wall.withLock { $0 } },
        idle: { wall.withLock { $0 += .milliseconds(100) } })
    }
    #expect(live.map(\.serialNumber) == ["STRM2-0001"])

    let recording = ([header.line] + lines.withLock { $0 }).joined(separator: "\n")
    let (read, records) = try TransportRecord.read(Data(recording.utf8))
    let replayClock = VirtualClock()
    let replay = ReplayingTransport(header: read, records: records, clock: replayClock, origin: .zero)
    let replayed = try Self.scanUntilSeen(
      Terminal(central: replay, readerLink: replay, scheduler: replayClock, store: InMemoryReaderStore())
    ) { condition, limit in
      replay.run(until: condition, limit: limit)
    }
    #expect(replay.divergences == [], "\(recording)")
    #expect(replayed == live)
  }

  @Test func aRunEndingAtATimersInstantLeavesWhatWaitedForTheNextInstantOfItsOwn() {
    // A run whose end is the instant of a terminal's timer, on a machine already past that end: the
    // wall clock is held at the end, where BlueZ's work that came due with the timer must not land.
    let clock = VirtualClock()
    let inbox = Inbox(clock: clock)
    let log = Locked<[String]>([])
    clock.schedule(after: .milliseconds(500)) { log.withLock { $0.append("timer at \(clock.elapsed)") } }
    inbox.schedule(after: .milliseconds(500)) { log.withLock { $0.append("inbox at \(clock.elapsed)") } }
    let wall = Locked(Duration.milliseconds(600))
    let drive = { (condition: () -> Bool, end: Duration) in
      inbox.drive(
        until: condition, end: end, stop: { false }, wall: { wall.withLock { $0 } },
        idle: { wall.withLock { $0 += .milliseconds(100) } })
    }
    #expect(!drive({ false }, .milliseconds(500)))
    #expect(log.withLock { $0 } == ["timer at 0.5 seconds"])
    #expect(drive({ log.withLock { $0.count } == 2 }, .seconds(10)))
    #expect(log.withLock { $0 } == ["timer at 0.5 seconds", "inbox at 0.6 seconds"])
  }
}
