import Foundation
import ReaderCore

/// The one check every catalog applies to image bytes before handing them out.
enum FirmwareDownload {
  /// The image's bytes once they have its exact size and digest.
  /// - Throws: `firmwareImageRejected`; for a read stopped at the bound, `context["actual"]` is
  ///   `more than <size>`.
  /// `sha256`, when given, is the digest of the body's bytes, computed while they were read.
  static func verified(
    _ image: FirmwareImage, _ body: BoundedBody, sha256: SHA256Checksum? = nil
  ) throws(ReaderError) -> Data {
    switch body {
    case .exceeded(let limit):
      throw image.rejected(
        "size", expected: "\(image.size)", actual: "more than \(limit)", "is larger than \(image.size) bytes")
    case .complete(let data):
      try image.verify(data) { sha256 ?? SHA256Checksum.compute($0) }
      return data
    }
  }
}
