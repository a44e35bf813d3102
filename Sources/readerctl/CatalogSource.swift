import Foundation
import ReaderKit

/// Where `update --catalog` points: a manifest file or an HTTP server, and how its manifest is
/// fetched — once per run, stopped by Ctrl-C.
struct CatalogSource {
  /// The catalog over the manifest.
  let catalog: any UpdateCatalog
  /// The manifest's location, as shown and reported: a path, or a URL.
  let location: String
  /// Fetches and parses the manifest, stopped when the cancellation is.
  private let fetchManifest: @Sendable (CatalogCancellation) throws(ReaderError) -> UpdateManifest

  init(_ text: String, stallTimeout: Duration, fetchTimeout: Duration?, trustedCertificates: URL? = nil)
    throws(UsageError)
  {
    guard !text.isEmpty else { throw UsageError("--catalog needs a file path or a URL") }
    guard let scheme = text.firstMatch(of: /^([A-Za-z][A-Za-z0-9+.\-]*):\/\//)?.1.lowercased() else {
      let catalog = ManifestUpdateCatalog(path: text)
      self.init(file: catalog, location: catalog.manifestURL.path)
      return
    }
    guard let url = URL(string: text), scheme == "file" || url.host.map({ !$0.isEmpty }) == true else {
      throw UsageError("--catalog: '\(text)' is not a valid URL")
    }
    switch scheme {
    case "http", "https":
      let catalog = HTTPUpdateCatalog(
        manifestURL: url, stallTimeout: stallTimeout, totalTimeout: fetchTimeout,
        trustedCertificates: trustedCertificates)
      self.init(catalog: catalog, location: url.absoluteString) { cancellation throws(ReaderError) in
        try catalog.manifest(cancellation: cancellation)
      }
    case "file":
      // A file: URL names a file on this machine: `file:///path` or `file://localhost/path`. Another
      // host's name would be read here as a local path, which is not what it says.
      if let host = url.host, !host.isEmpty, host.lowercased() != "localhost" {
        throw UsageError("--catalog: \(text) names the host '\(host)'; a file: URL reads files on this machine only")
      }
      self.init(file: ManifestUpdateCatalog(manifestURL: url), location: url.absoluteString)
    default: throw UsageError("--catalog takes a file path or an http:, https: or file: URL, not a \(scheme): URL")
    }
  }

  private init(file catalog: ManifestUpdateCatalog, location: String) {
    self.init(catalog: catalog, location: location) { cancellation throws(ReaderError) in
      guard !cancellation.isCancelled else { throw .canceled("manifest") }
      return try catalog.manifest()
    }
  }

  private init(
    catalog: any UpdateCatalog, location: String,
    fetch: @escaping @Sendable (CatalogCancellation) throws(ReaderError) -> UpdateManifest
  ) {
    self.catalog = catalog
    self.location = location
    fetchManifest = fetch
  }

  /// The manifest, fetched now; stopped by `cancellation`.
  func manifest(cancellation: CatalogCancellation) throws(ReaderError) -> UpdateManifest {
    try fetchManifest(cancellation)
  }
}
