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
}
