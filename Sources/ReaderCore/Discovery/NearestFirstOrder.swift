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
  ///
  /// Inlined into its caller, so that the closures are too; every buffer is sized once per call and written
  /// through a pointer, with no check of capacity or uniqueness per reader.
  @inline(__always)
  mutating func order(
    count: Int, serial: (Int) -> String, signal: (Int) -> Int, isCandidate: (Int) -> Bool, into order: inout [Int]
  ) {
    if bySerial.count < count { addSightings(bySerial.count..<count, serial: serial) }
    // Taken out while they change, so that the closures below touch locals, not `self`.
    let bySerial = self.bySerial
    var (strengths, buckets, placed) = (self.strengths, self.buckets, self.placed)
    (self.strengths, self.buckets, self.placed) = ([], [], [])
    defer { (self.strengths, self.buckets, self.placed) = (strengths, buckets, placed) }
    let total = bySerial.count
    Self.resize(&order, to: total)
    Self.resize(&strengths, to: total)
    var (candidates, strongest, weakest) = (0, Int.min, Int.max)
    bySerial.withUnsafeBufferPointer { bySerial in
      order.withUnsafeMutableBufferPointer { order in
        strengths.withUnsafeMutableBufferPointer { strengths in
          for index in bySerial where isCandidate(index) {
            let strength = signal(index)
            order[candidates] = index
            strengths[candidates] = strength
            candidates += 1
            strongest = max(strongest, strength)
            weakest = min(weakest, strength)
          }
        }
      }
    }
    order.removeLast(total - candidates)
    guard candidates > 1, strongest != weakest else { return }
    let spread = strongest.subtractingReportingOverflow(weakest)
    guard !spread.overflow && spread.partialValue < Self.countingSpread else {
      // Serial order already holds; a stable sort on signal strength alone keeps it within ties.
      order = stableSorted(order) { signal($0) > signal($1) }
      return
    }
    Self.resize(&buckets, to: strongest - weakest + 2)
    Self.resize(&placed, to: candidates)
    buckets.withUnsafeMutableBufferPointer { buckets in
      buckets.update(repeating: 0)
      strengths.withUnsafeBufferPointer { strengths in
        for position in 0..<candidates { buckets[strongest - strengths[position] + 1] += 1 }
        for bucket in 1..<buckets.count { buckets[bucket] += buckets[bucket - 1] }
        // `buckets[b]` is now where the readers of bucket `b` start.
        order.withUnsafeBufferPointer { order in
          placed.withUnsafeMutableBufferPointer { placed in
            for position in 0..<candidates {
              let bucket = strongest - strengths[position]
              placed[buckets[bucket]] = order[position]
              buckets[bucket] += 1
            }
          }
        }
      }
    }
    swap(&order, &placed)
  }

  /// Makes `buffer` `count` long, keeping its storage; new places hold 0, old ones keep their values.
  @inline(__always)
  private static func resize(_ buffer: inout [Int], to count: Int) {
    if buffer.count > count {
      buffer.removeLast(buffer.count - count)
    } else if buffer.count < count {
      buffer.append(contentsOf: repeatElement(0, count: count - buffer.count))
    }
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
