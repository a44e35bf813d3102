import Foundation
import FuzzHarnesses
import ReaderCore
import Testing

/// Every input kept in `Corpus/<harness>/` — the seeds the fuzzer starts from, and each input that
/// once crashed a parser — runs through its harness on every test run, so a fixed crash stays fixed.
@Suite struct FuzzCorpusTests {
  static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")

  static func inputs(_ harness: FuzzHarness) -> [URL] {
    let directory = corpus.appendingPathComponent(harness.rawValue)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.sorted().map { directory.appendingPathComponent($0) }
  }

  @Test(arguments: FuzzHarness.allCases)
  func everyKeptInputRunsThroughItsHarness(_ harness: FuzzHarness) throws {
    let inputs = Self.inputs(harness)
    #expect(inputs.count >= 3, "the corpus of \(harness) holds \(inputs.count) inputs")
    for input in inputs {
      let bytes = Array(try Data(contentsOf: input))
      do throws(FuzzViolation) {
        try harness.check(bytes)
      } catch {
        Issue.record("\(input.lastPathComponent): \(error)")
      }
    }
  }

  @Test(arguments: FuzzHarness.allCases)
  func mutatedCorpusInputsNeverCrashAHarness(_ harness: FuzzHarness) throws {
    let seed = UInt64.random(in: 1...UInt64.max)
    var random = SeededRandom(seed: seed)
    let inputs = try Self.inputs(harness).map { Array(try Data(contentsOf: $0)) }
    print("FuzzCorpusTests: \(harness) runs 2,000 mutated inputs, seed \(seed)")
    for _ in 0..<2_000 {
      guard var bytes = inputs.randomElement(using: &random) else { return }
      for _ in 0...Int(random.next() % 4) {
        let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
        switch random.next() % 4 {
        case 0 where !bytes.isEmpty: bytes[position] = UInt8(truncatingIfNeeded: random.next())
        case 1: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
        case 2 where !bytes.isEmpty: bytes.remove(at: position)
        default: bytes = Array(bytes.prefix(position))
        }
      }
      // A broken property fails this test; a crash ends the run. The seed printed above reproduces either.
      do throws(FuzzViolation) {
        try harness.check(bytes)
      } catch {
        Issue.record("seed \(seed), input \(bytes): \(error)")
        return
      }
    }
  }
}
