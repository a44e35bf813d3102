import Testing

@testable import ReaderCore

/// A table of serial numbers used as the discovery machine uses it: the place of each serial number heard
/// holds its latest spelling.
private struct Table {
  var index = SerialNumberIndex()
  var serials: [String] = []

  /// Records `serial` as an advertisement does; returns its place and whether it is new.
  mutating func hear(_ serial: String) -> (place: Int, inserted: Bool) {
    let found = serials.withUnsafeBufferPointer { serials in
      index.place(of: serial, orInsert: serials.count) { serials[$0] }
    }
    if found.inserted { serials.append(serial) } else { serials[found.place] = serial }
    return found
  }

  func place(of serial: String) -> Int? {
    serials.withUnsafeBufferPointer { serials in index.place(of: serial) { serials[$0] } }
  }
}

@Suite struct SerialNumberIndexTests {
  @Test func aSerialNumberKeepsThePlaceItWasFirstGivenAndNewOnesTakeTheNext() {
    var table = Table()
    #expect(table.hear("STRM26123456789") == (0, true))
    #expect(table.hear("CHB204909005") == (1, true))
    #expect(table.hear("STRM26123456789") == (0, false))
    #expect(table.hear("") == (2, true))
    #expect(table.hear("") == (2, false))
    #expect(table.place(of: "CHB204909005") == 1)
    #expect(table.place(of: "CHB20490900") == nil)
    #expect(table.index.count == 3)
  }

  @Test func canonicallyEquivalentSpellingsShareAPlaceAsInADictionary() {
    var table = Table()
    // The Kelvin sign is `==` to "K": first heard spelt either way, the other spelling finds the same place.
    #expect(table.hear("\u{212A}-100") == (0, true))
    #expect(table.hear("K-100") == (0, false))
    #expect(table.hear("K-200") == (1, true))
    #expect(table.hear("\u{212A}-200") == (1, false))
    #expect(table.place(of: "\u{212A}-100") == 0 && table.place(of: "K-200") == 1)
    #expect(table.hear("caf\u{E9}") == (2, true))
    #expect(table.hear("cafe\u{301}") == (2, false))
    #expect(table.hear("cafe") == (3, true))
    #expect(["K-100": 0, "\u{212A}-200": 1]["\u{212A}-100"] == 0, "the meaning it keeps: `Dictionary`'s")
  }

  @Test func everyPlaceIsFoundAfterTheTableGrewManyTimes() {
    var table = Table()
    let serials = (0..<50_000).map { "STRM2\($0 * 7_919)" + String(repeating: "x", count: $0 % 23) }
    for (place, serial) in serials.enumerated() { #expect(table.hear(serial) == (place, true)) }
    var misplaced = 0
    for (place, serial) in serials.enumerated() where table.place(of: serial) != place { misplaced += 1 }
    #expect(misplaced == 0)
    #expect(table.place(of: "STRM2-1") == nil)
  }

  @Test func randomSpellingsGetTheSamePlacesAsInADictionary() {
    let seed = UInt64.random(in: 1...UInt64.max)
    print("SerialNumberIndexTests: random spellings, seed \(seed)")
    var random = SeededRandom(seed: seed)
    let pieces = ["A", "b", "7", "K", "\u{212A}", "e", "e\u{301}", "\u{E9}", "-", "\u{0}", "\u{7F}", "\u{80}", "ü"]
    var table = Table()
    var reference: [String: Int] = [:]
    for step in 0..<20_000 {
      let length = Int(random.next() % 20)
      let serial = (0..<length).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
      let known = reference[serial]
      let expected = known ?? reference.count
      reference[serial] = expected
      let found = table.hear(serial)
      #expect(found == (expected, known == nil), "seed \(seed), step \(step): \(serial.debugDescription)")
      let probe = String(serial.reversed())
      #expect(table.place(of: probe) == reference[probe], "seed \(seed), step \(step): \(probe.debugDescription)")
    }
    #expect(table.index.count == reference.count)
  }

  @Test func aByteMoreOrLessIsAnotherHashAtEveryLength() {
    let hash = { (text: String) in Array(text.utf8).withUnsafeBytes { SerialNumberIndex.hash($0, 42) } }
    // Every length around the eight-byte words, of the same byte and of zero bytes (the count is hashed too).
    let hashes =
      (0...40).map { hash(String(repeating: "a", count: $0)) }
      + (1...40).map { hash(String(repeating: "\u{0}", count: $0)) }
    #expect(Set(hashes).count == hashes.count)
    #expect(hash("STRM26123456789") != hash("STRM26123456798"))
  }
}
