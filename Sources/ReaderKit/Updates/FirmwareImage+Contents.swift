import Foundation
import ReaderCore

extension FirmwareImage {
  /// Describes the image whose bytes are `contents`, served at `url`: its size and SHA-256 digest are
  /// computed from the bytes.
  ///
  /// ```swift
  /// let bytes = Data(repeating: 0xA5, count: 4096)
  /// let image = FirmwareImage(url: URL(string: "memory:m2-2.01.00.18")!, contents: bytes)
  /// catalog.add(UpdateRelease(…, image: image), image: bytes)
  /// ```
  public init(url: URL, contents: Data) {
    self.init(url: url, size: contents.count, sha256: SHA256Checksum.compute(contents))
  }
}
