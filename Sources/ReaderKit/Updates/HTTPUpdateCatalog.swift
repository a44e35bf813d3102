import Foundation
import ReaderCore

/// An `UpdateCatalog` that fetches a JSON manifest (the format is described at `UpdateManifest`) and
/// its images over HTTP with `URLSession`.
///
/// On Linux, plain `http:` is fetched with a small HTTP/1.1 reader on a socket instead, because
/// URLSession there (swift-corelibs-foundation) reads ahead of its delegate without back-pressure: a
/// server streaming an endless body was seen to push hundreds of megabytes into the process before a
/// cancel took effect. `https:` goes through URLSession everywhere; on Linux a hostile HTTPS server can
/// therefore still make URLSession buffer beyond the bound for a moment, though the catalog keeps none
/// of it and answers at the bound.
///
/// Image URLs in the manifest are resolved against the manifest's URL and must be `http:` or `https:`.
/// The manifest is fetched again on every `availableUpdate(for:at:)`. Every fetch is bounded in time
/// and memory:
/// - a server that accepts the connection but sends nothing for `stallTimeout` ends the fetch with
///   `updateCatalogTimedOut`, and so does a transfer still running after `totalTimeout`;
/// - a body over its bound (`maximumManifestSize`, or an image's declared size) is refused as soon as it
///   announces or passes it, without being buffered;
/// - an HTTP status outside 2xx, a refused connection or an unknown host is `updateCatalogUnavailable`
///   naming the URL (and the status).
///
/// A failure is always an error, never read as "no update". The calls block the calling thread:
/// call them off the terminal's scheduler, or use the `async` forms.
///
/// ```swift
/// let catalog = HTTPUpdateCatalog(manifestURL: URL(string: "https://updates.example.com/manifest.json")!)
/// let answer = try await catalog.availableUpdate(for: installed, at: Date())
/// ```
public struct HTTPUpdateCatalog: UpdateCatalog {
  /// The manifest's URL.
  public let manifestURL: URL
  /// How long a server may stay silent before a fetch is abandoned.
  public let stallTimeout: Duration
  /// How long one fetch (the manifest, or one image) may take in all.
  public let totalTimeout: Duration
  /// The largest manifest accepted, in bytes.
  public let maximumManifestSize: Int

  /// A catalog over the manifest at `manifestURL` (`http:` or `https:`).
  public init(
    manifestURL: URL, stallTimeout: Duration = .seconds(15), totalTimeout: Duration = .seconds(600),
    maximumManifestSize: Int = UpdateManifest.maximumSize
  ) {
    self.manifestURL = manifestURL
    self.stallTimeout = stallTimeout
    self.totalTimeout = totalTimeout
    self.maximumManifestSize = maximumManifestSize
  }

  /// Fetches and parses the manifest.
  /// - Throws: `updateCatalogUnavailable` (a status outside 2xx, a refused connection, a URL that is not
  ///   `http:`/`https:`), `updateCatalogTimedOut` (a stalled server), `updateCatalogInvalid` (malformed,
  ///   or larger than `maximumManifestSize`: `context["limit"]`). Every error names the URL.
  public func manifest() throws(ReaderError) -> UpdateManifest {
    try Self.requireHTTP(manifestURL)
    switch try fetch(manifestURL, limit: maximumManifestSize) {
    case .complete(let bytes):
      return try UpdateManifest.parse(
        bytes, url: manifestURL, imageSchemes: ["http", "https"], maximumSize: maximumManifestSize)
    case .exceeded(let limit):
      throw ManifestParser(url: manifestURL, imageSchemes: ["http", "https"], maximumSize: limit).tooLarge()
    }
  }

  /// The update the manifest's releases offer `installed` at `now`.
  /// - Throws: what `manifest()` throws.
  public func availableUpdate(for installed: InstalledSoftware, at now: Date) throws(ReaderError)
    -> UpdateAvailability
  {
    UpdateAvailability(choosingFrom: try manifest().releases, for: installed, at: now)
  }

  /// Downloads the image and returns its bytes once its size and SHA-256 digest match.
  /// - Throws: `firmwareImageRejected` for a size or digest mismatch (a body larger than the declared
  ///   size is stopped there); `updateCatalogUnavailable`, `updateCatalogTimedOut` as for the manifest.
  public func firmwareImage(for image: FirmwareImage) throws(ReaderError) -> Data {
    try Self.requireHTTP(image.url)
    return try FirmwareDownload.verified(image, try fetch(image.url, limit: image.size))
  }

  /// How a catalog fetches.
  enum Transport: Sendable {
    /// On Linux, `http:` through `SocketHTTPFetch` (URLSession there cannot stop reading at a byte
    /// bound); everything else through URLSession.
    case automatic
    /// Always URLSession.
    case urlSession
  }

  /// Test seam: the transport to use.
  var transport = Transport.automatic

  private func fetch(_ url: URL, limit: Int) throws(ReaderError) -> BoundedBody {
    #if canImport(Glibc)
      if transport == .automatic, url.scheme?.lowercased() == "http" {
        return try SocketHTTPFetch.get(url, limit: limit, stallTimeout: stallTimeout, totalTimeout: totalTimeout)
      }
    #endif
    return try HTTPFetch.get(url, limit: limit, stallTimeout: stallTimeout, totalTimeout: totalTimeout)
  }

  private static func requireHTTP(_ url: URL) throws(ReaderError) {
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
      throw ReaderError(
        .updateCatalogUnavailable, "\(url.absoluteString) is not an http or https URL",
        context: ["url": url.absoluteString, "reason": "not an http or https URL"])
    }
  }
}
