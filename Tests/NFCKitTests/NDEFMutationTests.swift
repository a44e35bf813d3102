import Foundation
import NFCKit
import ReaderCore
import TestSupport
import Testing

/// Randomized robustness: valid messages mutated (bit flips, byte writes, truncation, extension, inserts,
/// deletions, extreme length bytes) must decode to an error or to a message that re-encodes stably.
///
/// Each case has its own seed, printed on failure; replay one with `NFCKIT_MUTATION_SEED=<seed>`.
@Suite struct NDEFMutationTests {
  static let baseSeed: UInt64 = 0x4E44_4546_0000_0000
  static let caseCount = 20_000

  /// Valid messages to mutate: random ones, chunked encodings, and the spec examples.
  static let corpus: [[UInt8]] = {
    var random = SeededRandom(seed: baseSeed)
    var corpus: [[UInt8]] = [
      SmartPosterRecordTests.example, hex("D1 01 08 54 02656E 68656C6C6F"), hex("D0 00 00"),
      hex("D1 01 0C 55 02 6578616D706C652E636F6D"),
    ]
    for index in 0..<120 {
      // Building from valid values fails only when the codec is broken: the first test that reads the
      // corpus then records the failure.
      let message = fixture(or: NDEFMessage(.empty)) { try RandomMessages.message(&random) }
      corpus.append(
        index % 4 == 0
          ? fixture(or: []) { try NDEFEncoder().encode(message, chunkSize: Int.random(in: 1...40, using: &random)) }
          : message.encoded())
    }
    return corpus
  }()

  static func mutate(_ input: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
    var bytes = input
    for _ in 0..<Int.random(in: 1...3, using: &random) {
      let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
      switch Int.random(in: 0..<8, using: &random) {
      case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
      case 1 where !bytes.isEmpty: bytes[position] = UInt8.random(in: 0...255, using: &random)
      case 2: bytes.removeLast(Int.random(in: 0...bytes.count, using: &random))
      case 3: bytes += random.bytes(Int.random(in: 1...8, using: &random))
      case 4: bytes.insert(UInt8.random(in: 0...255, using: &random), at: position)
      case 5 where !bytes.isEmpty: bytes.remove(at: position)
      case 6 where !bytes.isEmpty: bytes[position] = [0x00, 0xFF, 0x7F, 0x80].randomElement(using: &random)!
      case 7 where !bytes.isEmpty:
        // Header-ish byte: one of the flag combinations with a random TNF.
        bytes[position] =
          [0x80, 0x40, 0x20, 0x10, 0x08, 0xD0, 0xB0, 0x30, 0x50].randomElement(using: &random)!
          | UInt8.random(in: 0...7, using: &random)
      default: break
      }
    }
    return bytes
  }

  /// Checks one case; returns a failure description, or nil, and whether the input decoded.
  static func check(seed: UInt64) -> (failure: String?, decoded: Bool) {
    var random = SeededRandom(seed: seed)
    let input = mutate(corpus.randomElement(using: &random)!, &random)
    let decoded: NDEFMessage
    do {
      decoded = try NDEFDecoder().decode(input)
    } catch {
      if !(0...input.count).contains(error.offset) {
        return ("error offset \(error.offset) outside the \(input.count)-byte input: \(error)", false)
      }
      if error.message.isEmpty || error.expected.isEmpty {
        return ("error without message or expected: \(error)", false)
      }
      return (nil, false)
    }
    let payloadBytes = decoded.records.reduce(0) { $0 + $1.payload.count + $1.type.count + $1.identifier.count }
    if payloadBytes > input.count { return ("decoded \(payloadBytes) bytes of fields from \(input.count) bytes", true) }
    let encoded = decoded.encoded()
    do {
      let again = try NDEFDecoder().decode(encoded)
      if again != decoded { return ("decode(encode(decode(b))) != decode(b)", true) }
      if again.encoded() != encoded { return ("encode is not stable", true) }
    } catch {
      return ("re-encoding a decoded message does not decode: \(error)", true)
    }
    // The decoder validated the well-known payloads, so the typed views must accept them.
    for record in decoded.records {
      let typed = thrownError { () throws(NDEFError) -> Bool in
        if record.isWellKnown("T") { _ = try TextRecord(record) }
        if record.isWellKnown("U") { _ = try URIRecord(record) }
        if record.isWellKnown("Sp") { _ = try SmartPosterRecord(record) }
        return true
      }
      if let typed { return ("the decoder accepted a record its typed view rejects: \(typed)", true) }
    }
    if NDEFJSON.render(decoded).isEmpty { return ("empty JSON", true) }
    return (nil, true)
  }

  @Test func mutatedMessagesDecodeToAnErrorOrToAStableMessage() {
    let seeds: [UInt64]
    if let replay = ProcessInfo.processInfo.environment["NFCKIT_MUTATION_SEED"], let seed = UInt64(replay) {
      seeds = [seed]
    } else {
      seeds = (0..<UInt64(Self.caseCount)).map { Self.baseSeed &+ $0 }
    }
    var failures = 0
    var decodedCount = 0
    for seed in seeds {
      let (failure, decoded) = Self.check(seed: seed)
      if decoded { decodedCount += 1 }
      if let failure {
        failures += 1
        if failures <= 10 {
          Issue.record("mutation seed \(seed) (replay: NFCKIT_MUTATION_SEED=\(seed) swift test …): \(failure)")
        }
      }
    }
    #expect(failures == 0)
    if seeds.count > 1 {
      // Both outcomes must be exercised for the test to mean anything.
      #expect(decodedCount > seeds.count / 50, "only \(decodedCount) of \(seeds.count) mutated inputs decoded")
      #expect(decodedCount < seeds.count - seeds.count / 10, "\(decodedCount) of \(seeds.count) mutated inputs decoded")
    }
  }

  @Test func randomBytesNeverCrashTheDecoder() {
    var random = SeededRandom(seed: Self.baseSeed ^ 0xFF)
    for _ in 0..<5_000 {
      var bytes = random.bytes(Int.random(in: 0...64, using: &random))
      if !bytes.isEmpty, Bool.random(using: &random) { bytes[0] = 0xD0 | (bytes[0] & 0x3F) }
      if let error = decodeError(bytes) { #expect((0...bytes.count).contains(error.offset)) }
    }
  }
}
