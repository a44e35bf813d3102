import ReaderCore
import ReaderKit
import ReaderSimulator
import Testing

@Suite struct TerminalDeterminismTests {
  /// Three simulated hours of a seeded world: connect, random faults for every reader, an app reboot.
  private static func transcript(seed: UInt64) throws -> String {
    let (terminal, world) = Terminal.simulated(seed: seed, readers: 4)
    let clock = world.clock
    let transcript = try NearestReaderConnector.transcript(terminal, clock: clock, locationId: "tml_det") {
      SimulatedFaultSchedule.random(
        seed: seed, serialNumbers: world.readers.map(\.serialNumber), over: .seconds(2 * 3600),
        meanInterval: .seconds(240)
      ).apply(to: world)
      clock.advance(to: .seconds(3 * 3600))
    }
    let worldLog = world.worldEvents.map(\.description)
    return ([transcript, "-- world"] + worldLog).joined(separator: "\n")
  }

  @Test func sameSeedAndScriptGiveAByteIdenticalEventLog() throws {
    for seed: UInt64 in [1, 42, 2024] {
      let first = try Self.transcript(seed: seed)
      let second = try Self.transcript(seed: seed)
      #expect(Array(first.utf8) == Array(second.utf8), "seed \(seed)")
      #expect(first.contains("didConnect"), "seed \(seed)")
      #expect(first.contains("didStartReconnect"), "seed \(seed)")
      #expect(first.split(separator: "\n").count > 100, "seed \(seed)")
    }
  }

  @Test func differentSeedsGiveDifferentRuns() throws {
    let transcripts = Set(try (1...5).map { try Self.transcript(seed: UInt64($0)) })
    #expect(transcripts.count == 5)
  }

  @Test func sameSeedGivesTheSameFaultSchedule() {
    let serials = ["STRM2-1", "WPC32-2"]
    let schedule = SimulatedFaultSchedule.random(seed: 9, serialNumbers: serials, over: .seconds(36_000))
    #expect(schedule == SimulatedFaultSchedule.random(seed: 9, serialNumbers: serials, over: .seconds(36_000)))
    #expect(schedule != SimulatedFaultSchedule.random(seed: 10, serialNumbers: serials, over: .seconds(36_000)))
  }
}
