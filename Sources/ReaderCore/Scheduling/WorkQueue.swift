/// The ordered queue behind both schedulers: a binary min-heap on (deadline, submission number).
///
/// Cancelled work is dropped lazily when it reaches the top, so cancel is O(1).
struct WorkQueue {
  private struct Entry {
    let handle: ScheduledWork
    let work: @Sendable () -> Void
  }

  private var heap: [Entry] = []
  private var live: Set<UInt64> = []
  private var nextID: UInt64 = 0

  /// Work still due to run.
  var count: Int { live.count }

  mutating func push(deadline: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
    let handle = ScheduledWork(id: nextID, deadline: deadline)
    nextID += 1
    live.insert(handle.id)
    heap.append(Entry(handle: handle, work: work))
    siftUp(heap.count - 1)
    return handle
  }

  mutating func cancel(_ handle: ScheduledWork) {
    live.remove(handle.id)
  }

  /// The deadline of the earliest live work.
  mutating func nextDeadline() -> Duration? {
    dropCancelledTop()
    return heap.first?.handle.deadline
  }

  /// Removes and returns the earliest live work if it is due at or before `limit`.
  mutating func pop(dueBy limit: Duration) -> (deadline: Duration, work: @Sendable () -> Void)? {
    dropCancelledTop()
    guard let top = heap.first, top.handle.deadline <= limit else { return nil }
    removeTop()
    live.remove(top.handle.id)
    return (top.handle.deadline, top.work)
  }

  private mutating func dropCancelledTop() {
    while let top = heap.first, !live.contains(top.handle.id) {
      removeTop()
    }
  }

  private mutating func removeTop() {
    heap.swapAt(0, heap.count - 1)
    heap.removeLast()
    if !heap.isEmpty { siftDown(0) }
  }

  private func precedes(_ a: Int, _ b: Int) -> Bool {
    let (x, y) = (heap[a].handle, heap[b].handle)
    return x.deadline != y.deadline ? x.deadline < y.deadline : x.id < y.id
  }

  private mutating func siftUp(_ index: Int) {
    var child = index
    while child > 0 {
      let parent = (child - 1) / 2
      guard precedes(child, parent) else { return }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  private mutating func siftDown(_ index: Int) {
    var parent = index
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var first = parent
      if left < heap.count && precedes(left, first) { first = left }
      if right < heap.count && precedes(right, first) { first = right }
      guard first != parent else { return }
      heap.swapAt(parent, first)
      parent = first
    }
  }
}
