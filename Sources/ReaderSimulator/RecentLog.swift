/// The most recent entries of a simulated world's log: a world that runs for days (thousands of
/// sessions, each leaving a few entries) keeps the last `capacity` entries in a ring, so its memory stops
/// growing once the ring is full, and appending no longer moves the whole log to a larger block.
struct RecentLog<Entry> {
  /// How many entries are kept (at least one).
  let capacity: Int
  /// The entries kept; once full, `oldest` is where the oldest lies and the next one goes.
  private var ring: [Entry] = []
  private var oldest = 0
  /// How many entries were ever appended, the ones dropped included.
  private(set) var appended = 0

  init(capacity: Int) {
    self.capacity = max(1, capacity)
  }

  /// Keeps `entry`, dropping the oldest once full. The entry is taken, not copied: the callers build it
  /// for the log alone.
  mutating func append(_ entry: consuming Entry) {
    appended += 1
    guard ring.count == capacity else {
      ring.append(entry)
      return
    }
    ring[oldest] = entry
    oldest = oldest + 1 == capacity ? 0 : oldest + 1
  }

  /// The entries kept, oldest first.
  var entries: [Entry] {
    oldest == 0 ? ring : Array(ring[oldest...]) + ring[..<oldest]
  }
}

extension RecentLog: Sendable where Entry: Sendable {}
