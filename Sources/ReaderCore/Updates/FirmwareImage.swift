#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where a software update's image is and what it must be: its exact size and SHA-256 digest.
///
/// An update catalog hands out the image's bytes only once they match both (`verify(_:sha256:)`), so a
/// truncated, padded or altered download never reaches a reader.
public struct FirmwareImage: Sendable, Hashable, Codable {
  /// Where the catalog fetches the image: a `file:` URL for a manifest on disk, an `http:`/`https:` URL
  /// for one on a server, already resolved against the manifest's location.
  public var url: URL
  /// The image's size in bytes.
  public var size: Int
  /// The image's SHA-256 digest.
  public var sha256: SHA256Checksum

  /// Describes an image.
  public init(url: URL, size: Int, sha256: SHA256Checksum) {
    self.url = url
    self.size = size
    self.sha256 = sha256
  }

  /// Checks that `data` is this image: first its size, then its digest, as computed by `sha256`.
  /// - Throws: `firmwareImageRejected` with `context["field"]` `size` or `sha256`, `context["expected"]`,
  ///   `context["actual"]` and `context["url"]`.
  public func verify(_ data: Data, sha256 digest: (Data) -> SHA256Checksum) throws(ReaderError) {
    guard data.count == size else {
      throw rejected("size", expected: "\(size)", actual: "\(data.count)", "is \(data.count) bytes, not \(size)")
    }
    let actual = digest(data)
    guard actual == sha256 else {
      throw rejected("sha256", expected: sha256.hex, actual: actual.hex, "does not have the expected SHA-256 digest")
    }
  }

  /// The error for an image whose `field` does not match: `actual` is what was found (for a download
  /// stopped at the bound, e.g. `more than 1024`).
  public func rejected(_ field: String, expected: String, actual: String, _ what: String) -> ReaderError {
    ReaderError(
      .firmwareImageRejected, "the firmware image at \(url.absoluteString) \(what)",
      context: ["url": url.absoluteString, "field": field, "expected": expected, "actual": actual])
  }
}
