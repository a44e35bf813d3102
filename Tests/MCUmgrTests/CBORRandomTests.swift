import MCUmgr
import ReaderCore
import Testing

/// Seeded random values and random bytes: what encodes decodes back the same, and no input crashes
/// the decoder or makes it allocate beyond the input.
@Suite struct CBORRandomTests {
  static func value(_ random: inout SeededRandom, depth: Int = 0) -> CBORValue {
    switch random.next() % (depth > 3 ? 6 : 9) {
    case 0: return .unsigned(random.next() >> (random.next() % 64))
    case 1: return .negative(random.next() >> (random.next() % 64))
    case 2: return .bytes((0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    case 3:
      let scalars = (0..<Int(random.next() % 12)).compactMap { _ in Unicode.Scalar(UInt32(random.next() % 0x2_0000)) }
      return .text(String(String.UnicodeScalarView(scalars)))
    case 4: return .bool(random.next() % 2 == 0)
    case 5: return [.null, .undefined][Int(random.next() % 2)]
    case 6, 7: return .array((0..<Int(random.next() % 5)).map { _ in value(&random, depth: depth + 1) })
    default:
      var entries: [CBORMapEntry] = []
      for index in 0..<Int(random.next() % 5) {
        entries.append(CBORMapEntry(key: .text("k\(index)"), value: value(&random, depth: depth + 1)))
      }
      return .map(entries)
    }
  }

  @Test func randomValuesRoundTrip() throws {
    let seed = UInt64.random(in: 1...UInt64.max)
    print("CBORRandomTests.randomValuesRoundTrip seed \(seed)")
    var random = SeededRandom(seed: seed)
    for _ in 0..<3_000 {
      let value = Self.value(&random)
      let bytes = CBOREncoder.encode(value)
      #expect(try CBORDecoder().decode(bytes) == value, "seed \(seed)")
    }
  }

  @Test func randomBytesNeverCrashTheDecoder() throws {
    let seed = UInt64.random(in: 1...UInt64.max)
    print("CBORRandomTests.randomBytesNeverCrashTheDecoder seed \(seed)")
    var random = SeededRandom(seed: seed)
    var accepted = 0
    for _ in 0..<20_000 {
      let bytes = (0..<Int(random.next() % 24)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
      if let value = try? CBORDecoder().decode(bytes) {
        accepted += 1
        // Whatever is accepted re-encodes to something that decodes the same.
        #expect(try CBORDecoder().decode(CBOREncoder.encode(value)) == value, "seed \(seed): \(bytes)")
      }
    }
    #expect(accepted > 0)
  }
}
