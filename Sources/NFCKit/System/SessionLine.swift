/// A first-in, first-out line of sessions with O(1) removal from anywhere: removed sessions are
/// skipped when they reach the front, and the consumed front is dropped in amortized O(1).
struct SessionLine {
  private var items: [UInt64] = []
  private var head = 0
  private var live = SessionTable<Void>()

  /// Sessions in line.
  var count: Int { live.count }

  mutating func push(_ id: UInt64) {
    items.append(id)
    live[id] = ()
  }

  /// Whether the session is in line.
  func contains(_ id: UInt64) -> Bool {
    live.contains(id)
  }

  /// Removes a session from anywhere in line; returns whether it was there.
  mutating func remove(_ id: UInt64) -> Bool {
    live.removeValue(forKey: id) != nil
  }

  /// Takes the session at the front.
  mutating func pop() -> UInt64? {
    // Nobody in line (the usual case as a session ends): nothing to skip or drop.
    guard !items.isEmpty else { return nil }
    while head < items.count {
      let id = items[head]
      head += 1
      if live.removeValue(forKey: id) != nil {
        compact()
        return id
      }
    }
    items.removeAll(keepingCapacity: true)
    head = 0
    return nil
  }

  /// Empties the line; returns the sessions that were in it, front first.
  mutating func removeAll() -> [UInt64] {
    let ids = items[head...].filter { live.contains($0) }
    items.removeAll(keepingCapacity: true)
    head = 0
    live = SessionTable()
    return ids
  }

  private mutating func compact() {
    // Dropping the consumed front only once it is most of the array keeps each pop O(1) amortized.
    if head >= 64 && head * 2 >= items.count {
      items.removeFirst(head)
      head = 0
    }
  }
}
