import Foundation
import NFCKit
import PCSCKit
import ReaderCore
import ReaderSimulator
import Synchronization
import Testing

/// A run recorded beside a radio plays back on the virtual clock through the same session code with the
/// same events: a run on hardware becomes a test on the simulator.
@Suite struct NFCRadioRecordingTests {
  /// A read-only session and a read-write one on `system`, the way an app would run them.
  private static func sessions(on system: NFCReaderSystem, clock: VirtualClock) -> (TagDelegate, ReadDelegate) {
    let reader = ReadDelegate()
    NFCNDEFReaderSession(delegate: reader, queue: nil, invalidateAfterFirstRead: false, system: system).begin()
    let writer = TagDelegate()
    writer.onTags.withLock {
      $0 = { session, tags in
        session.connect(to: tags[0]) { _ in
          tags[0].writeNDEF(PCSCHarness.poster) { _ in session.invalidate() }
        }
      }
    }
    clock.schedule(after: .seconds(3)) {
      NFCNDEFReaderSession(delegate: writer, queue: nil, invalidateAfterFirstRead: false, system: system).begin()
    }
    return (writer, reader)
  }

  /// The events of a PC/SC run on the scripted service, and its recording.
  private static func recordedPCSCRun() -> (events: [NFCReaderEvent], lines: [String]) {
    let clock = VirtualClock()
    let service = SimulatedPCSCService(clock: clock)
    let radio = PCSCNFCRadio(
      service: service, lock: MemorySessionLock(), configuration: PCSCHarness.configuration(timeout: .seconds(2)),
      scheduler: clock)
    let lines = Box<String>()
    let recorder = RecordingNFCRadio(wrapping: radio, scheduler: clock) { lines.put($0) }
    let system = NFCReaderSystem(radio: recorder, scheduler: clock)
    let events = Box<NFCReaderEvent>()
    system.addEventObserver { events.put($0) }
    service.plug(PCSCHarness.reader)
    let delegates = sessions(on: system, clock: clock)
    var refusing = SimulatedType4Tag(message: PCSCHarness.hello.encoded())
    refusing.refusals[0xB0] = 0x6A86
    clock.schedule(after: .milliseconds(200)) { [refusing] in service.present(refusing, in: PCSCHarness.reader) }
    clock.schedule(after: .milliseconds(600)) {
      service.present(SimulatedType2Tag.ntag213(message: PCSCHarness.hello.encoded()), in: PCSCHarness.reader)
    }
    clock.schedule(after: .milliseconds(3_500)) {
      service.present(SimulatedType4Tag(message: []), in: PCSCHarness.reader)
    }
    clock.advance(by: .seconds(10))
    withExtendedLifetime(delegates) {}
    return (events.all, lines.all)
  }

  @Test func aPCSCRunReplaysWithTheSameEventsAtTheSameTimes() throws {
    let (recorded, lines) = Self.recordedPCSCRun()
    #expect(recorded.contains { $0.error?.cause == .statusWord(0x6A86) }, "the refusing tag's status word")
    #expect(recorded.contains { if case .didDetectNDEFs = $0.kind { true } else { false } })
    #expect(recorded.filter { $0.name == "didInvalidateWithError" }.count == 2)

    let clock = VirtualClock()
    let radio = ReplayingNFCRadio(records: try NFCRadioRecord.parse(lines.joined(separator: "\n")), clock: clock)
    let system = NFCReaderSystem(radio: radio, scheduler: clock)
    let replayed = Box<NFCReaderEvent>()
    system.addEventObserver { replayed.put($0) }
    let delegates = Self.sessions(on: system, clock: clock)
    clock.advance(by: .seconds(10))
    withExtendedLifetime(delegates) {}
    #expect(radio.divergences == [])
    #expect(radio.commandsLeft == 0)
    #expect(replayed.all.map(\.name) == recorded.map(\.name))
    #expect(replayed.all.map(\.time) == recorded.map(\.time))
    #expect(replayed.all.map(\.error) == recorded.map(\.error))
    #expect(radio.policy == NFCSystemPolicy(sessionTimeout: .seconds(2)))
  }

  @Test func aReplayThatAsksOtherwiseSaysWhere() throws {
    let (_, lines) = Self.recordedPCSCRun()
    let clock = VirtualClock()
    let radio = ReplayingNFCRadio(records: try NFCRadioRecord.parse(lines.joined(separator: "\n")), clock: clock)
    let system = NFCReaderSystem(radio: radio, scheduler: clock)
    // Only the read-write session: its commands are not the recorded read-only session's.
    let writer = TagDelegate()
    NFCNDEFReaderSession(delegate: writer, queue: nil, invalidateAfterFirstRead: false, system: system).begin()
    clock.advance(by: .seconds(10))
    #expect(!radio.divergences.isEmpty)
  }

  @Test func everyLineKindRoundTripsThroughJSON() throws {
    let round = NFCRadioRequestID(session: 2, sequence: 1)
    let request = NFCRadioRequestID(session: 2, sequence: 7)
    let tag = NFCRadioTagID(3)
    let failures: [NFCRadioFailure] = [
      .unsupported, .radioOff, .busy, .terminated, .tagLost, .notNDEFFormatted, .notWritable, .capacityExceeded,
      .updateFailed, .tagResponse(detail: "SW 6A82"),
      .detailed(.tagLost, message: "gone", cause: .pcsc(0x8010_0069), context: ["call": "SCardTransmit"]),
      .detailed(.tagResponse(detail: "x"), message: nil, cause: .statusWord(0x6A82), context: [:]),
      .detailed(.busy, message: nil, cause: .errno(11), context: [:]),
      .detailed(.terminated, message: nil, cause: .dbus(name: "a.b", message: "c"), context: [:]),
      .detailed(.radioOff, message: nil, cause: .smp(rc: 3, group: 8), context: [:]),
      .detailed(.radioOff, message: nil, cause: .httpStatus(503), context: [:]),
      .detailed(
        .detailed(.busy, message: "in", cause: .other("why"), context: ["a": "b"]), message: "out", cause: nil,
        context: [:]),
    ]
    var entries: [NFCRadioRecord.Entry] = [
      .policy(NFCSystemPolicy(sessionTimeout: nil, whenBusy: .refuse)),
      .policy(NFCSystemPolicy(sessionTimeout: .milliseconds(60_500))), .readingAvailable(false), .note("stop"),
      .command(.startPolling(round)), .command(.stopPolling(round)), .command(.connect(tag, request)),
      .command(.queryNDEFStatus(tag, request)), .command(.readNDEF(tag, request)),
      .command(.writeNDEF([0, 1, 0xFE, 0xFF], tag, request)), .command(.writeLock(tag, request)),
      .command(.presentSheet("Hold \"it\" near")), .command(.updateSheet("é")), .command(.dismissSheet(nil)),
      .command(.dismissSheet("no")), .event(.pollingStarted(round)),
      .event(.tagsDetected(round, [tag, NFCRadioTagID(4)])),
      .event(.tagRemoved(round, tag)), .event(.userCanceled(round)), .event(.terminated),
      .event(.response(request, .connected)), .event(.response(request, .written)), .event(.response(request, .locked)),
      .event(.response(request, .read([]))), .event(.response(request, .read([0xD1, 0x00]))),
      .event(.response(request, .status(NFCRadioTagStatus(isNDEFFormatted: true, isWritable: false, capacity: 137)))),
    ]
    entries += failures.map { .event(.response(request, .failed($0))) }
    entries += failures.map { .event(.pollingFailed(round, $0)) }
    let records = entries.enumerated().map {
      NFCRadioRecord(time: .microseconds(Int64($0.offset) * 1_250_001), $0.element)
    }
    let text = records.map(\.jsonLine).joined(separator: "\n")
    let parsed = try NFCRadioRecord.parse(text)
    #expect(parsed.count == records.count)
    for (read, written) in zip(parsed, records) { #expect(read == written, "\(written.jsonLine)") }
    #expect(records[1].jsonLine.hasPrefix("{\"t\":1.250001,\"policy\":"))
  }

  @Test func aLineThatIsNotARecordingLineIsNamed() {
    let good = NFCRadioRecord(time: .seconds(1), .note("x")).jsonLine
    let cases: [(String, String)] = [
      ("nonsense", "line 2: not a JSON object: `null` was expected (at byte 1)"),
      ("[1]", "line 2: not a JSON object"),
      ("{\"note\":\"x\"}", "line 2: no time `t` in seconds"),
      ("{\"t\":-1,\"note\":\"x\"}", "line 2: no time `t` in seconds"),
      ("{\"t\":1,\"command\":\"fly\"}", "line 2: unknown command `fly`"),
      ("{\"t\":1,\"command\":\"readNDEF\",\"tag\":1,\"request\":\"7\"}", "line 2: `request` is not session.sequence"),
      (
        "{\"t\":1,\"command\":\"writeNDEF\",\"tag\":1,\"request\":\"1.2\",\"bytes\":\"xyz\"}",
        "line 2: bytes are not hex text of at most 64 KiB"
      ),
      (
        "{\"t\":1,\"event\":\"response\",\"request\":\"1.2\",\"response\":{\"failed\":{\"failure\":\"meltdown\"}}}",
        "line 2: unknown failure `meltdown`"
      ),
      ("{\"t\":1}", "line 2: neither a policy, a command, an event nor a note"),
      (
        "{\"t\":1,\"note\":" + String(repeating: "[", count: 100_000),
        "line 2: arrays and objects nest deeper than 16 levels (at byte 29)"
      ),
    ]
    for (line, message) in cases {
      do {
        _ = try NFCRadioRecord.parse(good + "\n" + line)
        Issue.record("`\(line)` was read")
      } catch {
        #expect(error.description == message, "\(line)")
      }
    }
  }

  @Test func mutatedRecordingsNeverCrashTheReader() {
    let seed = UInt64.random(in: 1...UInt64.max)
    print("NFCRadioRecordingTests.mutatedRecordingsNeverCrashTheReader seed \(seed)")
    var random = SeededRandom(seed: seed)
    let text = Array(Self.recordedPCSCRun().lines.joined(separator: "\n").utf8)
    let syntax = Array("{}[]\":,0.1e9-".utf8)
    for _ in 0..<300 {
      var bytes = text
      for _ in 0..<(1 + random.next() % 8) {
        let position = Int(random.next() % UInt64(bytes.count))
        switch random.next() % 3 {
        case 0: bytes[position] = UInt8(truncatingIfNeeded: random.next())
        case 1: bytes.remove(at: position)
        default: bytes.insert(syntax[Int(random.next() % UInt64(syntax.count))], at: position)
        }
      }
      guard let records = try? NFCRadioRecord.parse(String(decoding: bytes, as: UTF8.self)) else { continue }
      // What parses replays without a crash.
      let clock = VirtualClock()
      let system = NFCReaderSystem(radio: ReplayingNFCRadio(records: records, clock: clock), scheduler: clock)
      NFCNDEFReaderSession(invalidateAfterFirstRead: false, system: system).begin()
      clock.advance(by: .seconds(20))
    }
  }
}
