import Testing

@testable import ReaderCore

struct DurationSecondsTests {
  @Test func inSecondsIncludesTheFraction() {
    #expect(Duration.milliseconds(1500).inSeconds == 1.5)
    #expect(Duration.seconds(86_400).inSeconds == 86_400)
  }

  @Test func secondsExactlyRoundsToTheMillisecondAndRejectsNonFiniteValues() {
    #expect(Duration.seconds(exactly: 2.0004) == .milliseconds(2000))
    #expect(Duration.seconds(exactly: .nan) == nil)
    #expect(Duration.seconds(exactly: .infinity) == nil)
    #expect(Duration.seconds(exactly: 1e300) == nil)
  }
}
