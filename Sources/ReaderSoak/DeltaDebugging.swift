/// Delta debugging (Zeller's ddmin): the smallest subset of a failing input that still fails, found by
/// trying its chunks and their complements, halving the chunks when neither fails.
///
/// The result is 1-minimal when the budget allows: removing any single element makes it pass.
public enum DeltaDebugging {
  /// A subset of `items` for which `fails` holds (`items` itself must fail), in `items`' order, found
  /// with at most `budget` calls of `fails`.
  public static func minimize<T>(_ items: [T], budget: Int = 500, fails: ([T]) -> Bool) -> (items: [T], tests: Int) {
    var current = items
    var granularity = 2
    var tests = 0
    func test(_ candidate: [T]) -> Bool {
      tests += 1
      return fails(candidate)
    }
    while current.count >= 2, tests < budget {
      let chunks = split(current, into: granularity)
      var reduced = false
      for chunk in chunks where tests < budget && test(chunk) {
        current = chunk
        granularity = 2
        reduced = true
        break
      }
      if !reduced && chunks.count > 2 {
        for index in chunks.indices where tests < budget {
          let complement = chunks.enumerated().filter { $0.offset != index }.flatMap(\.element)
          if test(complement) {
            current = complement
            granularity = max(granularity - 1, 2)
            reduced = true
            break
          }
        }
      }
      if !reduced {
        guard granularity < current.count else { break }
        granularity = min(current.count, granularity * 2)
      }
    }
    // A single survivor may not be needed at all.
    if current.count == 1, tests < budget, test([]) { current = [] }
    return (current, tests)
  }

  /// `items` cut into `count` chunks of nearly equal size, in order.
  static func split<T>(_ items: [T], into count: Int) -> [[T]] {
    let count = max(1, min(count, items.count))
    var chunks: [[T]] = []
    var start = 0
    for index in 0..<count {
      let end = start + (items.count - start) / (count - index)
      chunks.append(Array(items[start..<end]))
      start = end
    }
    return chunks
  }
}

/// A failing soak reduced to a short fault schedule.
public struct SoakShrink: Sendable {
  /// The faults left: the run with only these still breaks the rule.
  public var faults: [SoakFault]
  /// The rule they break.
  public var invariant: SoakViolation.Invariant
  /// How many runs the shrinking took.
  public var runs: Int
  /// The run of the shrunk schedule.
  public var reproduction: SoakReport
}

extension GroundTruthSoak {
  /// Shrinks a failing run to a short schedule that breaks the same rule as `failing`: only faults due
  /// before the violation can matter, and of those, delta debugging keeps the ones the failure needs.
  /// Each trial runs until an hour after the original violation, and stops at its first violation.
  /// Returns nil when even the whole schedule no longer fails that way.
  public static func shrink(_ configuration: SoakConfiguration, failing: SoakViolation, budget: Int = 300)
    -> SoakShrink?
  {
    var trial = configuration
    trial.stopAt = failing.time + .seconds(3600)
    trial.stopsAtFirstViolation = true
    trial.keepsLog = false
    let candidates = schedule(for: configuration).filter {
      $0.time <= failing.time && (configuration.keep?.contains($0.id) ?? true)
    }
    func fails(_ faults: [SoakFault]) -> Bool {
      var attempt = trial
      attempt.keep = Set(faults.map(\.id))
      return run(attempt).violations.contains { $0.invariant == failing.invariant }
    }
    guard fails(candidates) else { return nil }
    let (faults, tests) = DeltaDebugging.minimize(candidates, budget: budget, fails: fails)
    var replay = configuration
    replay.keep = Set(faults.map(\.id))
    replay.stopAt = trial.stopAt
    return SoakShrink(faults: faults, invariant: failing.invariant, runs: tests + 1, reproduction: run(replay))
  }
}
