import Foundation
import ReaderCore
import Testing

@Suite struct DeviceTypeTests {
  @Test func knownModelsKeepTheirNamesAndAnotherModelIsPrefixed() {
    #expect(DeviceType(rawValue: "stripeM2") == .stripeM2)
    #expect(DeviceType(rawValue: "model:ACME-R1") == .other("ACME-R1"))
    #expect(DeviceType.other("ACME-R1").rawValue == "model:ACME-R1")
    #expect(DeviceType(rawValue: "stripeM3") == nil)
    #expect(DeviceType(rawValue: "model:") == nil)
    #expect(DeviceType.allCases == [.chipper2X, .stripeM2, .wisePad3])
  }

  @Test func aReportedModelNameIsAKnownModelWhenItNamesOne() {
    #expect(DeviceType(modelName: "WisePad 3") == .wisePad3)
    #expect(DeviceType(modelName: "chipper2X") == .chipper2X)
    #expect(DeviceType(modelName: "nRF52840 DK") == .other("nRF52840 DK"))
  }

  @Test func anotherModelHasNoneOfTheKnownModelsHabits() {
    let other = DeviceType.other("ACME-R1")
    #expect(!other.supportsProximityDiscovery && !other.hasSecurityReboot)
    #expect(other.serialPrefix.isEmpty && other.displayName == "ACME-R1")
  }

  @Test func jsonCarriesTheRawValueAndRefusesAnUnknownName() throws {
    let encoded = try JSONEncoder().encode([DeviceType.other("R 1"), .wisePad3])
    #expect(String(decoding: encoded, as: UTF8.self) == #"["model:R 1","wisePad3"]"#)
    #expect(try JSONDecoder().decode([DeviceType].self, from: encoded) == [.other("R 1"), .wisePad3])
    #expect(throws: DecodingError.self) { try JSONDecoder().decode([DeviceType].self, from: Data(#"["m2"]"#.utf8)) }
  }

  @Test func twoModelsAreEqualAndHashAlikeExactlyWhenTheirRawValuesAreEqual() {
    // Names that look like the known models' raw values, marketing names and prefixed forms, and two
    // spellings of one name that String's == holds equal (precomposed and combining accent).
    let names = [
      "chipper2X", "stripeM2", "model:stripeM2", "WisePad 3", "", " ", "ACME-R1", "acme-r1", "\u{E9}", "e\u{301}",
    ]
    let models: [DeviceType] = DeviceType.allCases + names.map { .other($0) }
    for left in models {
      for right in models {
        #expect((left == right) == (left.rawValue == right.rawValue), "\(left) and \(right)")
        if left == right { #expect(left.hashValue == right.hashValue, "\(left) and \(right)") }
      }
    }
    #expect(Set(models).count == models.count - 1, "the two spellings of é are one model")
  }
}
