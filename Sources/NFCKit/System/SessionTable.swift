/// A map from session identifiers to values: the system keeps one entry per session begun, in each of
/// its tables, so a line of a hundred thousand sessions is mostly these tables.
///
/// Open addressing with linear probing in one power-of-two array of keys and one of values, filled up
/// to seven eighths, and removal by shifting the entries after the hole back (no tombstones, so a long
/// run of sessions leaves nothing behind). Identifiers are numbers a system hands out in order, never
/// chosen from outside, so an identifier's low bits are its slot: the sessions of a line sit side by side
/// and are walked in memory order (a multiplicative hash scattered them, and a line of a hundred thousand
/// paid a cache miss per lookup, half again the time per session of a short line). Entries are kept in
/// order of their home slot along each run (Robin Hood), so a search, and the shift after a removal, stop
/// where the run no longer concerns them. Identifiers spaced by a multiple of the capacity share a slot and
/// make runs longer, but only the system handing out that many identifiers in between spaces them so.
/// `Dictionary`'s seeded hash and its three-quarter fill are not needed, and would cost time at every
/// step and up to twice the memory. Every operation is O(1) expected; storage grows by doubling and is
/// released when the table empties.
struct SessionTable<Value> {
  /// `id + 1` per slot; 0 marks an empty slot.
  private var keys: [UInt64] = []
  private var values: [Value?] = []
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

  /// The slot holding session `id`'s entry (for tests of the layout).
  func slot(of id: UInt64) -> Int? {
    find(id)
  }

  // MARK: Slots

  /// The slot where session `id`'s probe starts: its identifier's low bits. Identifiers are handed out in
  /// order and the live ones form a moving window, so consecutive sessions sit in consecutive slots and a
  /// long line is walked through memory in order, not at random.
  @inline(__always)
  private static func home(_ id: UInt64, mask: Int) -> Int {
    Int(truncatingIfNeeded: id) & mask
  }

  /// How far the entry with stored key `key` (`id + 1`) lies past its home slot `slot`.
  @inline(__always)
  private static func distance(of key: UInt64, at slot: Int, mask: Int) -> Int {
    (slot &- home(key &- 1, mask: mask)) & mask
  }

  private func find(_ id: UInt64) -> Int? {
    guard count > 0, id != .max else { return nil }
    let (key, mask) = (id &+ 1, self.mask)
    var slot = Self.home(id, mask: mask)
    var distance = 0
    while true {
      let stored = keys[slot]
      if stored == key { return slot }
      // Entries lie in order of their home along a run, so one closer to its home than `id` would be to
      // its own means `id` is not in the run.
      if stored == 0 || Self.distance(of: stored, at: slot, mask: mask) < distance { return nil }
      slot = (slot &+ 1) & mask
      distance &+= 1
    }
  }

  private mutating func insert(_ id: UInt64, _ value: consuming Value) {
    precondition(id != .max, "session identifiers are below UInt64.max")
    if (count + 1) * 8 > keys.count * 7 { grow() }
    var moving: Value? = consume value
    let mask = self.mask
    keys.withUnsafeMutableBufferPointer { keys in
      values.withUnsafeMutableBufferPointer { values in
        Self.place(id &+ 1, &moving, keys: keys, values: values, mask: mask)
      }
    }
    count += 1
  }

  /// Puts `key` and `value` in their run: an entry further from its home than the one being placed keeps
  /// its slot, one nearer gives it up and is placed further on in turn (Robin Hood), so every run stays in
  /// order of home and a search can stop early. `value` is moved into place, never copied.
  private static func place(
    _ key: UInt64, _ value: inout Value?, keys: UnsafeMutableBufferPointer<UInt64>,
    values: UnsafeMutableBufferPointer<Value?>, mask: Int
  ) {
    var key = key
    var slot = home(key &- 1, mask: mask)
    var distance = 0
    while true {
      let stored = keys[slot]
      if stored == 0 {
        keys[slot] = key
        swap(&values[slot], &value)
        return
      }
      let storedDistance = Self.distance(of: stored, at: slot, mask: mask)
      if storedDistance < distance {
        keys[slot] = key
        key = stored
        swap(&values[slot], &value)
        distance = storedDistance
      }
      slot = (slot &+ 1) & mask
      distance &+= 1
    }
  }

  private mutating func remove(at removed: Int) {
    count -= 1
    if count == 0, keys.count > 64 {
      // Empty again after a long line: give the storage back.
      self = Self()
      return
    }
    // Entries after the hole move back one slot each, up to one that is at its home or an empty slot; the
    // removed value travels to the end of the run and is dropped there.
    let mask = self.mask
    var hole = removed
    while true {
      let next = (hole &+ 1) & mask
      let stored = keys[next]
      if stored == 0 || Self.distance(of: stored, at: next, mask: mask) == 0 { break }
      keys[hole] = stored
      values.swapAt(hole, next)
      hole = next
    }
    keys[hole] = 0
    values[hole] = nil
  }

  /// Doubles the storage and places every entry again: each value is moved, never copied, and the fill is
  /// not checked again per entry, so a line of a hundred thousand sessions pays little for the table's growth.
  private mutating func grow() {
    let capacity = max(8, keys.count * 2)
    let newMask = capacity - 1
    var newKeys = [UInt64](repeating: 0, count: capacity)
    var newValues = [Value?](repeating: nil, count: capacity)
    keys.withUnsafeBufferPointer { oldKeys in
      values.withUnsafeMutableBufferPointer { oldValues in
        newKeys.withUnsafeMutableBufferPointer { newKeys in
          newValues.withUnsafeMutableBufferPointer { newValues in
            for old in oldKeys.indices where oldKeys[old] != 0 {
              Self.place(oldKeys[old], &oldValues[old], keys: newKeys, values: newValues, mask: newMask)
            }
          }
        }
      }
    }
    keys = newKeys
    values = newValues
  }
}
