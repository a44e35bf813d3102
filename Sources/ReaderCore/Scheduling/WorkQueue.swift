/// The ordered queue behind both schedulers: two binary min-heaps on (deadline, submission number).
///
/// The heaps hold small keys; the work itself waits in a table of slots beside them, which a handle reaches
/// directly (it carries its slot), so `cancel` is O(1): it empties the slot, which is reused at once, and
/// leaves the key behind as stale, to be skipped when it reaches the top. Stale keys are never allowed to
/// outnumber live ones by much: past that the heaps are rebuilt without them, in O(n), which the cancels that
/// made them pay for. So the memory held follows the work pending, however often timers are re-armed.
///
/// Work due soon (within `horizon` of the last work taken) and work due later wait in separate heaps, and
/// the earliest is the earlier of their two tops: a world of readers keeps its long timers (a 24-hour
/// reboot, a 10-hour idle count) beside its advertisements, and they would otherwise deepen every push and
/// pop of the work that actually runs.
///
/// Removing a top moves the hole down to a leaf along the smaller children and then lets the last key
/// rise into it (one comparison per level on the way down, as in Floyd's heapsort): the last key almost
/// always belongs near the bottom.
struct WorkQueue {
  /// What a heap orders: a submission's deadline (in attoseconds, which compare inline where
  /// `Duration`'s operators are calls into the standard library) and number, and the slot holding its work.
  fileprivate struct Key {
    /// Never negative (`push` clamps it), so two deadlines' difference never overflows.
    var deadline: Int128
    var id: UInt64
    var slot: UInt32

    /// Deadline order, then submission order: the sign of one subtraction, the difference of the
    /// deadlines less one when this one was submitted first (so equal deadlines come out negative
    /// exactly then), with no branch on which case holds.
    @inline(__always)
    func precedes(_ other: Key) -> Bool {
      (deadline &- other.deadline &- (id < other.id ? 1 : 0)) < 0
    }
  }

  /// The work of one pending submission, or an empty slot (`work == nil`) waiting to be reused.
  private struct Slot {
    /// The submission the slot holds or last held.
    var id: UInt64
    var work: (@Sendable () -> Void)?
  }

  /// Stale keys allowed at any heap size before the heaps are rebuilt without them.
  private static let staleAllowance = 64
  /// How far past the last work taken a deadline may lie for its key to wait in `soon` (in attoseconds).
  static let horizon = Duration.seconds(60).attoseconds

  private var soon = Heap()
  private var later = Heap()
  private var slots: [Slot] = []
  /// Empty slots, reused last in, first out.
  private var freeSlots: [UInt32] = []
  /// Keys in the heaps whose submission was cancelled.
  private var staleKeys = 0
  private var nextID: UInt64 = 0
  /// The deadline of the work taken last: what "soon" is measured from.
  private var lastTaken: Int128 = 0

  /// Work still due to run.
  var count: Int { soon.keys.count + later.keys.count - staleKeys }

  /// Keys held, live and stale (for tests of the bound on what cancelled work leaves behind).
  var storedKeyCount: Int { soon.keys.count + later.keys.count }
  /// Keys held for work due beyond the horizon (for tests of the split).
  var laterKeyCount: Int { later.keys.count }
  /// Slots held, full and empty (for the same tests).
  var storedSlotCount: Int { slots.count }

  mutating func push(deadline: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
    let id = nextID
    nextID += 1
    let slot: UInt32
    if let reused = freeSlots.popLast() {
      slot = reused
      slots[Int(slot)] = Slot(id: id, work: work)
    } else {
      precondition(slots.count < Int(UInt32.max), "more pending work than a scheduler can hold")
      slot = UInt32(slots.count)
      slots.append(Slot(id: id, work: work))
    }
    let attoseconds = deadline.attoseconds
    let key = Key(deadline: attoseconds > 0 ? attoseconds : 0, id: id, slot: slot)
    if key.deadline &- lastTaken > Self.horizon { later.push(key) } else { soon.push(key) }
    return ScheduledWork(id: id, deadline: Duration(attoseconds: key.deadline), slot: slot)
  }

  /// Drops the work if it is still pending; does nothing for work that ran or was cancelled.
  mutating func cancel(_ handle: ScheduledWork) {
    guard let slot = slot(of: handle), slots[slot].work != nil else { return }
    slots[slot].work = nil
    freeSlots.append(UInt32(slot))
    staleKeys += 1
    if staleKeys > Self.staleAllowance && staleKeys > storedKeyCount / 2 { dropStaleKeys() }
  }

  /// The deadline of the earliest live work.
  mutating func nextDeadline() -> Duration? {
    earliest().map { Duration(attoseconds: $0.key.deadline) }
  }

  /// Removes and returns the earliest live work if it is due at or before `limit`.
  mutating func pop(dueBy limit: Duration) -> (deadline: Duration, work: @Sendable () -> Void)? {
    guard let (top, fromLater) = earliest(), top.deadline <= limit.attoseconds else { return nil }
    if fromLater { later.removeTop() } else { soon.removeTop() }
    lastTaken = top.deadline
    let slot = Int(top.slot)
    // A live key's slot holds its work. Unwrapped with `!`, not `unsafelyUnwrapped`: through that generic
    // accessor the closure was wrapped in two thunks, each allocated, for every item run.
    // Moved out of its slot, which is left empty, without a retain and release of the closure.
    let work = slots[slot].work.take()!
    freeSlots.append(top.slot)
    return (Duration(attoseconds: top.deadline), work)
  }

  /// The earliest live key and whether it tops `later`, once the stale keys above it are dropped.
  @inline(__always)
  private mutating func earliest() -> (key: Key, fromLater: Bool)? {
    while let top = soon.keys.first, Self.isStale(top, in: slots) {
      soon.removeTop()
      staleKeys -= 1
    }
    while let top = later.keys.first, Self.isStale(top, in: slots) {
      later.removeTop()
      staleKeys -= 1
    }
    guard let first = later.keys.first else { return soon.keys.first.map { ($0, false) } }
    guard let soonest = soon.keys.first, !first.precedes(soonest) else { return (first, true) }
    return (soonest, false)
  }

  /// The slot holding `handle`'s submission, if it holds it still (or held it last and is empty).
  private func slot(of handle: ScheduledWork) -> Int? {
    if let slot = handle.slot.map(Int.init) {
      return slot < slots.count && slots[slot].id == handle.id ? slot : nil
    }
    // A handle made outside a queue: look for its submission.
    return slots.firstIndex { $0.id == handle.id && $0.work != nil }
  }

  private static func isStale(_ key: Key, in slots: [Slot]) -> Bool {
    // Field by field, not through a copy of the slot: a copy retains and releases the closure it holds.
    let slot = Int(key.slot)
    return slots[slot].id != key.id || slots[slot].work == nil
  }

  /// Rebuilds both heaps from their live keys (bottom-up, O(n)).
  private mutating func dropStaleKeys() {
    let slots = self.slots
    soon.rebuild { !Self.isStale($0, in: slots) }
    later.rebuild { !Self.isStale($0, in: slots) }
    staleKeys = 0
  }
}

/// A binary min-heap of keys.
private struct Heap {
  typealias Key = WorkQueue.Key

  var keys: [Key] = []

  mutating func push(_ key: Key) {
    keys.append(key)
    keys.withUnsafeMutableBufferPointer { heap in Self.siftUp(key, from: heap.count &- 1, in: heap) }
  }

  /// Removes the top key (the heap is not empty).
  mutating func removeTop() {
    let last = keys.removeLast()
    guard !keys.isEmpty else { return }
    keys.withUnsafeMutableBufferPointer { heap in
      // Down to a leaf along the smaller children, then up again to where the last key belongs. While a hole
      // has two children the smaller is chosen without a branch; at most one hole, at the bottom, has one.
      let count = heap.count
      var hole = 0
      var child = 1
      while child &+ 1 < count {
        child &+= heap[child &+ 1].precedes(heap[child]) ? 1 : 0
        heap[hole] = heap[child]
        hole = child
        child = 2 &* hole &+ 1
      }
      if child < count {
        heap[hole] = heap[child]
        hole = child
      }
      Self.siftUp(last, from: hole, in: heap)
    }
  }

  /// Puts `key` in the empty place `hole` or, moving parents down into it, as far up as it belongs.
  @inline(__always)
  private static func siftUp(_ key: Key, from hole: Int, in heap: UnsafeMutableBufferPointer<Key>) {
    var hole = hole
    while hole > 0 {
      let parent = (hole &- 1) >> 1
      guard key.precedes(heap[parent]) else { break }
      heap[hole] = heap[parent]
      hole = parent
    }
    heap[hole] = key
  }

  /// Keeps the keys `isLive` accepts and restores the heap order bottom-up, in O(n).
  mutating func rebuild(keeping isLive: (Key) -> Bool) {
    keys.removeAll { !isLive($0) }
    keys.withUnsafeMutableBufferPointer { heap in
      for start in stride(from: heap.count / 2 - 1, through: 0, by: -1) {
        let key = heap[start]
        var hole = start
        while true {
          var child = 2 * hole + 1
          guard child < heap.count else { break }
          if child + 1 < heap.count && heap[child + 1].precedes(heap[child]) { child += 1 }
          guard heap[child].precedes(key) else { break }
          heap[hole] = heap[child]
          hole = child
        }
        heap[hole] = key
      }
    }
  }
}
