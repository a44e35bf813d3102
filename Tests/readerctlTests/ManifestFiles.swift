import Foundation
import ReaderKit

/// An update manifest and its firmware image, written to a temporary directory for `readerctl update`.
///
/// One release by default: 2.01.00.18 for the Stripe Reader M2 at every location, released
/// 2026-03-01, required from 2026-03-15 (`--date 2026-06-01` sees it required, `--date 2026-03-10`
/// optional), firmware and config, 1-2 minutes, with a 4 KiB image at `images/m2.bin`.
struct ManifestFiles {
  /// The directory holding `manifest.json` and `images/`; removed by `remove()`.
  let directory: URL
  /// The releases, as JSON objects, in manifest order.
  var releases: [[String: Any]]
  /// The image's bytes, written to `images/m2.bin`.
  var image: Data

  /// The version the simulated reader is told it runs in these tests (`--installed-version`).
  static let installed = "2.01.00.17"
  /// The version the default release brings.
  static let next = "2.01.00.18"
  /// The arguments that check the simulated M2 running `installed` on 2026-06-01.
  static let reader = ["--device-type", "stripeM2", "--installed-version", installed, "--date", "2026-06-01"]

  init() throws {
    directory = try ReaderctlProcess.temporaryDirectory()
    image = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    releases = []
    releases = [release()]
  }

  /// A release of the image at `images/m2.bin`, as it is now.
  func release(
    version: String = next, deviceType: String = "stripeM2", requiredAt: String = "2026-03-15T00:00:00Z",
    components: [String] = ["firmware", "config"], estimate: String = "estimate1To2Minutes"
  ) -> [String: Any] {
    [
      "deviceType": deviceType, "locations": "all", "version": version, "releasedAt": "2026-03-01T00:00:00Z",
      "requiredAt": requiredAt, "components": components, "durationEstimate": estimate,
      "image": ["url": "images/m2.bin", "size": image.count, "sha256": SHA256Checksum.compute(image).hex],
    ]
  }

  /// Writes the manifest and the image; returns the manifest's path.
  @discardableResult
  func write() throws -> String {
    let images = directory.appendingPathComponent("images")
    try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
    try image.write(to: images.appendingPathComponent("m2.bin"))
    let manifest = directory.appendingPathComponent("manifest.json")
    try JSONSerialization.data(withJSONObject: ["manifestVersion": 1, "releases": releases], options: [.sortedKeys])
      .write(to: manifest)
    return manifest.path
  }

  /// Replaces the image file's bytes, leaving the manifest as it was.
  func replaceImage(with bytes: Data) throws {
    try bytes.write(to: directory.appendingPathComponent("images/m2.bin"))
  }

  /// Removes the directory.
  func remove() { try? FileManager.default.removeItem(at: directory) }
}
