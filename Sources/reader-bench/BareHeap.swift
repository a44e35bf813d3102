/// The scheduler benchmark's baseline: a plain binary min-heap of (deadline, submission, work) in a local
/// value, cancelled work marked in an array and skipped when it comes up; no lock, no handle checks. What
/// anyone would write in thirty lines, and the floor a scheduler is measured against.
struct BareHeap {
  private var items: [(deadline: Duration, id: Int, work: () -> Void)] = []
  private var cancelled: [Bool] = []
  private(set) var now = Duration.zero

  @discardableResult
  mutating func schedule(after delay: Duration, _ work: @escaping () -> Void) -> Int {
    let id = cancelled.count
    cancelled.append(false)
    items.append((now + delay, id, work))
    var child = items.count - 1
    while child > 0, precedes(child, (child - 1) / 2) {
      items.swapAt(child, (child - 1) / 2)
      child = (child - 1) / 2
    }
    return id
  }

  mutating func cancel(_ id: Int) { cancelled[id] = true }

  /// Takes the next work not cancelled out of the heap, with `now` set to its deadline.
  mutating func next() -> (() -> Void)? {
    while let top = items.first {
      items.swapAt(0, items.count - 1)
      items.removeLast()
      var parent = 0
      while true {
        let (left, right) = (2 * parent + 1, 2 * parent + 2)
        var first = parent
        if left < items.count && precedes(left, first) { first = left }
        if right < items.count && precedes(right, first) { first = right }
        if first == parent { break }
        items.swapAt(parent, first)
        parent = first
      }
      if cancelled[top.id] { continue }
      now = top.deadline
      return top.work
    }
    return nil
  }

  private func precedes(_ a: Int, _ b: Int) -> Bool {
    (items[a].deadline, items[a].id) < (items[b].deadline, items[b].id)
  }
}
