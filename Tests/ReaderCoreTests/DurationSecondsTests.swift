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

  @Test(arguments: [
    (Duration.seconds(6), "6 seconds"),
    (Duration.seconds(1), "1 second"),
    (Duration.milliseconds(1500), "1.5 seconds"),
    (Duration.milliseconds(250), "0.25 seconds"),
    (Duration.seconds(1532.5539999999999), "1532.554 seconds"),
    (Duration.microseconds(400), "0 seconds"),
    (Duration.milliseconds(-2050), "-2.05 seconds"),
  ])
  func formattedSecondsRoundsToTheMillisecondWithoutTrailingZeros(duration: Duration, text: String) {
    #expect(duration.formattedSeconds == text)
  }

  @Test(arguments: [
    (Duration.seconds(6), "6"), (Duration.seconds(1), "1"), (Duration.milliseconds(1500), "1.5"),
    (Duration.seconds(1532.5539999999999), "1532.554"), (Duration.microseconds(400), "0"),
    (Duration.milliseconds(-2050), "-2.05"), (Duration.seconds(86_400), "86400"),
  ])
  func contextSecondsIsAPlainNumberThatReadsBackAsTheDuration(duration: Duration, text: String) {
    #expect(duration.contextSeconds == text)
    #expect(Double(duration.contextSeconds) == (duration.inSeconds * 1000).rounded() / 1000)
  }

  @Test func contextSecondsHoldsDurationsBeyondInt64Seconds() {
    let huge = Duration.seconds(Int64.max) * 4
    #expect(Double(huge.contextSeconds).map { $0 > 3e19 } == true, "\(huge.contextSeconds)")
  }
}
