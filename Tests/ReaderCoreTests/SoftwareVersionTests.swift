import Foundation
import Testing

@testable import ReaderCore

@Suite struct SoftwareVersionTests {
  @Test func parsesDottedNumbersAndKeepsTheTextAsWritten() throws {
    let version = try SoftwareVersion("2.01.00.17")
    #expect(version.components == [2, 1, 0, 17])
    #expect(version.description == "2.01.00.17")
    #expect(try SoftwareVersion("7").components == [7])
    #expect(try SoftwareVersion("999999999.0").components == [999_999_999, 0])
  }

  @Test func comparesNumberByNumberNotAsText() throws {
    let ordered = ["1.9", "1.10", "2.01.00.17", "2.01.00.18", "2.1.1", "2.02", "10.0"]
    let versions = try ordered.map { try SoftwareVersion($0) }
    for (index, version) in versions.enumerated() {
      for (other, later) in versions.enumerated() {
        #expect((version < later) == (index < other), "\(version) < \(later)")
      }
    }
    #expect(versions.shuffled().sorted() == versions)
  }

  @Test func leadingZerosAndMissingTrailingZerosDoNotMatter() throws {
    #expect(try SoftwareVersion("2.1") == SoftwareVersion("2.01.0"))
    #expect(try SoftwareVersion("2.1").hashValue == SoftwareVersion("2.01.00.000").hashValue)
    #expect(try !(SoftwareVersion("2.1") < SoftwareVersion("2.1.0")))
    #expect(try !(SoftwareVersion("2.1.0") < SoftwareVersion("2.1")))
    #expect(try SoftwareVersion("2.1") != SoftwareVersion("2.1.0.1"))
    #expect(try Set([SoftwareVersion("3.0"), SoftwareVersion("3")]).count == 1)
  }

  @Test(arguments: [
    ("", "it is empty"),
    ("2.01-beta", "only digits and dots are allowed"),
    (" 2.01", "only digits and dots are allowed"),
    ("v2", "only digits and dots are allowed"),
    ("-1.0", "only digits and dots are allowed"),
    ("2..1", "a number is missing before a dot"),
    (".1", "a number is missing before a dot"),
    ("2.1.", "a number is missing after the last dot"),
    ("1.1234567890", "a number has more than 9 digits"),
    ("２.1", "only digits and dots are allowed"),
  ])
  func malformedVersionIsATypedErrorNamingTheValue(text: String, reason: String) {
    #expect(
      throws: ReaderError(
        .invalidSoftwareVersion, "\"\(text)\" is not a software version: \(reason)",
        context: ["value": text, "reason": reason])
    ) { try SoftwareVersion(text) }
  }

  @Test func overlongVersionIsRefusedAndQuotedOnlyInPart() throws {
    let text = String(repeating: "1.", count: 100) + "1"
    do {
      _ = try SoftwareVersion(text)
      Issue.record("accepted a \(text.count)-character version")
    } catch {
      #expect(error.code == .invalidSoftwareVersion)
      #expect(error.context["reason"] == "it is longer than 64 bytes")
      #expect(error.context["value"] == String(text.prefix(64)) + "…")
    }
  }

  @Test func codesAsItsTextAndRefusesAMalformedOne() throws {
    let data = try JSONEncoder().encode([try SoftwareVersion("2.01.00.17")])
    #expect(String(decoding: data, as: UTF8.self) == #"["2.01.00.17"]"#)
    #expect(try JSONDecoder().decode([SoftwareVersion].self, from: data) == [try SoftwareVersion("2.01.00.17")])
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode([SoftwareVersion].self, from: Data(#"["2.x"]"#.utf8))
    }
  }
}
