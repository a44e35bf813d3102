/// The ordered queue behind both schedulers: a binary min-heap on (deadline, submission number).
///
/// The heap holds small keys; the work itself waits in a table of slots beside it, which a handle reaches
/// directly (it carries its slot), so `cancel` is O(1): it empties the slot, which is reused at once, and
/// leaves the key behind as stale, to be skipped when it reaches the top. Stale keys are never allowed to
/// outnumber live ones by much: past that the heap is rebuilt without them, in O(n), which the cancels that
/// made them pay for. So the memory held follows the work pending, however often timers are re-armed.
///
/// Removing the top moves the hole down to a leaf along the smaller children and then lets the last key
/// rise into it (one comparison per level on the way down, as in Floyd's heapsort): the last key almost
/// always belongs near the bottom.
struct WorkQueue {
  /// What the heap orders: a submission's deadline (in attoseconds, which compare inline where
  /// `Duration`'s operators are calls into the standard library) and number, and the slot holding its work.
  private struct Key {
    var deadline: Int128
    var id: UInt64
    var slot: UInt32

    /// Deadline order, then submission order.
    @inline(__always)
    func precedes(_ other: Key) -> Bool {
      deadline != other.deadline ? deadline < other.deadline : id < other.id
    }
  }

  /// The work of one pending submission, or an empty slot (`work == nil`) waiting to be reused.
  private struct Slot {
    /// The submission the slot holds or last held.
    var id: UInt64
    var work: (@Sendable () -> Void)?
  }

  /// Stale keys allowed at any heap size before the heap is rebuilt without them.
  private static let staleAllowance = 64

  private var heap: [Key] = []
  private var slots: [Slot] = []
  /// Empty slots, reused last in, first out.
  private var freeSlots: [UInt32] = []
  /// Keys in `heap` whose submission was cancelled.
  private var staleKeys = 0
  private var nextID: UInt64 = 0

  /// Work still due to run.
  var count: Int { heap.count - staleKeys }

  /// Keys held, live and stale (for tests of the bound on what cancelled work leaves behind).
  var storedKeyCount: Int { heap.count }
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
    let key = Key(deadline: deadline.attoseconds, id: id, slot: slot)
    heap.append(key)
    heap.withUnsafeMutableBufferPointer { heap in
      var hole = heap.count - 1
      while hole > 0 {
        let parent = (hole - 1) / 2
        guard key.precedes(heap[parent]) else { break }
        heap[hole] = heap[parent]
        hole = parent
      }
      heap[hole] = key
    }
    return ScheduledWork(id: id, deadline: deadline, slot: slot)
  }

  /// Drops the work if it is still pending; does nothing for work that ran or was cancelled.
  mutating func cancel(_ handle: ScheduledWork) {
    guard let slot = slot(of: handle), slots[slot].work != nil else { return }
    slots[slot].work = nil
    freeSlots.append(UInt32(slot))
    staleKeys += 1
    if staleKeys > Self.staleAllowance && staleKeys > heap.count / 2 { dropStaleKeys() }
  }

  /// The deadline of the earliest live work.
  mutating func nextDeadline() -> Duration? {
    dropStaleTop()
    return heap.first.map { Duration(attoseconds: $0.deadline) }
  }

  /// Removes and returns the earliest live work if it is due at or before `limit`.
  mutating func pop(dueBy limit: Duration) -> (deadline: Duration, work: @Sendable () -> Void)? {
    dropStaleTop()
    guard let top = heap.first, top.deadline <= limit.attoseconds else { return nil }
    removeTop()
    let slot = Int(top.slot)
    // A live key's slot holds its work. Unwrapped with `!`, not `unsafelyUnwrapped`: through that generic
    // accessor the closure was wrapped in two thunks, each allocated, for every item run.
    // Moved out of its slot, which is left empty, without a retain and release of the closure.
    let work = slots[slot].work.take()!
    freeSlots.append(top.slot)
    return (Duration(attoseconds: top.deadline), work)
  }

  /// The slot holding `handle`'s submission, if it holds it still (or held it last and is empty).
  private func slot(of handle: ScheduledWork) -> Int? {
    if let slot = handle.slot.map(Int.init) {
      return slot < slots.count && slots[slot].id == handle.id ? slot : nil
    }
    // A handle made outside a queue: look for its submission.
    return slots.firstIndex { $0.id == handle.id && $0.work != nil }
  }

  private func isStale(_ key: Key) -> Bool {
    Self.isStale(key, in: slots)
  }

  private static func isStale(_ key: Key, in slots: [Slot]) -> Bool {
    // Field by field, not through a copy of the slot: a copy retains and releases the closure it holds.
    let slot = Int(key.slot)
    return slots[slot].id != key.id || slots[slot].work == nil
  }

  private mutating func dropStaleTop() {
    while let top = heap.first, isStale(top) {
      removeTop()
      staleKeys -= 1
    }
  }

  /// Rebuilds the heap from its live keys (bottom-up, O(n)).
  private mutating func dropStaleKeys() {
    let slots = self.slots
    heap.removeAll { Self.isStale($0, in: slots) }
    staleKeys = 0
    heap.withUnsafeMutableBufferPointer { heap in
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

  private mutating func removeTop() {
    let last = heap.removeLast()
    guard !heap.isEmpty else { return }
    heap.withUnsafeMutableBufferPointer { heap in
      // Down to a leaf along the smaller children, then up again to where the last key belongs.
      var hole = 0
      while true {
        var child = 2 * hole + 1
        guard child < heap.count else { break }
        if child + 1 < heap.count && heap[child + 1].precedes(heap[child]) { child += 1 }
        heap[hole] = heap[child]
        hole = child
      }
      while hole > 0 {
        let parent = (hole - 1) / 2
        guard last.precedes(heap[parent]) else { break }
        heap[hole] = heap[parent]
        hole = parent
      }
      heap[hole] = last
    }
  }
}
