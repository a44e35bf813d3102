import ReaderCore
import Testing

@testable import NFCKit

/// The system's tables of sessions: a map by identifier that must agree with `Dictionary`.
@Suite struct SessionTableTests {
  @Test func randomInsertsChangesAndRemovalsAgreeWithADictionary() {
    for seed in UInt64(1)...20 {
      var random = SeededRandom(seed: seed)
      var table = SessionTable<Int>()
      var expected: [UInt64: Int] = [:]
      // Identifiers mostly in a window that moves, as sessions are begun and end, with some far away.
      var base: UInt64 = 1
      for step in 0..<4_000 {
        let id =
          random.next() % 8 == 0 ? random.next() % (UInt64.max - 1) : base + random.next() % 300
        switch random.next() % 5 {
        case 0, 1:
          table[id] = step
          expected[id] = step
        case 2:
          #expect(table.removeValue(forKey: id) == expected.removeValue(forKey: id), "seed \(seed)")
        case 3:
          if random.next() % 2 == 0 {
            table[id]? += 1
          } else {
            let changed = table.update(id) { value -> Int in
              value += 1
              return value
            }
            #expect(changed == expected[id].map { $0 + 1 }, "seed \(seed)")
          }
          expected[id]? += 1
        default:
          table[id] = nil
          expected[id] = nil
        }
        if step % 40 == 0 { base += random.next() % 50 }
        #expect(table.count == expected.count, "seed \(seed)")
        #expect(table[id] == expected[id], "seed \(seed)")
      }
      for (id, value) in expected { #expect(table[id] == value, "seed \(seed)") }
      for id in expected.keys { table[id] = nil }
      #expect(table.isEmpty, "seed \(seed)")
    }
  }

  @Test func aLongLineDrainedInOrderFindsEveryEntryAndEndsEmpty() {
    var table = SessionTable<UInt64>()
    for id in UInt64(1)...100_000 { table[id] = id * 2 }
    #expect(table.count == 100_000)
    for id in UInt64(1)...100_000 {
      guard table[id] == id * 2 else {
        Issue.record("session \(id) lost its entry")
        return
      }
      table[id] = nil
      #expect(table.contains(id) == false)
    }
    #expect(table.isEmpty)
    #expect(table[7] == nil)
  }

  @Test func consecutiveSessionsLieInConsecutiveSlotsSoALongLineIsWalkedInOrder() {
    var table = SessionTable<UInt64>()
    for id in UInt64(1)...100_000 { table[id] = id }
    var previous = table.slot(of: 1)
    for id in UInt64(2)...100_000 {
      let slot = table.slot(of: id)
      guard let before = previous, let slot, slot == before + 1 || slot == 0 else {
        Issue.record("session \(id) is in slot \(String(describing: slot)), after \(String(describing: previous))")
        return
      }
      previous = slot
    }
  }

  @Test func identifiersSpacedByAPowerOfTwoAreAllFoundAndRemoved() {
    for stride in [UInt64(2), 8, 64, 4_096, 1 << 20] {
      var random = SeededRandom(seed: stride)
      var table = SessionTable<UInt64>()
      var ids = (UInt64(0)..<3_000).map { 5 + $0 * stride }
      for id in ids { table[id] = id }
      ids.shuffle(using: &random)
      for (index, id) in ids.enumerated() {
        #expect(table.removeValue(forKey: id) == id, "stride \(stride)")
        // The entries still present are all found after each removal moved a run back.
        if index % 500 == 0 {
          #expect(ids[(index + 1)...].allSatisfy { table[$0] == $0 }, "stride \(stride), after \(index + 1) removals")
        }
      }
      #expect(table.isEmpty, "stride \(stride)")
    }
  }
}
