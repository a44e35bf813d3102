import Foundation
import ReaderKit
import Testing

@testable import readerctl

/// The install progress as shown: the ETA from the estimate and the pace, and the bar that fits its line.
@Suite(.timeLimit(.minutes(1)))
struct UpdateProgressTests {
  private func update(_ estimate: UpdateTimeEstimate = .estimate1To2Minutes) -> ReaderSoftwareUpdate {
    ReaderSoftwareUpdate(
      deviceSoftwareVersion: "2.03.00.00", durationEstimate: estimate, components: [.firmware, .config],
      requiredAt: Terminal.simulationEpoch)
  }

  @Test(arguments: UpdateTimeEstimate.allCases)
  func beforeAnyProgressTheTimeLeftIsTheMiddleOfTheEstimate(estimate: UpdateTimeEstimate) {
    let progress = UpdateProgress(update: update(estimate), startedAt: .seconds(100))
    let range = estimate.range
    #expect(progress.remaining == (range.lowerBound + range.upperBound) / 2)
  }

  @Test func theTimeLeftMovesFromTheEstimateToTheReadersPaceAndEndsAtZero() {
    // The reader takes 60 s for an install estimated at 1-2 minutes (90 s in the middle).
    var progress = UpdateProgress(update: update(), startedAt: .seconds(10))
    var previousError = Double.infinity
    for step in 1...9 {
      let done = Double(step) / 10
      progress.report(done, at: .seconds(10) + .seconds(60) * done)
      let truth = 60 * (1 - done)
      let error = abs(progress.remaining.inSeconds - truth)
      #expect(error < previousError, "closer to the truth at \(done): \(progress.remaining) against \(truth) s")
      previousError = error
    }
    #expect(previousError < 1)
    progress.report(1, at: .seconds(70))
    #expect(progress.remaining == .zero)
    #expect(progress.percent == 100)
  }

  @Test func aSlowerReaderGetsALongerETAThanTheEstimateAlone() {
    var slow = UpdateProgress(update: update(), startedAt: .zero)
    slow.report(0.5, at: .seconds(150))  // on course for 300 s
    #expect(slow.remaining > .seconds(45), "\(slow.remaining)")
    #expect(slow.remaining < .seconds(150))
  }

  @Test func progressOutsideZeroToOneIsClamped() {
    var progress = UpdateProgress(update: update(), startedAt: .zero)
    progress.report(-3, at: .seconds(1))
    #expect(progress.percent == 0)
    progress.report(7, at: .seconds(2))
    #expect(progress.percent == 100 && progress.remaining == .zero)
    progress.report(.nan, at: .seconds(3))
    #expect(progress.percent == 100)
  }

  @Test func theBarFitsEveryWidthAndDropsTheLeastUsefulPartsFirst() {
    var progress = UpdateProgress(update: update(), startedAt: .zero)
    progress.report(0.4, at: .seconds(24))
    for width in 0...200 {
      let line = progress.line(width: width)
      #expect(line.count <= width, "width \(width): \(line)")
    }
    // 24 s for 40 %: (0.6 × 90 s + 0.4 × 60 s) × 0.6 = 46.8 s left.
    #expect(progress.line(width: 120) == "  Installing 2.03.00.00  [############..................]   40 %  ETA 0:47")
    #expect(progress.line(width: 50) == "  2.03.00.00  [######...........]   40 %  ETA 0:47")
    #expect(progress.line(width: 35) == "  [#####.........]   40 %  ETA 0:47")
    #expect(progress.line(width: 30) == "  [#######............]   40 %")
    #expect(progress.line(width: 10) == "   40 %")
    #expect(progress.line(width: 4) == "   …")
  }

  @Test func aFullBarIsFullAndAnEmptyOneEmpty() {
    var progress = UpdateProgress(update: update(), startedAt: .zero)
    let bar = { (line: String) in line.split(separator: "[")[1].split(separator: "]")[0] }
    #expect(bar(progress.line(width: 80)).allSatisfy { $0 == "." })
    progress.report(1, at: .seconds(60))
    let full = progress.line(width: 80)
    #expect(bar(full).allSatisfy { $0 == "#" }, "\(full)")
    #expect(full.hasSuffix("100 %  ETA 0:00"))
  }

  @Test func clockTimesRoundToTheSecond() {
    #expect(UpdateProgress.clock(.zero) == "0:00")
    #expect(UpdateProgress.clock(.milliseconds(40_600)) == "0:41")
    #expect(UpdateProgress.clock(.seconds(725)) == "12:05")
    #expect(UpdateProgress.clock(.seconds(3723)) == "1:02:03")
    #expect(UpdateProgress.clock(.seconds(-5)) == "0:00")
  }

  @Test func catalogAndUpdateErrorsMapToTheirExitStatuses() {
    let file = ["url": "file:///srv/manifest.json"]
    let http = ["url": "http://127.0.0.1:1/manifest.json"]
    let cases: [(ReaderError, Int32)] = [
      (ReaderError(.updateCatalogInvalid, "x"), 65), (ReaderError(.firmwareImageRejected, "x"), 65),
      (ReaderError(.updateCatalogUnavailable, "x", context: file), 66),
      (ReaderError(.updateCatalogUnavailable, "x", context: http), 69),
      (ReaderError(.updateCatalogTimedOut, "x"), 75), (ReaderError(.readerSoftwareUpdateFailedBatteryLow, "x"), 75),
      (ReaderError(.readerSoftwareUpdateFailedInterrupted, "x"), 75),
      (ReaderError(.readerSoftwareUpdateFailedServerError, "x", context: ["cause": "firmwareImageRejected"]), 65),
      (ReaderError(.readerSoftwareUpdateFailedServerError, "x", context: ["cause": "updateCatalogTimedOut"]), 75),
      (
        ReaderError(
          .readerSoftwareUpdateFailedServerError, "x",
          context: file.merging(["cause": "updateCatalogUnavailable"]) { $1 }),
        66
      ),
      (ReaderError(.readerSoftwareUpdateFailedServerError, "x"), 1),
      (ReaderError(.readerSoftwareUpdateFailedReaderError, "x"), 1),
    ]
    for (error, status) in cases {
      #expect(ExitStatus.status(for: error) == status, "\(error)")
    }
  }
}
