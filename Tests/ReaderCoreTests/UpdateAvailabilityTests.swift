import Foundation
import Testing

@testable import ReaderCore

private let day: TimeInterval = 86_400
private let hour: TimeInterval = 3_600
private let start = Date(timeIntervalSince1970: 1_780_000_000)

private func at(days: Double) -> Date { start.addingTimeInterval(days * day) }

private func release(
  _ version: String, _ deviceType: DeviceType = .stripeM2, locations: UpdateRelease.Locations = .all,
  releasedDay: Double = 0, requiredDay: Double = 14, expiresDay: Double? = nil,
  components: UpdateComponent = [.firmware], estimate: UpdateTimeEstimate = .estimate5To15Minutes
) throws -> UpdateRelease {
  UpdateRelease(
    deviceType: deviceType, locations: locations, version: try SoftwareVersion(version),
    releasedAt: at(days: releasedDay), requiredAt: at(days: requiredDay), expiresAt: expiresDay.map(at(days:)),
    components: components, durationEstimate: estimate,
    image: FirmwareImage(
      url: URL(string: "memory:\(deviceType)-\(version)")!, size: 1,
      sha256: SHA256Checksum(bytes: [UInt8](repeating: 0, count: 32))!))
}

private func m2(_ version: String, location: String = "tml_1") throws -> InstalledSoftware {
  InstalledSoftware(
    deviceType: .stripeM2, serialNumber: "STRM2-0001", locationId: location, version: try SoftwareVersion(version))
}

@Suite struct UpdateAvailabilityTests {
  @Test func nothingNewerMeansUpToDate() throws {
    let releases = [try release("2.01.00.17"), try release("2.01.00.16")]
    #expect(try UpdateAvailability(choosingFrom: releases, for: m2("2.01.00.17"), at: at(days: 1)) == .upToDate)
    #expect(try UpdateAvailability(choosingFrom: [], for: m2("1.0"), at: at(days: 1)) == .upToDate)
  }

  @Test func newestPendingReleaseIsOfferedWithItsVersionImageAndEstimate() throws {
    let newest = try release("2.02.00.00", releasedDay: 3, requiredDay: 20, expiresDay: 90)
    let releases = [try release("2.01.00.18", releasedDay: 1, requiredDay: 15), newest, try release("2.01.00.17")]
    let answer = UpdateAvailability(choosingFrom: releases, for: try m2("2.01.00.17"), at: at(days: 5))
    let update = answer.update
    #expect(update?.deviceSoftwareVersion == "2.02.00.00")
    #expect(update?.image == newest.image)
    #expect(update?.expiresAt == at(days: 90))
    #expect(update?.isTestUpdate == false)
    #expect(answer.installedVersionSupersededAt == at(days: 1))
  }

  @Test func requiredReleaseIsNotSkippedByANewerOptionalOne() throws {
    let releases = [
      try release("2.01.00.18", releasedDay: 0, requiredDay: 2, components: .keys, estimate: .estimateLessThan1Minute),
      try release("2.01.00.19", releasedDay: 1, requiredDay: 30, components: .config, estimate: .estimate1To2Minutes),
    ]
    let update = UpdateAvailability(choosingFrom: releases, for: try m2("2.01.00.17"), at: at(days: 3)).update
    #expect(update?.deviceSoftwareVersion == "2.01.00.19")
    #expect(update?.requiredAt == at(days: 2))
    #expect(update?.isRequired(at: at(days: 3)) == true)
    #expect(update?.components == [.keys, .config])
    #expect(update?.durationEstimate == .estimate1To2Minutes)
  }

  @Test func releasesForOtherModelsOtherLocationsOrNotYetPublishedAreIgnored() throws {
    let releases = [
      try release("3.0", .wisePad3),
      try release("3.1", locations: .only(["tml_2", "tml_3"])),
      try release("3.2", releasedDay: 10),
      try release("2.5", locations: .only(["tml_1"])),
    ]
    let answer = UpdateAvailability(choosingFrom: releases, for: try m2("2.0"), at: at(days: 9))
    #expect(answer.update?.deviceSoftwareVersion == "2.5")
    #expect(answer.installedVersionSupersededAt == at(days: 0))
    let elsewhere = UpdateAvailability(choosingFrom: releases, for: try m2("2.0", location: "tml_3"), at: at(days: 10))
    #expect(elsewhere.update?.deviceSoftwareVersion == "3.2")
  }

  @Test func releaseIsPublishedExactlyAtItsReleaseDate() throws {
    let releases = [try release("2.1", releasedDay: 5)]
    #expect(try UpdateAvailability(choosingFrom: releases, for: m2("2.0"), at: at(days: 5) - 1) == .upToDate)
    #expect(try UpdateAvailability(choosingFrom: releases, for: m2("2.0"), at: at(days: 5)).update != nil)
  }

  @Test func expiredReleaseIsNotOfferedButStillSupersedesTheInstalledVersion() throws {
    let releases = [
      try release("2.1", releasedDay: 1, expiresDay: 4), try release("2.2", releasedDay: 2, requiredDay: 8),
    ]
    let before = UpdateAvailability(choosingFrom: releases, for: try m2("2.0"), at: at(days: 3))
    #expect(before.update?.requiredAt == at(days: 8), "2.1's requiredAt (day 14) is later")
    let onlyExpired = [try release("2.1", releasedDay: 1, expiresDay: 4)]
    let after = UpdateAvailability(choosingFrom: onlyExpired, for: try m2("2.0"), at: at(days: 4))
    #expect(after.update == nil)
    #expect(after.installedVersionSupersededAt == at(days: 1))
  }

  @Test func gracePeriodEndsExactlyAtTheWindowAfterSupersession() {
    let answer = UpdateAvailability(update: nil, installedVersionSupersededAt: at(days: 10))
    let window = Duration.seconds(30 * 86_400)
    #expect(answer.hasRunLatestSoftware(within: window, at: at(days: 10)))
    #expect(answer.hasRunLatestSoftware(within: window, at: at(days: 10 + 29) + 23 * hour))
    #expect(answer.hasRunLatestSoftware(within: window, at: at(days: 40) - 0.001))
    #expect(!answer.hasRunLatestSoftware(within: window, at: at(days: 40)))
    #expect(!answer.hasRunLatestSoftware(within: window, at: at(days: 40) + hour))
    #expect(UpdateAvailability.upToDate.hasRunLatestSoftware(within: .zero, at: at(days: 1000)))
  }

  @Test func gracePeriodStartsAtTheFirstNewerReleaseNotTheNewest() throws {
    let releases = [
      try release("2.3", releasedDay: 20), try release("2.2", releasedDay: 5), try release("2.1.9", releasedDay: 8),
    ]
    let answer = UpdateAvailability(choosingFrom: releases, for: try m2("2.1"), at: at(days: 36))
    #expect(answer.installedVersionSupersededAt == at(days: 5))
    #expect(answer.hasRunLatestSoftware(within: .seconds(30 * 86_400), at: at(days: 34)))
    #expect(!answer.hasRunLatestSoftware(within: .seconds(30 * 86_400), at: at(days: 36)))
  }

  @Test func firstOfTwoEqualVersionsWins() throws {
    var second = try release("2.1", requiredDay: 1)
    second.image.size = 2
    let answer = UpdateAvailability(choosingFrom: [try release("2.1.0"), second], for: try m2("2.0"), at: at(days: 0))
    #expect(answer.update?.image?.size == 1)
  }
}
