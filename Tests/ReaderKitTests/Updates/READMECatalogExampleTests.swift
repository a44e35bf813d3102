import Testing

// The README's update catalog example, verbatim between the markers; `exampleIsTheREADMEsCode` keeps
// the two in step.
// README-CATALOG-BEGIN
import Foundation
import ReaderKit

/// Asks `catalog` about one reader and downloads the image of the update it should install.
func downloadUpdate(from catalog: some UpdateCatalog) async throws(ReaderError) -> Data? {
  let installed = InstalledSoftware(
    deviceType: .stripeM2, serialNumber: "STRM2-0001", locationId: "tml_downtown",
    version: try SoftwareVersion("2.01.00.17"))
  let answer = try await catalog.availableUpdate(for: installed, at: Date())
  guard let update = answer.update, let image = update.image else { return nil }
  print("Update to", update.deviceSoftwareVersion, "in", ReaderSoftwareUpdate.string(from: update.durationEstimate))
  return try await catalog.firmwareImage(for: image)  // size and SHA-256 checked
}

// let catalog = HTTPUpdateCatalog(manifestURL: URL(string: "https://updates.example.com/readers.json")!)
// let image = try await downloadUpdate(from: catalog)
// README-CATALOG-END

@Suite(.timeLimit(.minutes(2))) struct READMECatalogExampleTests {
  /// The example reads the real clock, so the releases here were published long ago and never expire.
  @Test func exampleDownloadsTheImageOfTheNewestRelease() async throws {
    var fixture = ManifestFixture()
    for index in 0..<2 {
      fixture.editRelease(index) {
        $0["releasedAt"] = "2000-01-01T00:00:00Z"
        $0["expiresAt"] = nil
      }
    }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("READMECatalogExample-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let catalog = ManifestUpdateCatalog(manifestURL: try fixture.write(to: directory))
    #expect(try await downloadUpdate(from: catalog) == ManifestFixture.imageBytes("2.02.00.00"))
  }

  @Test func exampleIsTheREADMEsCode() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    let section = try #require(readme.range(of: "## Software update catalog"))
    let thisFile = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
    let sample = try #require(Self.between(String(readme[section.upperBound...]), "```swift\n", "```"))
    let tested = try #require(Self.between(thisFile, "// README-CATALOG-BEGIN\n", "// README-CATALOG-END"))
    #expect(sample == tested, "README.md's catalog example and this file's copy differ")
  }

  private static func between(_ text: String, _ start: String, _ end: String) -> String? {
    guard let open = text.range(of: start), let close = text.range(of: end, range: open.upperBound..<text.endIndex)
    else { return nil }
    return String(text[open.upperBound..<close.lowerBound])
  }
}
