/// A map from session identifiers to values: the system keeps one entry per session begun, in each of
/// its tables, so a line of a hundred thousand sessions is mostly these tables.
///
/// Open addressing with linear probing in one power-of-two array of keys and one of values, filled up
/// to seven eighths, and removal by shifting the entries after the hole back (no tombstones, so a long
/// run of sessions leaves nothing behind). Identifiers are numbers a system hands out, never chosen
/// from outside, so a multiplicative hash spreads them; `Dictionary`'s seeded hash and its three-quarter
/// fill are not needed, and would cost time at every step and up to twice the memory. Every
/// operation is O(1) expected; storage grows by doubling and is released when the table empties.
struct SessionTable<Value> {
  /// `id + 1` per slot; 0 marks an empty slot.
  private var keys: [UInt64] = []
  private var values: [Value?] = []
  /// `64 - log2(capacity)`: the hash's top bits pick the home slot.
  private var shift: UInt64 = 64
  /// How many entries the table holds.
  private(set) var count = 0

  /// An empty table.
  init() {}

  /// Whether the table holds nothing.
  var isEmpty: Bool { count == 0 }

  private var mask: Int { keys.count - 1 }

  /// The value of session `id`; setting `nil` removes it. To change a value in place, use `update`.
  subscript(id: UInt64) -> Value? {
    get {
      guard let slot = find(id) else { return nil }
      return values[slot]
    }
    set {
      if let slot = find(id) {
        if let newValue { values[slot] = newValue } else { remove(at: slot) }
      } else if let newValue {
        insert(id, newValue)
      }
    }
  }

  /// Changes the value of session `id` in place and returns what `body` returns; `nil`, without
  /// calling `body`, when the session has no entry. A plain call rather than a `_modify` accessor:
  /// an accessor's coroutine frame is allocated on the heap at every use, and this runs at every step.
  mutating func update<Result>(_ id: UInt64, _ body: (inout Value) -> Result) -> Result? {
    guard let slot = find(id) else { return nil }
    // Changed where it lies in the storage: neither copied nor moved out and back.
    return body(&values[slot]!)
  }

  /// Adds the entry of session `id`, which has none (the caller has checked): the table is not searched
  /// for it first, and `value` is moved in.
  mutating func insertNew(_ id: UInt64, _ value: consuming Value) {
    assert(find(id) == nil, "session \(id) has an entry already")
    insert(id, value)
  }

  /// Whether session `id` has an entry.
  func contains(_ id: UInt64) -> Bool {
    find(id) != nil
  }

  /// Removes the entry of session `id`; returns its value, if there was one.
  @discardableResult
  mutating func removeValue(forKey id: UInt64) -> Value? {
    guard let slot = find(id) else { return nil }
    let value = values[slot]
    remove(at: slot)
    return value
  }

  // MARK: Slots

  private func home(_ id: UInt64) -> Int { Self.home(id, shift: shift) }

  /// The slot where session `id`'s probe starts in a table whose `shift` keeps the hash's top bits.
  private static func home(_ id: UInt64, shift: UInt64) -> Int {
    Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> shift)
  }

  private func find(_ id: UInt64) -> Int? {
    guard count > 0, id != .max else { return nil }
    let key = id &+ 1
    var slot = home(id)
    while true {
      let stored = keys[slot]
      if stored == key { return slot }
      if stored == 0 { return nil }
      slot = (slot &+ 1) & mask
    }
  }

  private mutating func insert(_ id: UInt64, _ value: consuming Value) {
    precondition(id != .max, "session identifiers are below UInt64.max")
    if (count + 1) * 8 > keys.count * 7 { grow() }
    var slot = home(id)
    while keys[slot] != 0 { slot = (slot &+ 1) & mask }
    keys[slot] = id &+ 1
    values[slot] = value
    count += 1
  }

  private mutating func remove(at removed: Int) {
    count -= 1
    if count == 0, keys.count > 64 {
      // Empty again after a long line: give the storage back.
      self = Self()
      return
    }
    var hole = removed
    keys[hole] = 0
    values[hole] = nil
    var next = hole
    while true {
      next = (next &+ 1) & mask
      let stored = keys[next]
      if stored == 0 { return }
      // The entry at `next` may fill the hole unless its home lies cyclically after the hole.
      let fromHome = (next &- home(stored &- 1)) & mask
      if fromHome >= (next &- hole) & mask {
        keys[hole] = stored
        keys[next] = 0
        values.swapAt(hole, next)
        hole = next
      }
    }
  }

  /// Doubles the storage and moves every entry to its slot there: each value is swapped into place
  /// (moved, never copied) and the fill is not checked again per entry, so a line of a hundred
  /// thousand sessions pays little for the table's growth.
  private mutating func grow() {
    let capacity = max(8, keys.count * 2)
    let newShift = UInt64(64 - capacity.trailingZeroBitCount)
    let newMask = capacity - 1
    var newKeys = [UInt64](repeating: 0, count: capacity)
    var newValues = [Value?](repeating: nil, count: capacity)
    keys.withUnsafeBufferPointer { oldKeys in
      values.withUnsafeMutableBufferPointer { oldValues in
        newKeys.withUnsafeMutableBufferPointer { newKeys in
          newValues.withUnsafeMutableBufferPointer { newValues in
            for old in oldKeys.indices where oldKeys[old] != 0 {
              let key = oldKeys[old]
              var slot = Self.home(key &- 1, shift: newShift)
              while newKeys[slot] != 0 { slot = (slot &+ 1) & newMask }
              newKeys[slot] = key
              swap(&newValues[slot], &oldValues[old])
            }
          }
        }
      }
    }
    keys = newKeys
    values = newValues
    shift = newShift
  }
}
