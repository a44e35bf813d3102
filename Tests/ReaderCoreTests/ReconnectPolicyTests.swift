import Testing

@testable import ReaderCore

@Suite struct ReconnectPolicyTests {
  @Test func defaultsMatchTheDocumentation() {
    let policy = ReconnectPolicy.default
    #expect(policy.deadline == .seconds(60))
    #expect(policy.initialDelay == .seconds(1))
    #expect(policy.maximumDelay == .seconds(8))
    #expect(policy.attemptTimeout == .seconds(10))
    #expect(policy.jitter == 0.5)
    #expect(policy == ReconnectPolicy())
  }

  @Test func delayDoublesAfterEachFailedAttemptUpToTheMaximum() {
    let policy = ReconnectPolicy(jitter: 0)
    let delays = (0..<7).map { policy.delay(afterAttempt: $0, unit: 0.5) }
    #expect(delays == [1, 2, 4, 8, 8, 8, 8].map { Duration.seconds($0) })
  }

  @Test func aMaximumBetweenPowersOfTwoCapsTheDelayExactly() {
    let policy = ReconnectPolicy(initialDelay: .milliseconds(300), maximumDelay: .seconds(1), jitter: 0)
    let delays = (0..<4).map { policy.delay(afterAttempt: $0, unit: 0) }
    #expect(delays == [.milliseconds(300), .milliseconds(600), .seconds(1), .seconds(1)])
  }

  @Test func anInitialDelayAboveTheMaximumIsCapped() {
    let policy = ReconnectPolicy(initialDelay: .seconds(20), maximumDelay: .seconds(5), jitter: 0)
    #expect(policy.delay(afterAttempt: 0, unit: 0.3) == .seconds(5))
  }

  @Test(arguments: [0.0, 0.25, 0.5, 1.0])
  func jitterSpreadsTheDelayWithinItsBounds(jitter: Double) {
    let policy = ReconnectPolicy(jitter: jitter)
    for attempt in 0..<6 {
      let base = ReconnectPolicy(jitter: 0).delay(afterAttempt: attempt, unit: 0)
      #expect(policy.delay(afterAttempt: attempt, unit: 0) == base * (1 - jitter))
      #expect(policy.delay(afterAttempt: attempt, unit: 0.5) == base)
      var random = SeededRandom(seed: UInt64(attempt))
      for _ in 0..<200 {
        let delay = policy.delay(afterAttempt: attempt, unit: random.nextUnit())
        #expect(delay >= base * (1 - jitter) && delay <= base * (1 + jitter), "attempt \(attempt): \(delay)")
      }
    }
  }

  @Test func theUnitDrawIsClampedToItsRange() {
    let policy = ReconnectPolicy.default
    #expect(policy.delay(afterAttempt: 0, unit: -3) == .milliseconds(500))
    #expect(policy.delay(afterAttempt: 0, unit: 7) == .milliseconds(1500))
  }

  @Test func jitterIsClampedToZeroThroughOne() {
    #expect(ReconnectPolicy(jitter: -1).jitter == 0)
    #expect(ReconnectPolicy(jitter: 4).jitter == 1)
  }

  @Test func aJitterSetOutOfRangeAfterCreationNeverGivesANegativeDelay() {
    var policy = ReconnectPolicy.default
    policy.jitter = 3
    #expect(policy.delay(afterAttempt: 0, unit: 0) == .zero)
    #expect(policy.delay(afterAttempt: 0, unit: 1) == .seconds(2))
    policy.jitter = .nan
    #expect(policy.delay(afterAttempt: 0, unit: 0) == .seconds(1))
  }

  @Test(arguments: [30, 31, 63, 64, 1_000, Int.max])
  func hugeAttemptNumbersStayAtTheMaximum(attempt: Int) {
    let policy = ReconnectPolicy(jitter: 0)
    #expect(policy.delay(afterAttempt: attempt, unit: 0.5) == .seconds(8))
  }

  @Test func hugeDelaysAreCappedInsteadOfOverflowing() {
    // 2^62 s is exact in a Double, so the jitter factor's conversion cannot blur the comparison.
    let huge = Duration.seconds(Int64(1) << 62)
    let policy = ReconnectPolicy(initialDelay: huge, maximumDelay: huge, jitter: 0)
    for attempt in [0, 1, 5, 40, Int.max] {
      #expect(policy.delay(afterAttempt: attempt, unit: 0.5) == huge, "attempt \(attempt)")
    }
    let wide = ReconnectPolicy(initialDelay: .seconds(1 << 40), maximumDelay: huge, jitter: 0)
    #expect(wide.delay(afterAttempt: 30, unit: 0) == huge)
  }

  @Test func aZeroInitialDelayRetriesAtOnce() {
    let policy = ReconnectPolicy(initialDelay: .zero, jitter: 0.5)
    #expect(policy.delay(afterAttempt: 0, unit: 0.9) == .zero)
    #expect(policy.delay(afterAttempt: 50, unit: 0.9) == .zero)
  }
}
