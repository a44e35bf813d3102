import Foundation
import ReaderCore

/// A parsed update manifest: the releases an update catalog offers.
///
/// The format, version 1 (JSON, UTF-8, at most `maximumSize` bytes by default):
///
/// ```json
/// {
///   "manifestVersion": 1,
///   "releases": [
///     {
///       "deviceType": "stripeM2",
///       "locations": ["tml_downtown", "tml_airport"],
///       "version": "2.01.00.18",
///       "releasedAt": "2026-03-01T00:00:00Z",
///       "requiredAt": "2026-03-15T00:00:00Z",
///       "expiresAt": "2026-06-01T00:00:00Z",
///       "components": ["firmware", "config"],
///       "durationEstimate": "estimate5To15Minutes",
///       "image": {
///         "url": "images/m2-2.01.00.18.bin",
///         "size": 1048576,
///         "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
///       }
///     }
///   ]
/// }
/// ```
///
/// - `manifestVersion`: `1`.
/// - `releases`: the releases, possibly none. For each:
///   - `deviceType`: `chipper2X`, `stripeM2` or `wisePad3`.
///   - `locations`: the location ids it is offered at (a non-empty list), or `"all"`.
///   - `version`: a dotted numeric version (`SoftwareVersion`).
///   - `releasedAt`, `requiredAt` and the optional `expiresAt` (absent or `null`: never): ISO 8601
///     date-times with a time zone, e.g. `2026-03-01T00:00:00Z` or `2026-03-01T01:00:00.5+01:00`.
///     `expiresAt` must be later than `releasedAt`.
///   - `components`: a non-empty list of `incremental`, `firmware`, `config`, `keys`.
///   - `durationEstimate`: `estimateLessThan1Minute`, `estimate1To2Minutes`, `estimate2To5Minutes` or
///     `estimate5To15Minutes`.
///   - `image.url`: a URL reference resolved against the manifest's own URL: a relative path such as
///     `images/m2.bin` (percent-encode spaces), or an absolute URL. A file manifest takes `file:` images
///     only, an HTTP manifest `http:` and `https:` ones only.
///   - `image.size`: the image's size in bytes, an integer from 1 to `maximumImageSize`.
///   - `image.sha256`: the image's SHA-256 digest, 64 hexadecimal digits.
///
///   Two releases for the same model with the same version may not share a location. Other fields are
///   ignored, so a newer manifest can add some.
///
/// Which release applies to a reader is decided by `UpdateAvailability(choosingFrom:for:at:)`.
public struct UpdateManifest: Sendable, Hashable {
  /// The manifest format version this ReaderKit reads.
  public static let formatVersion = 1
  /// The largest manifest read by default, in bytes (1 MiB); a larger one is refused without being read
  /// past this bound.
  public static let maximumSize = 1 << 20
  /// The largest image size a manifest may declare, in bytes (256 MiB).
  public static let maximumImageSize = 256 << 20

  /// The releases, in manifest order.
  public var releases: [UpdateRelease]

  /// Creates a manifest.
  public init(releases: [UpdateRelease]) {
    self.releases = releases
  }

  /// Parses a manifest. Pure: reads nothing but `bytes`.
  /// - Parameters:
  ///   - bytes: the manifest's contents.
  ///   - url: where it came from: images are resolved against it, and errors name it.
  ///   - imageSchemes: the URL schemes an image may have (lower case), e.g. `["file"]`.
  ///   - maximumSize: a longer manifest is refused.
  /// - Throws: `updateCatalogInvalid` naming what is wrong: `context["offset"]` for bytes that are not
  ///   JSON (or nest deeper than 16 levels), `context["limit"]` for a manifest over `maximumSize`, and
  ///   otherwise `context["field"]` (a JSON path such as `releases[2].image.sha256`) with
  ///   `context["value"]` (the value, cut at 120 characters; absent for a missing field). Every error
  ///   has `context["url"]` and `context["reason"]`.
  public static func parse(
    _ bytes: Data, url: URL, imageSchemes: Set<String>, maximumSize: Int = UpdateManifest.maximumSize
  ) throws(ReaderError) -> UpdateManifest {
    try ManifestParser(url: url, imageSchemes: imageSchemes, maximumSize: maximumSize).parse(bytes)
  }
}
