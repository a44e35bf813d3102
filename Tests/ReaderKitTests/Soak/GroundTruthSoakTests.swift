import Foundation
import ReaderKit
import Testing

@testable import ReaderSoak

/// The ground-truth soak, bounded for the suite: a few seeds of a simulated day each, two stations of
/// three readers, NFC sessions, six faults an hour a station. Every rule is held against the simulated
/// world after every event and every instant (see `GroundTruthSoak`); a failure prints its seed, and
/// `reader-bench soak --seed N --days 1 --faults 6` replays and shrinks it.
@Suite struct GroundTruthSoakTests {
  static let seeds: [UInt64] = [1, 2, 3, 4]

  static func configuration(seed: UInt64, days: Double = 1) -> SoakConfiguration {
    SoakConfiguration(seed: seed, days: days, faultsPerHour: 6, wallClockLimit: .seconds(60))
  }

  @Test(.timeLimit(.minutes(2)))
  func faultsAimedAtEveryStateBreakNoRuleOfTheWorld() {
    var reached: [SoakAction.Kind: Set<SoakState>] = [:]
    var counts: [String: Int] = [:]
    for seed in Self.seeds {
      let report = GroundTruthSoak.run(Self.configuration(seed: seed))
      print(
        "soak seed \(seed): \(report.faultsStruck) faults, \(report.events) events, \(report.violationCount) violations, "
          + "\(Int(report.speedup))× real time, digest \(report.digestText)")
      for violation in report.violations.prefix(10) { Issue.record("seed \(seed): \(violation)") }
      #expect(report.violationCount == 0, "seed \(seed): reader-bench soak --seed \(seed) --days 1 --faults 6")
      for (kind, states) in report.actionsPerState { reached[kind, default: []].formUnion(states.keys) }
      counts.merge(report.counts, uniquingKeysWith: +)
    }
    // The run must have gone where it is meant to, or its silence proves little.
    for kind in SoakAction.Kind.allCases {
      let states = reached[kind] ?? []
      let wanted = kind.isNFC ? 3 : 5
      #expect(states.count >= wanted, "\(kind) struck only in \(states.map(\.rawValue).sorted())")
    }
    for state in SoakState.allCases {
      #expect(reached.values.contains { $0.contains(state) }, "no fault struck in \(state)")
    }
    for key in [
      "reconnectionsWon", "reconnectionsFailed", "installsSucceeded", "installsStarted", "launchesWithSavedReader",
      "appDeaths", "didDetectNDEFs", "didDetectTags", "completed.writeNDEF", "disconnected.bluetoothSignalLost",
    ] {
      #expect(counts[key, default: 0] > 0, "the soak never saw \(key)")
    }
    print("soak coverage:", counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
  }

  @Test(.timeLimit(.minutes(1)))
  func aFailingSeedReplaysByteForByte() {
    var configuration = Self.configuration(seed: 11, days: 0.5)
    configuration.sabotage = .loseEverySecondLinkLoss
    configuration.keepsLog = true
    let first = GroundTruthSoak.run(configuration)
    let second = GroundTruthSoak.run(configuration)
    #expect(first.violationCount > 0, "the sabotage went unnoticed")
    #expect(first.violations == second.violations)
    #expect(first.digest == second.digest)
    #expect(first.log == second.log)
    #expect(first.log.count > 100)
  }

  @Test(.timeLimit(.minutes(1)))
  func aFailureShrinksToAShortScheduleThatReplays() throws {
    var configuration = Self.configuration(seed: 12, days: 0.5)
    configuration.sabotage = .loseEveryLinkLoss
    let failing = GroundTruthSoak.run(configuration)
    let violation = try #require(failing.violations.first, "the sabotage went unnoticed")
    let shrunk = try #require(GroundTruthSoak.shrink(configuration, failing: violation, budget: 150))
    print(
      "shrunk to \(shrunk.faults) in \(shrunk.runs) runs: \(shrunk.reproduction.violations.first.map { "\($0)" } ?? "")"
    )
    #expect(shrunk.faults.count <= 3)
    #expect(shrunk.faults.count < failing.faultsScheduled)
    #expect(shrunk.reproduction.violations.contains { $0.invariant == violation.invariant })
    // The replay command's configuration gives the same run again.
    var replay = configuration
    replay.keep = Set(shrunk.faults.map(\.id))
    replay.stopAt = violation.time + .seconds(3600)
    #expect(GroundTruthSoak.run(replay).digest == shrunk.reproduction.digest)
  }

  /// Seed 15's sessions begun by a burst in the very instant the time limit goes from 20 s to 60 s:
  /// `begin()` reaches the system later in that instant, so they may have either limit.
  @Test(.timeLimit(.minutes(1)))
  func aSessionBegunAsTheTimeLimitChangesMayHaveEitherLimit() {
    var configuration = Self.configuration(seed: 15)
    configuration.keep = [196, 208]
    let report = GroundTruthSoak.run(configuration)
    #expect(report.faultsStruck == 2)
    #expect(report.counts["readWriteSessions", default: 0] + report.counts["readOnlySessions", default: 0] > 4)
    for violation in report.violations.prefix(5) { Issue.record("\(violation)") }
    #expect(report.violationCount == 0)
  }

  @Test func deltaDebuggingKeepsOnlyWhatTheFailureNeeds() {
    let (kept, tests) = DeltaDebugging.minimize(Array(0..<200)) { $0.contains(17) && $0.contains(142) }
    #expect(kept == [17, 142])
    #expect(tests < 120)
    let (none, _) = DeltaDebugging.minimize(Array(0..<10)) { _ in true }
    #expect(none.isEmpty)
  }

  @Test func theSoakDiskKeepsOnlyWhatWasFlushedAcrossAPowerLoss() throws {
    let disk = SoakDisk()
    let url = URL(fileURLWithPath: "/data/readerkit/last-reader.json")
    let store = FileReaderStore(fileURL: url, fileSystem: disk)
    let first = SavedReader(serialNumber: "STRM2-1", locationId: "tml_1")
    try store.saveLastReader(first)
    disk.powerLoss()
    #expect(try store.loadLastReader() == first)
    // A file written and renamed into place without flushing its directory is gone after a power loss.
    let descriptor = try disk.open("/data/readerkit/other.json", .createExclusive(permissions: 0o600))
    _ = try disk.write(descriptor, [UInt8]("{}".utf8), from: 0)
    try disk.close(descriptor)
    #expect(try disk.contentsOfDirectory("/data/readerkit").contains("other.json"))
    disk.powerLoss()
    #expect(try !disk.contentsOfDirectory("/data/readerkit").contains("other.json"))
    #expect(try store.loadLastReader() == first)
  }
}
