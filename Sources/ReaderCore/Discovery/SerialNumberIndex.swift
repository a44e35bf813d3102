/// Each serial number's place in a table of readers (the discovery machine's sightings), found as a
/// `[String: Int]` finds it (serial numbers are the same when `==` says so), at a fraction of the cost: it is
/// asked at every advertisement heard.
///
/// Every serial number is in `all`, a dictionary, which says what a serial number means: a place, given to
/// the first spelling heard of it. Each spelling is also in `slots`, an open-addressing table (linear probing,
/// filled up to three quarters) of places, hashed by a seeded multiply-and-fold over its UTF-8 bytes eight at a
/// time and compared (`==`) with the serial number at the place (`serial(_:)` of the caller), so that an
/// advertisement costs neither `Hasher`'s SipHash nor a second copy of the string. A spelling not in `slots`
/// is looked up in `all`, then added: `==` holds between strings of other bytes when they are canonically
/// equivalent (a precomposed "é" and "e" with a combining accent; the Kelvin sign "\u{212A}" and "K"), and
/// those find the place of the spelling heard first, as in a dictionary. Places are never removed: the index
/// grows with the readers heard (and their spellings), never with time.
struct SerialNumberIndex {
  /// Every serial number, spelt as first heard: the index's meaning.
  private var all: [String: Int] = [:]
  /// `tag << 32 | (place + 1)` per slot, 0 for an empty one; the tag is the hash's top 32 bits.
  private var slots: [UInt64] = []
  /// `32 - log2(slots.count)`: the tag's top bits pick a slot to start from.
  private var shift: UInt64 = 32
  /// Spellings in `slots`.
  private var hashed = 0
  /// The hash's seed: `Hasher`'s for this process, so that no serial numbers chosen in advance collide.
  private let seed: UInt64

  /// An empty index.
  init() {
    var hasher = Hasher()
    hasher.combine(0x5E71_A1 as UInt64)
    seed = UInt64(truncatingIfNeeded: hasher.finalize())
  }

  /// The number of serial numbers known.
  var count: Int { all.count }

  /// The place of `serialNumber`, if known; `serial(p)` is the serial number at place `p` (any spelling of it).
  func place(of serialNumber: String, serial: (Int) -> String) -> Int? {
    hashedPlace(of: serialNumber, serial: serial) ?? all[serialNumber]
  }

  /// The place of `serialNumber` when this spelling of it is hashed: the way nearly every advertisement
  /// finds its reader. On `nil`, `placeAfterMiss(of:orInsert:serial:)` tells.
  func hashedPlace(of serialNumber: String, serial: (Int) -> String) -> Int? {
    guard let tag = tag(of: serialNumber) else { return nil }
    return probe(serialNumber, tag: tag, serial: serial).place
  }

  /// The place of `serialNumber`, a spelling `hashedPlace(of:serial:)` did not find, after giving it place
  /// `next` if the serial number had none (`inserted`); the spelling is hashed from now on.
  mutating func placeAfterMiss(
    of serialNumber: String, orInsert next: Int, serial: (Int) -> String
  ) -> (place: Int, inserted: Bool) {
    let place: Int
    let inserted: Bool
    if let known = all[serialNumber] {
      (place, inserted) = (known, false)
    } else {
      all[serialNumber] = next
      (place, inserted) = (next, true)
    }
    // Beyond the slots' reach, or a string without contiguous UTF-8: in `all` only.
    guard place < Int(UInt32.max), let tag = tag(of: serialNumber) else { return (place, inserted) }
    if (hashed + 1) * 4 > slots.count * 3 { grow() }
    let free = probe(serialNumber, tag: tag, serial: serial).free
    slots[free] = tag << 32 | UInt64(place + 1)
    hashed += 1
    return (place, inserted)
  }

  /// The place of `serialNumber`, after giving it place `next` if it had none (`inserted`).
  mutating func place(
    of serialNumber: String, orInsert next: Int, serial: (Int) -> String
  ) -> (place: Int, inserted: Bool) {
    if let place = hashedPlace(of: serialNumber, serial: serial) { return (place, false) }
    return placeAfterMiss(of: serialNumber, orInsert: next, serial: serial)
  }

  // MARK: Slots

  /// Where `serialNumber` is in `slots` (`place`), or else the empty slot that ends its probe (`free`).
  private func probe(_ serialNumber: String, tag: UInt64, serial: (Int) -> String) -> (place: Int?, free: Int) {
    guard !slots.isEmpty else { return (nil, 0) }
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: tag >> shift)
    return slots.withUnsafeBufferPointer { slots in
      while true {
        let stored = slots[slot]
        if stored == 0 { return (nil, slot) }
        if stored >> 32 == tag {
          let place = Int(truncatingIfNeeded: stored & 0xFFFF_FFFF) - 1
          if serial(place) == serialNumber { return (place, slot) }
        }
        slot = (slot + 1) & mask
      }
    }
  }

  /// Doubles the slots (16 at first) and puts every entry back, from its tag alone.
  private mutating func grow() {
    let capacity = max(16, slots.count * 2)
    let newShift = UInt64(32 - capacity.trailingZeroBitCount)
    var grown = [UInt64](repeating: 0, count: capacity)
    for stored in slots where stored != 0 {
      var slot = Int(truncatingIfNeeded: (stored >> 32) >> newShift)
      while grown[slot] != 0 { slot = (slot + 1) & (capacity - 1) }
      grown[slot] = stored
    }
    slots = grown
    shift = newShift
  }

  // MARK: Hash

  /// The 32-bit tag of `serialNumber` (never 0); `nil` for a string without contiguous UTF-8 (a bridged one),
  /// which only `all` holds.
  private func tag(of serialNumber: String) -> UInt64? {
    let hash = serialNumber.utf8.withContiguousStorageIfAvailable { Self.hash(UnsafeRawBufferPointer($0), seed) }
    return hash.map { max($0 >> 32, 1) }
  }

  /// Multiplies and folds the high half of a 128-bit product onto its low half.
  @inline(__always)
  private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
    let product = a.multipliedFullWidth(by: b)
    return product.high ^ product.low
  }

  /// The hash of `bytes`, eight at a time (the last eight overlapping the ones before when the count is not a
  /// multiple of eight, and the count hashed first).
  static func hash(_ bytes: UnsafeRawBufferPointer, _ seed: UInt64) -> UInt64 {
    let count = bytes.count
    var hash = seed ^ UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15
    var offset = 0
    while offset + 8 <= count {
      let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
      hash = fold(hash ^ word, 0xA076_1D64_78BD_642F)
      offset += 8
    }
    if offset < count {
      var word: UInt64 = 0
      if count >= 8 {
        word = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
      } else {
        for index in 0..<count { word |= UInt64(bytes[index]) << (8 * UInt64(index)) }
      }
      hash = fold(hash ^ word, 0xE703_7ED1_A0B4_28DB)
    }
    return fold(hash ^ seed, 0x8EBC_6AF0_9C88_C6E3)
  }
}
