import Testing

@testable import ReaderCore

@Suite struct NearestFirstOrderTests {
  /// The order a sort gives: strongest first, ties by serial number.
  private func sorted(_ candidates: [Int], serials: [String], signals: [Int]) -> [Int] {
    candidates.sorted { signals[$0] != signals[$1] ? signals[$0] > signals[$1] : serials[$0] < serials[$1] }
  }

  @Test(arguments: [40, 5_000])
  func givesTheOrderOfASortForReadersHeardOverTime(spread: Int) {
    for seed in UInt64(1)...30 {
      var random = SeededRandom(seed: seed)
      var order = NearestFirstOrder()
      var (serials, signals): ([String], [Int]) = ([], [])
      var result: [Int] = []
      for _ in 0..<20 {
        // New readers arrive, signals move, some readers are left out; then the order is asked for.
        for _ in 0..<Int(random.next() % 30) {
          serials.append("R\(random.next() % 10_000)-\(serials.count)")
          signals.append(0)
        }
        for index in signals.indices where random.next() % 2 == 0 {
          signals[index] = -Int(random.next() % UInt64(spread))
        }
        let left = Set(signals.indices.filter { _ in random.next() % 5 == 0 })
        order.order(
          count: serials.count, serial: { serials[$0] }, signal: { signals[$0] },
          isCandidate: { !left.contains($0) }, into: &result)
        let expected = sorted(signals.indices.filter { !left.contains($0) }, serials: serials, signals: signals)
        #expect(result == expected, "seed \(seed), spread \(spread)")
      }
    }
  }

  @Test func tiesGoToTheLowerSerialNumberWhateverTheOrderHeard() {
    var order = NearestFirstOrder()
    let serials = ["C", "A", "D", "B"]
    let signals = [-50, -50, -40, -50]
    var result: [Int] = []
    order.order(
      count: 4, serial: { serials[$0] }, signal: { signals[$0] }, isCandidate: { _ in true }, into: &result)
    #expect(result.map { serials[$0] } == ["D", "A", "B", "C"])
  }

  @Test func signalStrengthsTooFarApartForCountingAreCompared() {
    var order = NearestFirstOrder()
    let serials = ["B", "A", "C", "D"]
    let signals = [Int.max, Int.min, Int.min, 0]
    var result: [Int] = []
    order.order(
      count: 4, serial: { serials[$0] }, signal: { signals[$0] }, isCandidate: { _ in true }, into: &result)
    #expect(result.map { serials[$0] } == ["B", "D", "A", "C"])
  }
}
