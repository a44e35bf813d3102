import Foundation
import ReaderCore

@testable import ReaderKit

/// Builds update manifests for the tests: a valid one, then edits that break one thing each.
struct ManifestFixture {
  /// The manifest as JSON objects, edited in place.
  var root: [String: Any]

  /// Two releases for the M2: an optional config update at two locations and a firmware update for
  /// all, with images `images/m2-…bin` whose bytes are `imageBytes(version)`.
  init() {
    root = [
      "manifestVersion": 1,
      "releases": [
        Self.release(version: "2.01.00.18", locations: ["tml_1", "tml_2"], components: ["config"]),
        Self.release(version: "2.02.00.00", locations: "all", components: ["firmware", "keys"]),
      ],
    ]
  }

  /// The bytes of the image of `version`.
  static func imageBytes(_ version: String) -> Data {
    Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &+ version.utf8.count &* 31) } + Array(version.utf8))
  }

  /// One valid release.
  static func release(version: String, locations: Any, components: [String]) -> [String: Any] {
    let image = imageBytes(version)
    return [
      "deviceType": "stripeM2",
      "locations": locations,
      "version": version,
      "releasedAt": "2026-03-01T00:00:00Z",
      "requiredAt": "2026-03-15T00:00:00Z",
      "expiresAt": "2026-06-01T00:00:00.5+02:00",
      "components": components,
      "durationEstimate": "estimate2To5Minutes",
      "image": [
        "url": "images/m2-\(version).bin",
        "size": image.count,
        "sha256": SHA256Checksum.compute(image).hex,
      ],
    ]
  }

  /// Changes release `index` with `edit`.
  mutating func editRelease(_ index: Int, _ edit: (inout [String: Any]) -> Void) {
    var releases = root["releases"] as! [[String: Any]]
    edit(&releases[index])
    root["releases"] = releases
  }

  /// Changes the image of release `index` with `edit`.
  mutating func editImage(_ index: Int, _ edit: (inout [String: Any]) -> Void) {
    editRelease(index) { release in
      var image = release["image"] as! [String: Any]
      edit(&image)
      release["image"] = image
    }
  }

  /// The JSON text.
  // Foundation writes the fixture's own plist types: no code under test runs here.
  var data: Data { try! JSONSerialization.data(withJSONObject: root, options: [.sortedKeys]) }

  /// Writes the manifest and the images it names into `directory`; returns the manifest's URL.
  @discardableResult
  func write(to directory: URL, name: String = "manifest.json") throws -> URL {
    let images = directory.appendingPathComponent("images", isDirectory: true)
    try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
    for release in root["releases"] as? [[String: Any]] ?? [] {
      guard let version = release["version"] as? String else { continue }
      try Self.imageBytes(version).write(to: images.appendingPathComponent("m2-\(version).bin"))
    }
    let url = directory.appendingPathComponent(name)
    try data.write(to: url)
    return url
  }
}

/// A fresh temporary directory, removed after `body`.
func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("UpdateCatalogTests-\(UUID().uuidString)", isDirectory: true)
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  return try body(directory)
}

/// `2026-03-01T00:00:00Z` plus `days`.
func march(_ day: Double) -> Date {
  Date(timeIntervalSince1970: 1_772_323_200 + (day - 1) * 86_400)
}

/// An M2 at `location` running `version`.
func installedM2(_ version: String, location: String = "tml_1") throws(ReaderError) -> InstalledSoftware {
  InstalledSoftware(
    deviceType: .stripeM2, serialNumber: "STRM2-0001", locationId: location, version: try SoftwareVersion(version))
}
