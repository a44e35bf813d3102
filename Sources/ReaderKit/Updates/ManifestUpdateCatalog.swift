import Foundation
import ReaderCore

/// An `UpdateCatalog` read from a JSON manifest file (the format is described at `UpdateManifest`),
/// with images in files named relative to it.
///
/// The manifest is read again on every `availableUpdate(for:at:)`, so edits take effect at the next
/// check. Reads are bounded: a manifest over `maximumManifestSize` bytes and an image larger than its
/// declared size are refused without being read in full. Only `file:` image URLs are accepted.
///
/// ```swift
/// let catalog = ManifestUpdateCatalog(path: "/srv/readers/manifest.json")
/// let answer = try catalog.availableUpdate(for: installed, at: Date())
/// if let image = answer.update?.image {
///   let bytes = try catalog.firmwareImage(for: image)  // size and SHA-256 checked
/// }
/// ```
public struct ManifestUpdateCatalog: UpdateCatalog {
  /// The manifest file.
  public let manifestURL: URL
  /// The largest manifest read, in bytes.
  public let maximumManifestSize: Int

  /// A catalog over the manifest at `manifestURL`, which must be a `file:` URL.
  public init(manifestURL: URL, maximumManifestSize: Int = UpdateManifest.maximumSize) {
    self.manifestURL = manifestURL
    self.maximumManifestSize = maximumManifestSize
  }

  /// A catalog over the manifest at `path`; a relative path is taken from the current directory.
  public init(path: String, maximumManifestSize: Int = UpdateManifest.maximumSize) {
    self.init(manifestURL: URL(fileURLWithPath: path).absoluteURL, maximumManifestSize: maximumManifestSize)
  }

  /// Reads and parses the manifest.
  /// - Throws: `updateCatalogUnavailable` when the file cannot be read (`context["errno"]`) or the URL is
  ///   not a `file:` URL; `updateCatalogInvalid` when it is malformed or larger than
  ///   `maximumManifestSize` (see `UpdateManifest.parse(_:url:imageSchemes:maximumSize:)`).
  public func manifest() throws(ReaderError) -> UpdateManifest {
    guard manifestURL.isFileURL else {
      throw ReaderError(
        .updateCatalogUnavailable, "\(manifestURL.absoluteString) is not a file URL",
        context: ["url": manifestURL.absoluteString, "reason": "not a file URL"])
    }
    switch try FileFetch.contents(of: manifestURL, limit: maximumManifestSize) {
    case .complete(let bytes):
      return try UpdateManifest.parse(
        bytes, url: manifestURL, imageSchemes: ["file"], maximumSize: maximumManifestSize)
    case .exceeded(let limit):
      throw ManifestParser(url: manifestURL, imageSchemes: ["file"], maximumSize: limit).tooLarge()
    }
  }

  /// The update the manifest's releases offer `installed` at `now`.
  /// - Throws: what `manifest()` throws.
  public func availableUpdate(for installed: InstalledSoftware, at now: Date) throws(ReaderError)
    -> UpdateAvailability
  {
    UpdateAvailability(choosingFrom: try manifest().releases, for: installed, at: now)
  }

  /// The image file's bytes, once its size and SHA-256 digest match.
  /// - Throws: `firmwareImageRejected` for a size or digest mismatch (a file larger than declared is not
  ///   read past its declared size); `updateCatalogUnavailable` when it cannot be read or is not a
  ///   `file:` URL.
  public func firmwareImage(for image: FirmwareImage) throws(ReaderError) -> Data {
    guard image.url.isFileURL else {
      throw ReaderError(
        .updateCatalogUnavailable, "\(image.url.absoluteString) is not a file URL",
        context: ["url": image.url.absoluteString, "reason": "not a file URL"])
    }
    // Hashed while read: one pass over the image.
    let (body, digest) = try FileFetch.hashedContents(of: image.url, limit: image.size)
    return try FirmwareDownload.verified(image, body, sha256: digest)
  }
}
