import Foundation
import Testing

@testable import ReaderCore

private let day: TimeInterval = 86_400
private let now = Date(timeIntervalSince1970: 1_780_000_000)
private let digest = SHA256Checksum(hex: String(repeating: "ab", count: 32))!

private func update(_ components: UpdateComponent, requiredIn days: Double) -> ReaderSoftwareUpdate {
  ReaderSoftwareUpdate(
    deviceSoftwareVersion: "2.01.00.18", durationEstimate: .estimate2To5Minutes, components: components,
    requiredAt: now.addingTimeInterval(days * day))
}

@Suite struct ReaderSoftwareUpdateTests {
  @Test func estimatesReadLikeTheAnchorSDKsTextAndAreOrdered() {
    #expect(ReaderSoftwareUpdate.string(from: .estimateLessThan1Minute) == "less than 1 minute")
    #expect(ReaderSoftwareUpdate.string(from: .estimate1To2Minutes) == "1-2 minutes")
    #expect(ReaderSoftwareUpdate.string(from: .estimate2To5Minutes) == "2-5 minutes")
    #expect(ReaderSoftwareUpdate.string(from: .estimate5To15Minutes) == "5-15 minutes")
    #expect(UpdateTimeEstimate.allCases.sorted() == UpdateTimeEstimate.allCases)
    #expect(UpdateTimeEstimate.estimate1To2Minutes.range == .seconds(60) ..< .seconds(120))
    let ranges = UpdateTimeEstimate.allCases.map(\.range)
    for (earlier, later) in zip(ranges, ranges.dropFirst()) { #expect(earlier.upperBound == later.lowerBound) }
  }

  @Test func optionalUntilRequiredAtThenRequired() {
    let optional = update([.firmware, .config], requiredIn: 7)
    #expect(!optional.isRequired(at: now))
    #expect(!optional.isRequired(at: now.addingTimeInterval(7 * day - 1)))
    #expect(optional.isRequired(at: now.addingTimeInterval(7 * day)))
    #expect(update(.config, requiredIn: -1).isRequired(at: now))
  }

  @Test func incrementalOnlyUpdateIsAlwaysRequiredButNotWithOtherComponents() {
    #expect(update(.incremental, requiredIn: 30).isIncrementalOnly)
    #expect(update(.incremental, requiredIn: 30).isRequired(at: now))
    #expect(!update([.incremental, .keys], requiredIn: 30).isIncrementalOnly)
    #expect(!update([.incremental, .keys], requiredIn: 30).isRequired(at: now))
  }

  @Test func expiresAtItsDateAndNeverWithoutOne() {
    var expiring = update(.keys, requiredIn: 1)
    #expect(!expiring.isExpired(at: now.addingTimeInterval(1000 * day)))
    expiring.expiresAt = now.addingTimeInterval(day)
    #expect(!expiring.isExpired(at: now.addingTimeInterval(day - 1)))
    #expect(expiring.isExpired(at: now.addingTimeInterval(day)))
  }

  @Test func componentsPersistAsNamesAndUnknownNamesAreRefused() throws {
    let components: UpdateComponent = [.keys, .firmware]
    let data = try JSONEncoder().encode(components)
    #expect(String(decoding: data, as: UTF8.self) == #"["firmware","keys"]"#)
    #expect(try JSONDecoder().decode(UpdateComponent.self, from: data) == components)
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode(UpdateComponent.self, from: Data(#"["bios"]"#.utf8))
    }
    #expect(UpdateComponent(rawValue: 0xFF) == [.incremental, .firmware, .config, .keys])
    #expect(UpdateComponent.config.rawValue == 1 << 2)
    #expect(components.description == "firmware+keys")
    #expect(UpdateComponent().description == "none")
  }

  @Test func updatePersistsWithNamesAndReadsBack() throws {
    var original = update([.firmware, .config], requiredIn: 14)
    original.isTestUpdate = true
    original.expiresAt = now.addingTimeInterval(60 * day)
    original.image = FirmwareImage(url: URL(string: "https://example.com/m2.bin")!, size: 42, sha256: digest)
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let text = String(decoding: try encoder.encode(original), as: UTF8.self)
    #expect(text.contains(#""durationEstimate":"estimate2To5Minutes""#))
    #expect(text.contains(#""components":["firmware","config"]"#))
    #expect(text.contains(#""sha256":"\#(digest.hex)""#))
    #expect(try JSONDecoder().decode(ReaderSoftwareUpdate.self, from: Data(text.utf8)) == original)
  }

  @Test func recordWithoutIsTestUpdateIsNotATestUpdate() throws {
    let json =
      #"{"deviceSoftwareVersion":"1.0","durationEstimate":"estimate1To2Minutes","components":["config"],"requiredAt":0}"#
    let decoded = try JSONDecoder().decode(ReaderSoftwareUpdate.self, from: Data(json.utf8))
    #expect(!decoded.isTestUpdate)
    #expect(decoded.image == nil && decoded.expiresAt == nil)
    #expect(decoded.components == .config)
  }

  @Test func checksumParsesEitherCaseAndPrintsLowerCase() {
    let upper = String(repeating: "0123456789ABCDEF", count: 4)
    let checksum = SHA256Checksum(hex: upper)
    #expect(checksum?.hex == upper.lowercased())
    #expect(checksum?.bytes.prefix(2) == [0x01, 0x23])
    #expect(SHA256Checksum(hex: String(upper.dropLast())) == nil)
    #expect(SHA256Checksum(hex: upper + "0") == nil)
    #expect(SHA256Checksum(hex: String(upper.dropLast()) + "g") == nil)
    #expect(SHA256Checksum(hex: "") == nil)
    #expect(SHA256Checksum(bytes: [UInt8](repeating: 1, count: 31)) == nil)
  }

  @Test func imageVerificationChecksTheSizeThenTheDigest() throws {
    let image = FirmwareImage(url: URL(string: "https://example.com/m2.bin")!, size: 3, sha256: digest)
    var hashed = 0
    let hash: (Data) -> SHA256Checksum = { _ in
      hashed += 1
      return digest
    }
    try image.verify(Data([1, 2, 3]), sha256: hash)
    #expect(hashed == 1)
    #expect(
      throws: ReaderError(
        .firmwareImageRejected, "the firmware image at https://example.com/m2.bin is 4 bytes, not 3",
        context: ["url": "https://example.com/m2.bin", "field": "size", "expected": "3", "actual": "4"])
    ) { try image.verify(Data([1, 2, 3, 4]), sha256: hash) }
    #expect(hashed == 1)
    let other = SHA256Checksum(hex: String(repeating: "cd", count: 32))!
    do {
      try image.verify(Data([1, 2, 3]), sha256: { _ in other })
      Issue.record("a digest mismatch was accepted")
    } catch {
      #expect(error.code == .firmwareImageRejected)
      #expect(error.context["field"] == "sha256")
      #expect(error.context["expected"] == digest.hex)
      #expect(error.context["actual"] == other.hex)
    }
  }

  @Test func updateErrorCodesHaveDistinctStableNames() {
    let codes: [ReaderError.Code] = [
      .readerSoftwareUpdateFailed, .readerSoftwareUpdateFailedBatteryLow, .readerSoftwareUpdateFailedInterrupted,
      .readerSoftwareUpdateFailedReaderError, .readerSoftwareUpdateFailedServerError,
      .readerSoftwareUpdateFailedExpiredUpdate, .unsupportedReaderVersion, .invalidSoftwareVersion,
      .updateCatalogInvalid, .updateCatalogUnavailable, .updateCatalogTimedOut, .firmwareImageRejected,
      .canceled, .storeCorrupt,
    ]
    #expect(Set(codes.map(\.description)).count == codes.count)
    #expect(ReaderError.Code.readerSoftwareUpdateFailedBatteryLow.description == "readerSoftwareUpdateFailedBatteryLow")
    #expect(ReaderError.Code.unsupportedReaderVersion.description == "unsupportedReaderVersion")
    #expect(ReaderError.Code.updateCatalogInvalid.description == "updateCatalogInvalid")
  }
}
