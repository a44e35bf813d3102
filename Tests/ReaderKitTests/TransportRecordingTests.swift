import Foundation
import ReaderCore
import ReaderKit
import ReaderSimulator
import Testing

@Suite(.timeLimit(.minutes(2))) struct TransportRecordingTests {
  static let update = ReaderSoftwareUpdate(
    deviceSoftwareVersion: "2.0.0", durationEstimate: .estimate1To2Minutes, components: [.firmware, .config],
    requiredAt: Date(timeIntervalSince1970: 1_800_000_000.25))

  /// One record of every kind, with every optional field set and unset.
  static let everyRecord: [TransportRecord] = {
    let t = Duration(secondsComponent: 1811, attosecondsComponent: 368_189_515_651_700_001)
    let failure = ReaderError(
      .connectionFailed, "it \"failed\"\n", context: ["serialNumber": "S-1", "why": "ü"],
      cause: .dbus(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
    let commands: [TransportCommand] = [
      .startScan, .stopScan, .connect(serialNumber: "S-1"), .cancelConnect(serialNumber: "S-1"),
      .disconnect(serialNumber: "S-1"), .flashLEDs(serialNumber: "S-1"), .reboot(serialNumber: "S-1"),
      .installUpdate(serialNumber: "S-1", update: update, imageSize: 20_072, imageSHA256: SHA256Checksum.compute([1])),
      .installUpdate(serialNumber: "S-1", update: update, imageSize: nil, imageSHA256: nil),
      .cancelUpdate(serialNumber: "S-1"),
    ]
    let events: [TransportEvent] = [
      .central(.radioStateChanged(isPoweredOn: false)),
      .central(
        .advertisement(
          Advertisement(
            serialNumber: "S-1", deviceType: .other("ACME-R1"), signalStrength: -127,
            info: ReaderInfo(deviceSoftwareVersion: "1.0", batteryLevel: 0.42, isCharging: true, label: "front")))),
      .central(.didConnect(serialNumber: "S-1", info: ReaderInfo())),
      .central(.didFailToConnect(serialNumber: "S-1", error: failure)),
      .central(.didDisconnect(serialNumber: "S-1", reason: .bluetoothSignalLost)),
      .link(.updateProgress(serialNumber: "S-1", progress: 0.1 + 0.2)),
      .link(.updateFinished(serialNumber: "S-1", error: nil)),
      .link(
        .updateFinished(
          serialNumber: "S-1",
          error: ReaderError(.readerSoftwareUpdateFailedReaderError, "refused", cause: .smp(rc: 32, group: 1)))),
      .link(.batteryDidChange(serialNumber: "S-1", level: 0.04, isCharging: false)),
      .link(.rebootResponse(serialNumber: "S-1", error: ReaderError(.rebootFailed, "no", cause: .errno(5)))),
    ]
    let header = TransportRecordHeader(
      startedAt: Date(timeIntervalSince1970: 1_798_000_000.123456), arguments: ["connect", "S-1", "--bluez"],
      isPoweredOn: true, notes: ["store": "/tmp/x.json"])
    return [.header(header)] + commands.map { .command(at: t, $0) } + events.map { .event(at: t, $0) }
  }()

  @Test func everyRecordReadsBackAsItWasWritten() throws {
    for record in Self.everyRecord {
      let line = record.line
      #expect(!line.contains("\n"))
      #expect(try TransportRecord(line: line) == record, "\(line)")
    }
  }

  @Test func malformedLinesAreTypedErrorsNeverCrashes() throws {
    let bad = [
      "", "{", "[]", #"{"record":"event"}"#, #"{"record":"event","ns":5,"name":"didConnect"}"#,
      #"{"record":"command","t":"-1.0","name":"startScan"}"#, #"{"record":"command","t":"1e3","name":"startScan"}"#,
      #"{"record":"command","t":"1.0000000000000000001","name":"startScan"}"#, #"{"record":"teleport","t":"1.0"}"#,
      #"{"record":"command","t":"1.0","name":"launch"}"#,
      #"{"record":"event","t":"1.0","name":"updateFinished","serialNumber":"S","error":{"code":"nope","message":"","context":{}}}"#,
      String(repeating: " ", count: TransportRecord.maximumLineLength + 1),
    ]
    for line in bad {
      let error = try #require(throws: ReaderError.self) { try TransportRecord(line: line) }
      #expect(error.code == .invalidConfiguration)
    }
    // Seeded mutations of every valid line: each reads or fails with a typed error.
    var random = SystemRandomNumberGenerator()
    let seed = UInt64.random(in: 0...UInt64.max, using: &random)
    print("malformed recorded lines: seed \(seed)")
    var generator = SeededRandom(seed: seed)
    for record in Self.everyRecord {
      var bytes = Array(record.line.utf8)
      for _ in 0..<50 {
        let index = Int.random(in: 0..<bytes.count, using: &generator)
        bytes[index] = UInt8.random(in: 0...255, using: &generator)
        _ = try? TransportRecord(line: String(decoding: bytes, as: UTF8.self))
      }
    }
  }

  @Test func aLineNestedDeeperThanARecordIsRefusedBeforeItIsDecoded() throws {
    // `JSONDecoder` recurses once per level: 200,000 levels would end a small thread's stack.
    let line = #"{"record":"event","t":"1.0","info":"# + String(repeating: "[", count: 200_000)
    let error = try #require(throws: ReaderError.self) { try TransportRecord(line: line) }
    #expect(error.code == .invalidConfiguration)
    #expect(error.message.contains("deeper than 16 levels"), "\(error.message)")
    #expect(error.context["offset"] == "50")
  }

  @Test func aRecordingStartsWithItsHeaderAndItsTimesNeverGoBack() throws {
    let lines = Self.everyRecord.map(\.line)
    let (header, records) = try TransportRecord.read(Data(lines.joined(separator: "\n").utf8))
    #expect(.header(header) == Self.everyRecord[0] && records == Array(Self.everyRecord.dropFirst()))
    let headless = try #require(throws: ReaderError.self) {
      try TransportRecord.read(Data(lines.dropFirst().joined(separator: "\n").utf8))
    }
    #expect(headless.context["line"] == "1")
    let backwards = [lines[0], TransportRecord.command(at: .seconds(5000), .startScan).line, lines[1]]
    let error = try #require(throws: ReaderError.self) {
      try TransportRecord.read(Data(backwards.joined(separator: "\n").utf8))
    }
    #expect(error.context["line"] == "3" && error.message.contains("backwards"))
    let garbled = try #require(throws: ReaderError.self) {
      try TransportRecord.read(Data((lines.prefix(3) + ["not json"]).joined(separator: "\n").utf8))
    }
    #expect(garbled.context["line"] == "4")
  }

  /// Three simulated hours of a seeded world with faults, recorded between the terminal and the
  /// simulator; the transcript of the terminal's events and the app's delegate calls.
  private static func recordedRun(seed: UInt64) throws -> (transcript: String, lines: [String], origin: Duration) {
    let clock = VirtualClock()
    clock.advance(to: .seconds(3600))
    let world = SimulatedBluetoothCentral(clock: clock, seed: seed)
    for reader in SimulatedFleet.readers(count: 4, seed: seed) { world.add(reader) }
    let lines = Locked<[String]>([])
    let recorder = RecordingTransport(
      central: world, link: world, scheduler: clock, origin: clock.elapsed,
      write: { line in
        lines.withLock { $0.append(line) }
      })
    let header = TransportRecordHeader(
      startedAt: Terminal.simulationEpoch.addingTimeInterval(3600), arguments: ["test"],
      isPoweredOn: recorder.initialPowerState)
    lines.withLock { $0.append(TransportRecord.header(header).line) }
    let terminal = Terminal(
      central: recorder, readerLink: recorder, scheduler: clock, store: InMemoryReaderStore(), seed: seed,
      delegateExecutor: .scheduler)
    let transcript = try run(terminal, clock: clock) {
      SimulatedFaultSchedule.random(
        seed: seed, serialNumbers: world.readers.map(\.serialNumber), over: .seconds(2 * 3600),
        meanInterval: .seconds(240)
      ).apply(to: world)
      clock.advance(to: .seconds(4 * 3600))
    }
    return (transcript, lines.withLock { $0 }, .seconds(3600))
  }

  /// Runs the app on `terminal` (`NearestReaderConnector.transcript`); `drive` moves the clock.
  private static func run(_ terminal: Terminal, clock: VirtualClock, drive: () -> Void) throws -> String {
    try NearestReaderConnector.transcript(terminal, clock: clock, locationId: "tml_rec", drive: drive)
  }

  @Test(arguments: [1, 7, 42] as [UInt64])
  func aRecordedSimulatedRunReplaysToTheSameEventsAndDelegateCalls(seed: UInt64) throws {
    let recorded = try Self.recordedRun(seed: seed)
    let (header, records) = try TransportRecord.read(Data(recorded.lines.joined(separator: "\n").utf8))
    #expect(records.count > 50)
    let clock = VirtualClock()
    clock.advance(to: recorded.origin)
    let replay = ReplayingTransport(header: header, records: records, clock: clock, origin: recorded.origin)
    let terminal = Terminal(
      central: replay, readerLink: replay, scheduler: clock, store: InMemoryReaderStore(), seed: seed,
      delegateExecutor: .scheduler)
    let transcript = try Self.run(terminal, clock: clock) {
      replay.run(until: { false }, limit: .seconds(3 * 3600))
    }
    #expect(replay.divergences.isEmpty, "\(replay.divergences)")
    #expect(replay.isFinished)
    #expect(transcript == recorded.transcript)
  }

  @Test func aTerminalThatLeavesTheRecordingIsReportedWhereItDid() throws {
    let recorded = try Self.recordedRun(seed: 3)
    var (header, records) = try TransportRecord.read(Data(recorded.lines.joined(separator: "\n").utf8))
    // The recording says the reader's connect went to another reader.
    let index = try #require(records.firstIndex { if case .command(_, .connect) = $0 { true } else { false } })
    guard case .command(let time, _) = records[index] else { return }
    records[index] = .command(at: time, .connect(serialNumber: "NOT-THERE"))
    header.notes["edited"] = "yes"
    let clock = VirtualClock()
    clock.advance(to: recorded.origin)
    let replay = ReplayingTransport(header: header, records: records, clock: clock, origin: recorded.origin)
    let terminal = Terminal(
      central: replay, readerLink: replay, scheduler: clock, store: InMemoryReaderStore(), seed: 3,
      delegateExecutor: .scheduler)
    _ = try Self.run(terminal, clock: clock) { replay.run(until: { false }, limit: .seconds(3 * 3600)) }
    let first = try #require(replay.divergences.first)
    #expect(first.contains("the terminal gave connect(serialNumber:") && first.contains("NOT-THERE"))
  }
}
