import Foundation
import ReaderCore
import TestSupport
import Testing

@testable import ReaderKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Kills a process that saves to a real file store, with SIGKILL, at random points of its saves, and
/// checks after each kill that the store holds a whole record.
@Suite struct FileReaderStoreKillTests {
  /// The probe executable built beside the test bundle.
  private static let probe: URL? = {
    let candidates = [
      URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(), Bundle.main.bundleURL,
      Bundle.main.bundleURL.deletingLastPathComponent(),
    ]
    return candidates.map { $0.appendingPathComponent("readerkit-store-probe") }.first {
      FileManager.default.isExecutableFile(atPath: $0.path)
    }
  }()

  @Test(.timeLimit(.minutes(1)))
  func killingASavingProcessAtAnyPointNeverTearsTheStore() async throws {
    let probe = try #require(Self.probe, "the readerkit-store-probe executable is not built")
    let seed = UInt64.random(in: 1...UInt64.max)
    var random = SeededRandom(seed: seed)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kill-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("sub/last-reader.json")
    let store = FileReaderStore(fileURL: file)

    var kills = 0
    var midSave = 0
    var lastSeen = 0
    for _ in 0..<60 {
      let (process, output) = try Self.start(probe, file.path)
      // Let it complete a random number of saves, then kill it wherever it is: reading, killing and
      // waiting happen on a thread of their own, so the cooperative pool is not held meanwhile.
      let target = Int(random.next() % 40)
      let lines = try await offPool {
        var lines: [Substring] = []
        var pending = ""
        while lines.filter({ $0.hasPrefix("end") }).count < target {
          let chunk = output.fileHandleForReading.availableData
          if chunk.isEmpty { break }
          pending += String(decoding: chunk, as: UTF8.self)
          lines = pending.split(separator: "\n")
        }
        kill(process.processIdentifier, SIGKILL)
        try process.waitForExit(within: .seconds(10))
        return lines.map(String.init)
      }
      try? output.fileHandleForReading.close()
      kills += 1
      if lines.last?.hasPrefix("begin") == true { midSave += 1 }

      let loaded: SavedReader?
      do {
        loaded = try store.loadLastReader()
      } catch {
        Issue.record("seed \(seed): after kill \(kills) the store is torn: \(error)")
        return
      }
      if loaded == nil && lastSeen > 0 {
        Issue.record("seed \(seed): after kill \(kills) the saved reader is gone")
        return
      }
      if let loaded {
        #expect(loaded.serialNumber.hasPrefix("STRM2-"), "seed \(seed)")
        #expect(loaded.locationId == "tml_" + loaded.serialNumber.dropFirst(6), "seed \(seed)")
        lastSeen = Int(loaded.serialNumber.dropFirst(6)) ?? 0
      }
    }
    #expect(kills == 60)
    #expect(lastSeen > 0, "seed \(seed): no save ever completed")
    let names = try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path)
    #expect(names.allSatisfy { $0 == "last-reader.json" || $0.hasPrefix("last-reader.json.tmp-") }, "\(names)")
    print("store kill loop: \(kills) kills, about \(midSave) between a save's begin and end, seed \(seed)")
  }

  private static func start(_ probe: URL, _ path: String) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = probe
    process.arguments = [path]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.standardError
    try process.runWithSignalsUnblocked()
    return (process, output)
  }
}
