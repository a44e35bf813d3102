/// The order a scan reports readers in — strongest signal first, ties by serial number — worked out in
/// linear time, so that a report costs the same per reader with ten readers as with ten thousand.
///
/// It keeps every sighting's position in serial-number order, extended by merging when new readers are
/// heard (they are few after the first seconds of a scan), and then places the readers by signal strength
/// with a stable counting sort: signal strengths are small integers (dBm), and walking the readers in
/// serial order keeps ties in serial order. A spread of signal strengths too wide for counting falls back
/// to a comparison sort. The buffers are kept from one report to the next.
struct NearestFirstOrder {
  /// Every sighting's index, ordered by serial number.
  private var bySerial: [Int] = []
  /// Counting-sort buckets, one per signal strength from the strongest down.
  private var buckets: [Int] = []
  /// The readers being placed.
  private var placed: [Int] = []
  /// The signal strength of each reader of the order being worked out, read once.
  private var strengths: [Int] = []

  /// The widest spread of signal strengths (dBm) sorted by counting; a wider one is compared instead.
  static let countingSpread = 1_024

  /// Sets `order` to the indices (below `count`) for which `isCandidate` holds, strongest `signal` first,
  /// ties by `serial`; sightings `0..<count` are numbered as they were first heard and never renumbered.
  mutating func order(
    count: Int, serial: (Int) -> String, signal: (Int) -> Int, isCandidate: (Int) -> Bool, into order: inout [Int]
  ) {
    if bySerial.count < count { addSightings(bySerial.count..<count, serial: serial) }
    order.removeAll(keepingCapacity: true)
    strengths.removeAll(keepingCapacity: true)
    var (strongest, weakest) = (Int.min, Int.max)
    for index in bySerial where isCandidate(index) {
      order.append(index)
      let strength = signal(index)
      strengths.append(strength)
      strongest = max(strongest, strength)
      weakest = min(weakest, strength)
    }
    guard order.count > 1, strongest != weakest else { return }
    let spread = strongest.subtractingReportingOverflow(weakest)
    guard !spread.overflow && spread.partialValue < Self.countingSpread else {
      // Serial order already holds; a stable sort on signal strength alone keeps it within ties.
      order = stableSorted(order) { signal($0) > signal($1) }
      return
    }
    buckets.removeAll(keepingCapacity: true)
    buckets.append(contentsOf: repeatElement(0, count: strongest - weakest + 2))
    for strength in strengths { buckets[strongest - strength + 1] += 1 }
    for bucket in 1..<buckets.count { buckets[bucket] += buckets[bucket - 1] }
    // `buckets[b]` is now where the readers of bucket `b` start.
    placed.removeAll(keepingCapacity: true)
    placed.append(contentsOf: repeatElement(0, count: order.count))
    for (index, strength) in zip(order, strengths) {
      let bucket = strongest - strength
      placed[buckets[bucket]] = index
      buckets[bucket] += 1
    }
    swap(&order, &placed)
  }

  /// Merges sightings `added` into the serial order.
  private mutating func addSightings(_ added: Range<Int>, serial: (Int) -> String) {
    let new = added.sorted { serial($0) < serial($1) }
    var merged: [Int] = []
    merged.reserveCapacity(bySerial.count + new.count)
    var (old, fresh) = (bySerial.startIndex, new.startIndex)
    while old < bySerial.endIndex && fresh < new.endIndex {
      if serial(new[fresh]) < serial(bySerial[old]) {
        merged.append(new[fresh])
        fresh += 1
      } else {
        merged.append(bySerial[old])
        old += 1
      }
    }
    merged += bySerial[old...]
    merged += new[fresh...]
    bySerial = merged
  }

  /// `elements` sorted by `precedes`, equal elements kept in their order.
  private func stableSorted(_ elements: [Int], by precedes: (Int, Int) -> Bool) -> [Int] {
    elements.enumerated().sorted {
      precedes($0.element, $1.element) || !precedes($1.element, $0.element) && $0.offset < $1.offset
    }
    .map(\.element)
  }
}
