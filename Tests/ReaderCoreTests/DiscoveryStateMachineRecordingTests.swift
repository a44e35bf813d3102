import Testing

@testable import ReaderCore

/// What a scan running since zero reports at its first tick, after `advertisements` were heard in order.
private func firstReport(after advertisements: [Advertisement]) -> [Reader] {
  var machine = DiscoveryStateMachine()
  _ = machine.start(.bluetoothScan(timeout: nil), simulated: false, radioOn: true, now: .zero)
  for (step, advertisement) in advertisements.enumerated() {
    machine.advertisement(advertisement, now: .milliseconds(step))
  }
  for case .report(let readers) in machine.timerFired(.tick, now: DiscoveryTuning().updateInterval) {
    return readers
  }
  return []
}

private func ad(_ serialNumber: String, rssi: Int, _ info: ReaderInfo = ReaderInfo()) -> Advertisement {
  Advertisement(serialNumber: serialNumber, deviceType: .stripeM2, signalStrength: rssi, info: info)
}

/// Recording an advertisement keeps the latest one of each reader, byte for byte, however little it differs.
@Suite struct DiscoveryStateMachineRecordingTests {
  @Test func aRepeatedAdvertisementGivesOnlyItsNewSignalStrength() {
    let info = ReaderInfo(deviceSoftwareVersion: "2.1.0", batteryLevel: 0.5, isCharging: false, label: "Till 1")
    let readers = firstReport(after: [ad("A", rssi: -60, info), ad("B", rssi: -55, info), ad("A", rssi: -50, info)])
    #expect(readers.map(\.serialNumber) == ["A", "B"])
    #expect(readers.map(\.signalStrength) == [-50, -55])
    #expect(
      readers.allSatisfy { $0.label == "Till 1" && $0.batteryLevel == 0.5 && $0.deviceSoftwareVersion == "2.1.0" })
  }

  @Test func canonicallyEquivalentDetailsAreKeptAsLastHeardNotAsFirstHeard() throws {
    // `==` holds between these, so only the bytes tell which advertisement was kept.
    let first = ReaderInfo(label: "caf\u{E9}", deviceInformation: DeviceInformation(modelNumber: "\u{212A}1"))
    let latest = ReaderInfo(label: "cafe\u{301}", deviceInformation: DeviceInformation(modelNumber: "K1"))
    let reader = try #require(
      firstReport(after: [ad("\u{212A}9", rssi: -60, first), ad("K9", rssi: -50, latest)]).first)
    #expect(Array(reader.serialNumber.utf8) == Array("K9".utf8))
    #expect(Array(try #require(reader.label).utf8) == Array("cafe\u{301}".utf8))
    #expect(reader.deviceInformation.map { Array(($0.modelNumber ?? "").utf8) } == Array("K1".utf8))
    #expect(reader.signalStrength == -50)
  }

  @Test func aBatteryLevelOfMinusZeroIsKeptAsHeard() throws {
    let reader = try #require(
      firstReport(after: [
        ad("A", rssi: -60, ReaderInfo(batteryLevel: 0)), ad("A", rssi: -60, ReaderInfo(batteryLevel: -0.0)),
      ])
      .first)
    #expect(reader.batteryLevel?.sign == .minus)
  }

  @Test func detailsThatChangeAreKept() throws {
    let reader = try #require(
      firstReport(after: [
        ad("A", rssi: -60, ReaderInfo(label: "Till 1")),
        ad("A", rssi: -60, ReaderInfo(isCharging: true, label: "Till 2")),
      ]).first)
    #expect(reader.label == "Till 2" && reader.isCharging == true)
  }

  @Test func aModelThatChangesIsKeptAndReported() throws {
    func heard(_ model: DeviceType) -> Advertisement {
      Advertisement(serialNumber: "A", deviceType: model, signalStrength: -60, info: ReaderInfo())
    }
    var machine = DiscoveryStateMachine()
    _ = machine.start(.bluetoothScan(timeout: nil), simulated: false, radioOn: true, now: .zero)
    machine.advertisement(heard(.other("R1")), now: .zero)
    let interval = DiscoveryTuning().updateInterval
    #expect(
      machine.timerFired(.tick, now: interval).contains(
        .report([Reader(serialNumber: "A", deviceType: .other("R1"), signalStrength: -60)])))
    machine.advertisement(heard(.other("R2")), now: interval)
    #expect(
      machine.timerFired(.tick, now: interval * 2).contains(
        .report([Reader(serialNumber: "A", deviceType: .other("R2"), signalStrength: -60)])))
    machine.advertisement(heard(.other("R2")), now: interval * 2)
    #expect(!machine.timerFired(.tick, now: interval * 3).contains { if case .report = $0 { true } else { false } })
    machine.advertisement(heard(.chipper2X), now: interval * 3)
    #expect(
      machine.timerFired(.tick, now: interval * 4).contains(
        .report([Reader(serialNumber: "A", deviceType: .chipper2X, signalStrength: -60)])))
  }
}
