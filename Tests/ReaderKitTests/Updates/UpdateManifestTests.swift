import Foundation
import ReaderCore
import Testing

@testable import ReaderKit

private let manifestURL = URL(string: "https://updates.example.com/readers/manifest.json")!

private func parse(_ data: Data, maximumSize: Int = UpdateManifest.maximumSize) throws(ReaderError) -> UpdateManifest {
  try UpdateManifest.parse(data, url: manifestURL, imageSchemes: ["http", "https"], maximumSize: maximumSize)
}

/// Expects the manifest to be refused as `updateCatalogInvalid` naming `field` and `value` (`nil`: no
/// value, as for a missing field), and returns the error for further checks.
@discardableResult
private func expectInvalid(
  _ data: Data, field: String?, value: String?, reasonContains reason: String? = nil,
  sourceLocation: SourceLocation = #_sourceLocation
) -> ReaderError? {
  do {
    let manifest = try parse(data)
    Issue.record("accepted: \(manifest)", sourceLocation: sourceLocation)
    return nil
  } catch {
    #expect(error.code == .updateCatalogInvalid, sourceLocation: sourceLocation)
    #expect(error.context["field"] == field, "\(error)", sourceLocation: sourceLocation)
    #expect(error.context["value"] == value, "\(error)", sourceLocation: sourceLocation)
    #expect(error.context["url"] == manifestURL.absoluteString, sourceLocation: sourceLocation)
    if let reason {
      #expect(error.context["reason"]?.contains(reason) == true, "\(error)", sourceLocation: sourceLocation)
    }
    return error
  }
}

private func invalid(
  field: String, value: String?, reasonContains reason: String? = nil,
  sourceLocation: SourceLocation = #_sourceLocation,
  _ edit: (inout ManifestFixture) -> Void
) {
  var fixture = ManifestFixture()
  edit(&fixture)
  expectInvalid(fixture.data, field: field, value: value, reasonContains: reason, sourceLocation: sourceLocation)
}

@Suite struct UpdateManifestTests {
  // MARK: A valid manifest

  @Test func validManifestParsesEveryField() throws {
    let manifest = try parse(ManifestFixture().data)
    #expect(manifest.releases.count == 2)
    let config = manifest.releases[0]
    #expect(config.deviceType == .stripeM2)
    #expect(config.locations == .only(["tml_1", "tml_2"]))
    #expect(config.version == (try SoftwareVersion("2.01.00.18")))
    #expect(config.releasedAt == march(1))
    #expect(config.requiredAt == march(15))
    #expect(config.expiresAt == Date(timeIntervalSince1970: 1_780_264_800.5))  // 2026-05-31T22:00:00.5Z
    #expect(config.components == .config)
    #expect(config.durationEstimate == .estimate2To5Minutes)
    #expect(config.image.url.absoluteString == "https://updates.example.com/readers/images/m2-2.01.00.18.bin")
    #expect(config.image.size == ManifestFixture.imageBytes("2.01.00.18").count)
    #expect(config.image.sha256 == SHA256Checksum.compute(ManifestFixture.imageBytes("2.01.00.18")))
    #expect(manifest.releases[1].locations == .all)
    #expect(manifest.releases[1].components == [.firmware, .keys])
  }

  @Test func absoluteImageURLsAndNullExpiryAndUnknownFieldsAreAccepted() throws {
    var fixture = ManifestFixture()
    fixture.root["publisher"] = "ReaderKit tests"
    fixture.editRelease(0) {
      $0["expiresAt"] = NSNull()
      $0["notes"] = ["anything": true]
    }
    fixture.editImage(1) { $0["url"] = "http://cdn.example.com/m2.bin" }
    let manifest = try parse(fixture.data)
    #expect(manifest.releases[0].expiresAt == nil)
    #expect(manifest.releases[1].image.url.absoluteString == "http://cdn.example.com/m2.bin")
  }

  @Test func emptyReleaseListIsAValidManifestWithNothingToOffer() throws {
    var fixture = ManifestFixture()
    fixture.root["releases"] = [Any]()
    #expect(try parse(fixture.data).releases.isEmpty)
  }

  // MARK: Not JSON, too large, too deep

  @Test func bytesThatAreNotJSONNameTheOffsetOfTheError() {
    let error = expectInvalid(Data(#"{"manifestVersion": 1,, "releases": []}"#.utf8), field: nil, value: nil)
    #expect(error?.context["offset"] == "22")
    #expect(expectInvalid(Data(), field: nil, value: nil)?.context["offset"] == "0")
    #expect(expectInvalid(Data("{\"a\":".utf8), field: nil, value: nil)?.context["offset"] == "5")
  }

  @Test func aUTF8ByteOrderMarkIsReadAsWhiteSpaceKeepingTheOffsets() throws {
    let manifest = try parse(Data([0xEF, 0xBB, 0xBF]) + ManifestFixture().data)
    #expect(manifest.releases.count == 2)
    let error = expectInvalid(
      Data([0xEF, 0xBB, 0xBF]) + Data(#"{"manifestVersion": 1,,}"#.utf8), field: nil, value: nil)
    #expect(error?.context["offset"] == "\(3 + 22)")
  }

  @Test func theFirstFaultInReadingOrderIsReportedAtItsByte() {
    let garbage = Data((String(repeating: "[", count: 10) + "%PDF-1.7 binary").utf8)
    let error = expectInvalid(garbage, field: nil, value: nil, reasonContains: "is not valid JSON")
    #expect(error?.context["offset"] == "10")
    // Brackets past the nesting limit are refused at the first one, before the reader looks further.
    let deepGarbage = Data((String(repeating: "[", count: 40) + "%PDF-1.7 binary").utf8)
    let deepError = expectInvalid(
      deepGarbage, field: nil, value: nil, reasonContains: "nests arrays and objects deeper than 16 levels")
    #expect(deepError?.context["offset"] == "16")
    // Valid JSON nested too deep is reported as such.
    let deep = Data((String(repeating: "[", count: 40) + String(repeating: "]", count: 40)).utf8)
    expectInvalid(deep, field: nil, value: nil, reasonContains: "nests arrays and objects deeper than 16 levels")
  }

  @Test func invalidUTF8IsRefused() {
    let bytes = Data(#"{"manifestVersion": 1, "releases": [], "x": ""#.utf8) + Data([0xC3, 0x28]) + Data(#""}"#.utf8)
    expectInvalid(bytes, field: nil, value: nil)
  }

  @Test func manifestOverTheSizeBoundIsRefusedNamingTheLimit() {
    let data = ManifestFixture().data
    do {
      _ = try parse(data, maximumSize: data.count - 1)
      Issue.record("an oversized manifest was accepted")
    } catch {
      #expect(error.code == .updateCatalogInvalid)
      #expect(error.context["limit"] == "\(data.count - 1)")
    }
    #expect(throws: Never.self) { try parse(data, maximumSize: data.count) }
  }

  @Test func deepNestingIsRefusedWithoutRecursingIntoIt() {
    let deep = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
    let error = expectInvalid(Data(#"{"manifestVersion":1,"releases":[],"x":\#(deep)}"#.utf8), field: nil, value: nil)
    #expect(error?.context["offset"] == "\(39 + 15)")
    // Brackets inside strings do not count.
    var fixture = ManifestFixture()
    fixture.root["note"] = String(repeating: "[{", count: 100)
    #expect(throws: Never.self) { try parse(fixture.data) }
  }

  // MARK: The top level

  @Test func rootThatIsNotAnObjectIsRefused() {
    expectInvalid(Data("[1,2]".utf8), field: "", value: "[1,2]", reasonContains: "is an array, not an object")
  }

  @Test func manifestVersionMissingWrongOrUnsupported() {
    invalid(field: "manifestVersion", value: nil, reasonContains: "missing") { $0.root["manifestVersion"] = nil }
    invalid(field: "manifestVersion", value: "1", reasonContains: "is a string") { $0.root["manifestVersion"] = "1" }
    let unsupported = expectInvalid(
      { () -> Data in
        var fixture = ManifestFixture()
        fixture.root["manifestVersion"] = 2
        return fixture.data
      }(), field: "manifestVersion", value: "2")
    #expect(
      unsupported?.message
        == "the update manifest at \(manifestURL.absoluteString) is invalid: the field manifestVersion is 2: this "
        + "ReaderKit reads manifest version 1 only")
    invalid(field: "manifestVersion", value: "1.5", reasonContains: "not an integer") {
      $0.root["manifestVersion"] = 1.5
    }
  }

  @Test func releasesMissingOrNotAListOfObjects() {
    invalid(field: "releases", value: nil) { $0.root["releases"] = nil }
    invalid(field: "releases", value: #"{"a":1}"#, reasonContains: "is an object, not an array") {
      $0.root["releases"] = ["a": 1]
    }
    invalid(field: "releases[2]", value: "5", reasonContains: "is a number, not an object") {
      $0.root["releases"] = ($0.root["releases"] as! [Any]) + [5]
    }
  }

  // MARK: Release fields

  @Test func unknownOrMistypedDeviceType() {
    invalid(field: "releases[1].deviceType", value: "stripeS700", reasonContains: "is not a device type") {
      $0.editRelease(1) { $0["deviceType"] = "stripeS700" }
    }
    invalid(field: "releases[0].deviceType", value: "3", reasonContains: "is a number") {
      $0.editRelease(0) { $0["deviceType"] = 3 }
    }
    invalid(field: "releases[0].deviceType", value: nil) { $0.editRelease(0) { $0["deviceType"] = nil } }
  }

  @Test func aReleaseCanTargetAModelReaderKitDoesNotKnow() throws {
    var fixture = ManifestFixture()
    fixture.editRelease(0) { $0["deviceType"] = "model:ACME-R1" }
    let manifest = try parse(fixture.data)
    #expect(manifest.releases[0].deviceType == .other("ACME-R1"))
    invalid(field: "releases[0].deviceType", value: "model: ", reasonContains: "or model:<name>") {
      $0.editRelease(0) { $0["deviceType"] = "model: " }
    }
  }

  @Test func locationsThatAreNeitherAllNorANonEmptyListOfIds() {
    invalid(field: "releases[0].locations", value: nil) { $0.editRelease(0) { $0["locations"] = nil } }
    invalid(field: "releases[0].locations", value: "[]", reasonContains: "empty list") {
      $0.editRelease(0) { $0["locations"] = [String]() }
    }
    invalid(field: "releases[0].locations", value: "everywhere") {
      $0.editRelease(0) { $0["locations"] = "everywhere" }
    }
    invalid(field: "releases[0].locations[1]", value: "", reasonContains: "empty location id") {
      $0.editRelease(0) { $0["locations"] = ["tml_1", ""] }
    }
    invalid(field: "releases[1].locations[0]", value: "7", reasonContains: "is a number, not a string") {
      $0.editRelease(1) { $0["locations"] = [7] }
    }
  }

  @Test func versionThatDoesNotParse() {
    invalid(field: "releases[1].version", value: "2.02-beta", reasonContains: "only digits and dots") {
      $0.editRelease(1) { $0["version"] = "2.02-beta" }
    }
    invalid(field: "releases[0].version", value: "2.1", reasonContains: "is a number, not a string") {
      $0.editRelease(0) { $0["version"] = 2.1 }
    }
    invalid(field: "releases[0].version", value: nil) { $0.editRelease(0) { $0["version"] = nil } }
  }

  @Test(arguments: [
    "2026-03-01", "2026-03-01T00:00:00", "2026-03-01 00:00:00Z", "March 1, 2026", "2026-02-30T00:00:00Z",
    "2026-13-01T00:00:00Z", "",
  ])
  func datesThatAreNotISO8601DateTimes(text: String) {
    invalid(field: "releases[1].releasedAt", value: text, reasonContains: "ISO 8601") {
      $0.editRelease(1) { $0["releasedAt"] = text }
    }
  }

  @Test func requiredAtAndExpiresAtAreCheckedToo() {
    invalid(field: "releases[0].requiredAt", value: "1772323200", reasonContains: "is a number") {
      $0.editRelease(0) { $0["requiredAt"] = 1_772_323_200 }
    }
    invalid(field: "releases[0].requiredAt", value: nil) { $0.editRelease(0) { $0["requiredAt"] = nil } }
    invalid(field: "releases[0].expiresAt", value: "tomorrow", reasonContains: "ISO 8601") {
      $0.editRelease(0) { $0["expiresAt"] = "tomorrow" }
    }
    invalid(field: "releases[0].expiresAt", value: "2026-03-01T00:00:00Z", reasonContains: "not later than") {
      $0.editRelease(0) { $0["expiresAt"] = "2026-03-01T00:00:00Z" }
    }
  }

  @Test func componentsThatAreEmptyUnknownOrNotAList() {
    invalid(field: "releases[0].components", value: "[]", reasonContains: "at least one component") {
      $0.editRelease(0) { $0["components"] = [String]() }
    }
    invalid(field: "releases[1].components[1]", value: "bios", reasonContains: "not an update component") {
      $0.editRelease(1) { $0["components"] = ["firmware", "bios"] }
    }
    invalid(field: "releases[0].components", value: "firmware", reasonContains: "not an array") {
      $0.editRelease(0) { $0["components"] = "firmware" }
    }
  }

  @Test func durationEstimateThatIsNotOneOfTheFour() {
    invalid(field: "releases[0].durationEstimate", value: "fast", reasonContains: "estimateLessThan1Minute") {
      $0.editRelease(0) { $0["durationEstimate"] = "fast" }
    }
    invalid(field: "releases[0].durationEstimate", value: "2", reasonContains: "is a number") {
      $0.editRelease(0) { $0["durationEstimate"] = 2 }
    }
  }

  // MARK: Image

  @Test func imageMissingOrNotAnObject() {
    invalid(field: "releases[0].image", value: nil) { $0.editRelease(0) { $0["image"] = nil } }
    invalid(field: "releases[0].image", value: "m2.bin", reasonContains: "not an object") {
      $0.editRelease(0) { $0["image"] = "m2.bin" }
    }
  }

  @Test func imageURLThatIsMissingEmptyOrOfAnotherScheme() {
    invalid(field: "releases[0].image.url", value: nil) { $0.editImage(0) { $0["url"] = nil } }
    invalid(field: "releases[0].image.url", value: "", reasonContains: "not a URL reference") {
      $0.editImage(0) { $0["url"] = "" }
    }
    invalid(field: "releases[1].image.url", value: "file:///etc/passwd", reasonContains: "has the scheme file") {
      $0.editImage(1) { $0["url"] = "file:///etc/passwd" }
    }
    invalid(field: "releases[1].image.url", value: "ftp://example.com/m2.bin", reasonContains: "scheme ftp") {
      $0.editImage(1) { $0["url"] = "ftp://example.com/m2.bin" }
    }
  }

  @Test func imageSizeThatIsNegativeZeroFractionalTooLargeOrAString() {
    invalid(field: "releases[1].image.size", value: "-1", reasonContains: "not a positive number") {
      $0.editImage(1) { $0["size"] = -1 }
    }
    invalid(field: "releases[1].image.size", value: "0", reasonContains: "not a positive number") {
      $0.editImage(1) { $0["size"] = 0 }
    }
    invalid(field: "releases[1].image.size", value: "1.5", reasonContains: "not an integer") {
      $0.editImage(1) { $0["size"] = 1.5 }
    }
    invalid(field: "releases[1].image.size", value: "\(UpdateManifest.maximumImageSize + 1)", reasonContains: "larger")
    {
      $0.editImage(1) { $0["size"] = UpdateManifest.maximumImageSize + 1 }
    }
    invalid(field: "releases[1].image.size", value: "3000", reasonContains: "is a string") {
      $0.editImage(1) { $0["size"] = "3000" }
    }
  }

  /// Valid JSON syntax that no Swift number holds: Foundation's decoder gives no path for it here.
  @Test func numberOutOfRangeIsRefused() {
    var text = String(decoding: ManifestFixture().data, as: UTF8.self)
    let size = "\"size\":\(ManifestFixture.imageBytes("2.01.00.18").count)"
    #expect(text.contains(size))
    text = text.replacingOccurrences(of: size, with: "\"size\":1e400")
    do {
      _ = try parse(Data(text.utf8))
      Issue.record("a size of 1e400 was accepted")
    } catch {
      #expect(error.code == .updateCatalogInvalid)
      #expect(error.context["reason"]?.contains("number out of range") == true, "\(error)")
    }
  }

  @Test func digestOfTheWrongLengthOrNotHex() {
    invalid(field: "releases[0].image.sha256", value: "abc", reasonContains: "64 hexadecimal digits") {
      $0.editImage(0) { $0["sha256"] = "abc" }
    }
    let notHex = String(repeating: "g", count: 64)
    invalid(field: "releases[0].image.sha256", value: notHex) { $0.editImage(0) { $0["sha256"] = notHex } }
    let long = String(repeating: "a", count: 65)
    invalid(field: "releases[0].image.sha256", value: long) { $0.editImage(0) { $0["sha256"] = long } }
    invalid(field: "releases[0].image.sha256", value: "12", reasonContains: "is a number") {
      $0.editImage(0) { $0["sha256"] = 12 }
    }
  }

  @Test func longValuesAreQuotedOnlyInPart() {
    let long = String(repeating: "x", count: 10_000)
    var fixture = ManifestFixture()
    fixture.editRelease(0) { $0["version"] = long }
    let error = expectInvalid(
      fixture.data, field: "releases[0].version", value: String(repeating: "x", count: 120) + "…")
    #expect((error?.description.count ?? .max) < 1_000)
  }

  // MARK: Releases together

  @Test func sameVersionForTheSameModelAndASharedLocationIsRefused() throws {
    invalid(field: "releases[2].version", value: "2.01.00.18", reasonContains: "releases[0]") {
      $0.root["releases"] =
        ($0.root["releases"] as! [Any])
        + [ManifestFixture.release(version: "2.01.00.18", locations: ["tml_2", "tml_9"], components: ["keys"])]
    }
    invalid(field: "releases[2].version", value: "2.02", reasonContains: "releases[1]") {
      $0.root["releases"] =
        ($0.root["releases"] as! [Any])
        + [ManifestFixture.release(version: "2.02", locations: ["tml_9"], components: ["keys"])]
    }
    var disjoint = ManifestFixture()
    disjoint.root["releases"] =
      (disjoint.root["releases"] as! [Any])
      + [ManifestFixture.release(version: "2.01.00.18", locations: ["tml_9"], components: ["keys"])]
    #expect(try parse(disjoint.data).releases.count == 3)
    var otherModel = ManifestFixture()
    var wisePad = ManifestFixture.release(version: "2.02.00.00", locations: "all", components: ["keys"])
    wisePad["deviceType"] = "wisePad3"
    otherModel.root["releases"] = (otherModel.root["releases"] as! [Any]) + [wisePad]
    #expect(try parse(otherModel.data).releases.count == 3)
  }

  // MARK: Hostile input

  /// Flips, drops and inserts bytes of a valid manifest: every result parses or is `updateCatalogInvalid`.
  @Test func mutatedManifestsNeverCrashAndOnlyFailAsInvalid() {
    let seed = UInt64(ProcessInfo.processInfo.environment["MANIFEST_FUZZ_SEED"] ?? "") ?? 0x5EED_CA7A
    var random = SeededRandom(seed: seed)
    let original = Array(ManifestFixture().data)
    let alphabet = Array(#"{}[]",:0123456789-.eE"\ tnrufalsx"#.utf8) + [0x00, 0xFF, 0xC3]
    for iteration in 0..<600 {
      var bytes = original
      for _ in 0...Int(random.next() % 4) {
        let position = Int(random.next() % UInt64(bytes.count))
        switch random.next() % 3 {
        case 0: bytes[position] = alphabet[Int(random.next() % UInt64(alphabet.count))]
        case 1: bytes.remove(at: position)
        default: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: position)
        }
      }
      do {
        _ = try parse(Data(bytes))
      } catch {
        #expect(error.code == .updateCatalogInvalid, "seed \(seed), iteration \(iteration): \(error)")
        #expect(error.context["reason"] != nil, "seed \(seed), iteration \(iteration)")
      }
    }
  }
}
