import Testing

@testable import ReaderCore

@Suite struct BatteryStatusTests {
  @Test(arguments: [
    (0.0, BatteryStatus.critical), (0.05, .critical), (0.0501, .low), (0.15, .low), (0.20, .low),
    (0.2001, .nominal), (0.5, .nominal), (1.0, .nominal),
  ])
  func levelsMapToTheDocumentedBands(level: Double, status: BatteryStatus) {
    #expect(BatteryStatus(level: level) == status)
  }

  @Test func levelsOutsideZeroToOneAreClamped() {
    #expect(BatteryStatus(level: -0.3) == .critical)
    #expect(BatteryStatus(level: 7) == .nominal)
  }

  @Test func theWarningLevelLiesInsideTheLowBand() {
    #expect(BatteryStatus.criticalThreshold < BatteryStatus.warningThreshold)
    #expect(BatteryStatus.warningThreshold < BatteryStatus.lowThreshold)
    #expect(BatteryStatus(level: BatteryStatus.warningThreshold) == .low)
  }

  @Test func aReaderWithoutALevelHasAnUnknownStatus() {
    var reader = Reader(serialNumber: "STRM2-0001", deviceType: .stripeM2)
    #expect(reader.batteryStatus == .unknown)
    reader.batteryLevel = 0.04
    #expect(reader.batteryStatus == .critical)
    reader.batteryLevel = 0.9
    #expect(reader.batteryStatus == .nominal)
  }

  @Test func descriptionIsTheRawName() {
    #expect("\(BatteryStatus.critical)" == "critical")
    #expect(BatteryStatus.unknown.description == "unknown")
  }
}
