/// Wall-clock timing for the benchmarks.
enum BenchTimer {
  /// How many times each measurement runs; the fastest counts, as the others were disturbed by the machine.
  static let runs = 5

  /// The best of `runs` timed runs of `body`, in seconds, after one warm-up run.
  static func seconds(_ body: () -> Void) -> Double {
    body()
    let clock = ContinuousClock()
    var best = Double.infinity
    for _ in 0..<runs {
      let elapsed = clock.measure(body)
      best = min(best, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    return max(best, 1e-9)
  }
}
