import Foundation
import ReaderCore

/// An `UpdateCatalog` that fetches a JSON manifest (the format is described at `UpdateManifest`) and
/// its images over HTTP or HTTPS.
///
/// On Linux every fetch goes through one small HTTP/1.1 client on a non-blocking socket, plain for
/// `http:` and through OpenSSL's libssl for `https:` (a system library: `libssl-dev`). URLSession is not
/// used there, because on Linux (swift-corelibs-foundation) it reads ahead of its delegate without
/// back-pressure: a server streaming an endless body was seen to push hundreds of megabytes into the
/// process before a cancel took effect. On Apple platforms, where libssl is not part of the system,
/// fetches go through URLSession and the platform's TLS.
///
/// An `https:` server must present a certificate that verifies against the system's trust store (on
/// Debian /etc/ssl/certs) — or, on Linux, against the CA certificates in `trustedCertificates` — and
/// names the host (checked, and sent as SNI); TLS 1.2 is the oldest version accepted. A certificate that
/// does not verify is `updateCatalogUnavailable` with the verification failure as its cause
/// (`.other("certificate verify failed: certificate has expired")`) and in `context["verification"]`.
///
/// Image URLs in the manifest are resolved against the manifest's URL and must be `http:` or `https:`.
/// The manifest is fetched again on every `availableUpdate(for:at:)`. Every fetch is bounded in time
/// and memory, and can be stopped:
/// - a server that accepts the connection but sends nothing for `stallTimeout` ends the fetch with
///   `updateCatalogTimedOut`; so does one that keeps sending, slowly, past the fetch's deadline:
///   `totalTimeout`, or by default `defaultTotalTimeout(forLimit:)` of what the fetch may bring (the
///   manifest's `maximumManifestSize`, an image's size) — 10 s, and a second more per 64 KiB;
/// - a body over its bound (`maximumManifestSize`, or an image's declared size) is refused as soon as it
///   announces or passes it, without being buffered;
/// - an answer that breaks the HTTP syntax (a junk status line, a signed or oversized chunk size, a
///   trailer that is not a field) is `updateCatalogInvalid` naming the line (`context["line"]`);
/// - an HTTP status outside 2xx, a refused connection or an unknown host is `updateCatalogUnavailable`
///   naming the URL (and the status);
/// - the forms taking a `CatalogCancellation`, and the `async` forms when their task is cancelled, stop
///   a blocked connect, TLS handshake or read at once, close the socket and throw `canceled`.
///
/// A failure is always an error, never read as "no update". The synchronous calls block the calling
/// thread: call them off the terminal's scheduler, or use the `async` forms, which run on a thread of
/// their own.
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
  /// How long one fetch (the manifest, or one image) may take in all; `nil`: derived from what the
  /// fetch may bring, `defaultTotalTimeout(forLimit:)`.
  public let totalTimeout: Duration?
  /// The largest manifest accepted, in bytes.
  public let maximumManifestSize: Int
  /// A PEM file of CA certificates trusted for `https:` besides the system's trust store (a private
  /// catalog's own CA); `nil`: the system's only. Honoured on Linux; on Apple platforms URLSession
  /// applies the system's trust settings alone.
  public let trustedCertificates: URL?

  /// A catalog over the manifest at `manifestURL` (`http:` or `https:`).
  public init(
    manifestURL: URL, stallTimeout: Duration = .seconds(15), totalTimeout: Duration? = nil,
    maximumManifestSize: Int = UpdateManifest.maximumSize, trustedCertificates: URL? = nil
  ) {
    self.manifestURL = manifestURL
    self.stallTimeout = stallTimeout
    self.totalTimeout = totalTimeout
    self.maximumManifestSize = maximumManifestSize
    self.trustedCertificates = trustedCertificates
  }

  /// The deadline of a fetch that may bring `limit` bytes, unless `totalTimeout` says otherwise: 10 s
  /// to connect and start, and a second for every 64 KiB (started) — a link of at least 64 KiB/s.
  /// A 1 MiB manifest gets 26 s, a 32 MiB image 522 s.
  public static func defaultTotalTimeout(forLimit limit: Int) -> Duration {
    let chunks = (Int64(max(0, limit)) + 65_535) / 65_536
    return .seconds(10 + chunks)
  }

  /// Fetches and parses the manifest.
  /// - Throws: `updateCatalogUnavailable` (a status outside 2xx, a refused connection, a URL that is not
  ///   `http:`/`https:`), `updateCatalogTimedOut` (a stalled or trickling server), `updateCatalogInvalid`
  ///   (malformed, larger than `maximumManifestSize`: `context["limit"]`, or a malformed HTTP answer:
  ///   `context["line"]`). Every error names the URL.
  public func manifest() throws(ReaderError) -> UpdateManifest {
    try manifest(cancellation: CatalogCancellation())
  }

  /// `manifest()`, stopped when `cancellation` is cancelled.
  /// - Throws: what `manifest()` throws, and `canceled`.
  public func manifest(cancellation: CatalogCancellation) throws(ReaderError) -> UpdateManifest {
    try Self.requireHTTP(manifestURL)
    switch try fetch(manifestURL, limit: maximumManifestSize, cancellation: cancellation) {
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
    try availableUpdate(for: installed, at: now, cancellation: CatalogCancellation())
  }

  /// `availableUpdate(for:at:)`, stopped when `cancellation` is cancelled.
  /// - Throws: what `manifest()` throws, and `canceled`.
  public func availableUpdate(for installed: InstalledSoftware, at now: Date, cancellation: CatalogCancellation)
    throws(ReaderError) -> UpdateAvailability
  {
    UpdateAvailability(choosingFrom: try manifest(cancellation: cancellation).releases, for: installed, at: now)
  }

  /// Downloads the image and returns its bytes once its size and SHA-256 digest match.
  /// - Throws: `firmwareImageRejected` for a size or digest mismatch (a body larger than the declared
  ///   size is stopped there); `updateCatalogUnavailable`, `updateCatalogTimedOut`,
  ///   `updateCatalogInvalid` (a malformed HTTP answer) as for the manifest.
  public func firmwareImage(for image: FirmwareImage) throws(ReaderError) -> Data {
    try firmwareImage(for: image, cancellation: CatalogCancellation())
  }

  /// `firmwareImage(for:)`, stopped when `cancellation` is cancelled.
  /// - Throws: what `firmwareImage(for:)` throws, and `canceled`.
  public func firmwareImage(for image: FirmwareImage, cancellation: CatalogCancellation) throws(ReaderError)
    -> Data
  {
    try Self.requireHTTP(image.url)
    return try FirmwareDownload.verified(image, try fetch(image.url, limit: image.size, cancellation: cancellation))
  }

  private func fetch(_ url: URL, limit: Int, cancellation: CatalogCancellation) throws(ReaderError) -> BoundedBody {
    let deadline = totalTimeout ?? Self.defaultTotalTimeout(forLimit: limit)
    #if canImport(Glibc)
      return try SocketHTTPFetch.get(
        url, limit: limit, stallTimeout: stallTimeout, totalTimeout: deadline,
        trustedCertificates: trustedCertificates, cancellation: cancellation)
    #else
      return try HTTPFetch.get(
        url, limit: limit, stallTimeout: stallTimeout, totalTimeout: deadline, cancellation: cancellation)
    #endif
  }

  private static func requireHTTP(_ url: URL) throws(ReaderError) {
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
      throw ReaderError(
        .updateCatalogUnavailable, "\(url.absoluteString) is not an http or https URL",
        context: ["url": url.absoluteString, "reason": "not an http or https URL"])
    }
  }
}
