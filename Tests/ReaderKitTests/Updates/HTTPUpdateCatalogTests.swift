import Foundation
import ReaderCore
import Testing

@testable import ReaderKit

/// Both ways the catalog fetches: plain HTTP and HTTPS.
private let transports = CatalogScheme.available

/// The HTTP catalog against a real HTTP server on 127.0.0.1 (`Server/catalog_server.py`), over plain
/// HTTP and over HTTPS (the server's own CA trusted).
@Suite(.timeLimit(.minutes(1))) struct HTTPUpdateCatalogTests {
  /// A catalog over `path` on `server`, with short timeouts.
  private func catalog(
    _ server: CatalogSite, _ path: String = "manifest.json", stallTimeout: Duration = .seconds(5),
    maximumManifestSize: Int = UpdateManifest.maximumSize
  ) -> HTTPUpdateCatalog {
    HTTPUpdateCatalog(
      manifestURL: server.url(path), stallTimeout: stallTimeout, totalTimeout: .seconds(20),
      maximumManifestSize: maximumManifestSize, trustedCertificates: server.trustedCertificates)
  }

  /// Expects `body` to throw `code` naming `url`; returns the error.
  @discardableResult
  private func expectError<T>(
    _ code: ReaderError.Code, url: URL, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> T
  ) -> ReaderError? {
    do {
      let value = try body()
      Issue.record("answered \(value)", sourceLocation: sourceLocation)
      return nil
    } catch let error as ReaderError {
      #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
      #expect(error.context["url"] == url.absoluteString, "\(error)", sourceLocation: sourceLocation)
      return error
    } catch {
      Issue.record("threw \(error), not a ReaderError", sourceLocation: sourceLocation)
      return nil
    }
  }

  @Test(arguments: transports) func fetchesTheManifestAndAVerifiedImageResolvedAgainstItsURL(
    scheme: CatalogScheme
  ) throws {
    try withCatalogServer(scheme) { server in
      try ManifestFixture().write(to: server.root)
      let catalog = catalog(server, "manifest.json")
      let answer = try catalog.availableUpdate(for: installedM2("2.01.00.17"), at: march(2))
      #expect(answer.update?.deviceSoftwareVersion == "2.02.00.00")
      #expect(answer.installedVersionSupersededAt == march(1))
      let image = try #require(answer.update?.image)
      #expect(image.url == server.url("images/m2-2.02.00.00.bin"))
      #expect(try catalog.firmwareImage(for: image) == ManifestFixture.imageBytes("2.02.00.00"))
    }
  }

  @Test(arguments: transports) func asyncFormsFetchOverHTTPToo(scheme: CatalogScheme) async throws {
    try await withCatalogServer(scheme) { server in
      try ManifestFixture().write(to: server.root)
      let present = catalog(server, "manifest.json")
      let answer = try await present.availableUpdate(for: installedM2("2.0"), at: march(2))
      let image = try #require(answer.update?.image)
      #expect(try await present.firmwareImage(for: image) == ManifestFixture.imageBytes("2.02.00.00"))
      let missing = catalog(server, "absent.json")
      await #expect(throws: ReaderError.self) {
        try await missing.availableUpdate(for: installedM2("2.0"), at: march(2))
      }
    }
  }

  @Test(arguments: transports) func httpErrorStatusIsUnavailableWithTheStatus(scheme: CatalogScheme)
    throws
  {
    try withCatalogServer(scheme) { server in
      let error = expectError(.updateCatalogUnavailable, url: server.url("manifest.json")) {
        try catalog(server, "manifest.json").availableUpdate(for: installedM2("2.0"), at: march(2))
      }
      #expect(error?.context["status"] == "404")
      let failing = catalog(server, "status/503")
      #expect(
        expectError(.updateCatalogUnavailable, url: server.url("status/503")) { try failing.manifest() }?
          .context["status"] == "503")
    }
  }

  @Test(arguments: transports) func refusedConnectionIsUnavailableNamingTheURL(scheme: CatalogScheme)
    throws
  {
    try withRefusingPort { port in
      let url = URL(string: "\(scheme.rawValue)://127.0.0.1:\(port)/manifest.json")!
      let catalog = HTTPUpdateCatalog(manifestURL: url, stallTimeout: .seconds(5))
      let error = expectError(.updateCatalogUnavailable, url: url) {
        try catalog.availableUpdate(for: installedM2("2.0"), at: march(2))
      }
      #expect(error?.context["reason"] == "connection refused")
    }
  }

  @Test(arguments: transports) func stalledServerEndsInATimeoutSoonAfterTheStallTimeout(
    scheme: CatalogScheme
  ) throws {
    try withCatalogServer(scheme) { server in
      let started = ContinuousClock.now
      let error = expectError(.updateCatalogTimedOut, url: server.url("stall")) {
        try catalog(server, "stall", stallTimeout: .milliseconds(500)).manifest()
      }
      #expect(error?.context["timeout"] == "0.5")
      // Not a timing claim, a hang guard: the server would hold the request for ten minutes.
      #expect(ContinuousClock.now - started < .seconds(15))
    }
  }

  @Test(arguments: transports) func endlessBodyIsCutAtTheBoundAndNotReadToItsEnd(scheme: CatalogScheme)
    throws
  {
    try withCatalogServer(scheme) { server in
      let error = expectError(.updateCatalogInvalid, url: server.url("endless")) {
        try catalog(server, "endless", maximumManifestSize: 100_000).manifest()
      }
      #expect(error?.context["limit"] == "100000")
      // Reading stopped at the bound: the server, which would send 1 GiB to a client that kept reading,
      // got no further than what socket buffers hold. URLSession on Linux reads ahead without
      // back-pressure (hundreds of megabytes were seen), which is why the catalog does not use it there.
      #if canImport(Glibc)
        let progress = try String(contentsOf: server.plainURL("endless-progress"), encoding: .utf8)
        let sent = try #require(Int(progress.split(separator: " ").last?.trimmingCharacters(in: .newlines) ?? ""))
        #expect(sent < 64 << 20, "the server says \(progress)")
      #endif
    }
  }

  @Test(arguments: transports) func chunkedBodyIsReadAndCutAtTheBound(scheme: CatalogScheme) throws {
    try withCatalogServer(scheme) { server in
      try ManifestFixture().write(to: server.root)
      let manifest = try catalog(server, "chunked/manifest.json").manifest()
      #expect(manifest.releases.count == 2)
      #expect(manifest.releases[0].image.url == server.url("chunked/images/m2-2.01.00.18.bin"))
      #expect(
        try catalog(server, "chunked/manifest.json").firmwareImage(for: manifest.releases[0].image)
          == ManifestFixture.imageBytes("2.01.00.18"))
      let size = ManifestFixture().data.count
      let error = expectError(.updateCatalogInvalid, url: server.url("chunked/manifest.json")) {
        try catalog(server, "chunked/manifest.json", maximumManifestSize: size - 1).manifest()
      }
      #expect(error?.context["limit"] == "\(size - 1)")
      var short = manifest.releases[0].image
      short.size = 500
      let cut = expectError(.firmwareImageRejected, url: short.url) {
        try catalog(server, "chunked/manifest.json").firmwareImage(for: short)
      }
      #expect(cut?.context["actual"] == "more than 500")
    }
  }

  @Test(arguments: transports) func announcedOversizedBodyIsRefusedAtOnce(scheme: CatalogScheme) throws {
    try withCatalogServer(scheme) { server in
      let error = expectError(.updateCatalogInvalid, url: server.url("huge")) {
        try catalog(server, "huge").manifest()
      }
      #expect(error?.context["limit"] == "\(UpdateManifest.maximumSize)")
    }
  }

  @Test(arguments: transports) func malformedManifestNamesTheFieldAndTheURL(scheme: CatalogScheme)
    throws
  {
    try withCatalogServer(scheme) { server in
      try Data(#"{"manifestVersion": 1, "releases": [{"deviceType": "stripeM2"]}"#.utf8)
        .write(to: server.root.appendingPathComponent("broken.json"))
      let broken = expectError(.updateCatalogInvalid, url: server.url("broken.json")) {
        try catalog(server, "broken.json").manifest()
      }
      #expect(broken?.context["offset"] == "61")
      var fixture = ManifestFixture()
      fixture.editRelease(1) { $0["version"] = "2.x" }
      try fixture.write(to: server.root)
      let invalid = expectError(.updateCatalogInvalid, url: server.url("manifest.json")) {
        try catalog(server, "manifest.json").availableUpdate(for: installedM2("2.0"), at: march(2))
      }
      #expect(invalid?.context["field"] == "releases[1].version")
      #expect(invalid?.context["value"] == "2.x")
    }
  }

  @Test(arguments: transports) func fileImageInAnHTTPManifestIsRefused(scheme: CatalogScheme) throws {
    try withCatalogServer(scheme) { server in
      var fixture = ManifestFixture()
      fixture.editImage(0) { $0["url"] = "file:///etc/passwd" }
      try fixture.write(to: server.root)
      let error = expectError(.updateCatalogInvalid, url: server.url("manifest.json")) {
        try catalog(server, "manifest.json").manifest()
      }
      #expect(error?.context["field"] == "releases[0].image.url")
    }
  }

  @Test(arguments: transports) func imageWithAnAlteredByteIsRejectedByDigest(scheme: CatalogScheme)
    throws
  {
    try withCatalogServer(scheme) { server in
      try ManifestFixture().write(to: server.root)
      let catalog = catalog(server, "manifest.json")
      let image = try catalog.manifest().releases[1].image
      var bytes = ManifestFixture.imageBytes("2.02.00.00")
      bytes[0] ^= 0x80
      try bytes.write(to: server.root.appendingPathComponent("images/m2-2.02.00.00.bin"))
      let error = expectError(.firmwareImageRejected, url: image.url) { try catalog.firmwareImage(for: image) }
      #expect(error?.context["field"] == "sha256")
      #expect(error?.context["actual"] == SHA256Checksum.compute(bytes).hex)
    }
  }

  @Test(arguments: transports) func imageOfTheWrongSizeIsRejectedAndALongerOneIsCutAtItsSize(
    scheme: CatalogScheme
  ) throws {
    try withCatalogServer(scheme) { server in
      try ManifestFixture().write(to: server.root)
      let catalog = catalog(server, "manifest.json")
      let image = try catalog.manifest().releases[1].image
      let file = server.root.appendingPathComponent("images/m2-2.02.00.00.bin")
      let bytes = ManifestFixture.imageBytes("2.02.00.00")
      try bytes.prefix(1000).write(to: file)
      let short = expectError(.firmwareImageRejected, url: image.url) { try catalog.firmwareImage(for: image) }
      #expect(short?.context["field"] == "size")
      #expect(short?.context["actual"] == "1000")
      try (bytes + bytes).write(to: file)
      let long = expectError(.firmwareImageRejected, url: image.url) { try catalog.firmwareImage(for: image) }
      #expect(long?.context["field"] == "size")
      #expect(long?.context["actual"] == "more than \(bytes.count)")
      // An endless image is cut at its declared size too.
      let endless = FirmwareImage(url: server.url("endless"), size: 4096, sha256: image.sha256)
      let cut = expectError(.firmwareImageRejected, url: endless.url) { try catalog.firmwareImage(for: endless) }
      #expect(cut?.context["actual"] == "more than 4096")
    }
  }

  @Test(arguments: transports) func missingImageIsUnavailableWithTheStatus(scheme: CatalogScheme)
    throws
  {
    try withCatalogServer(scheme) { server in
      try ManifestFixture().write(to: server.root)
      let catalog = catalog(server, "manifest.json")
      let image = try catalog.manifest().releases[0].image
      try FileManager.default.removeItem(at: server.root.appendingPathComponent("images/m2-2.01.00.18.bin"))
      let error = expectError(.updateCatalogUnavailable, url: image.url) { try catalog.firmwareImage(for: image) }
      #expect(error?.context["status"] == "404")
    }
  }

  @Test func nonHTTPManifestURLIsRefusedWithoutAFetch() {
    let url = URL(fileURLWithPath: "/tmp/manifest.json")
    expectError(.updateCatalogUnavailable, url: url) { try HTTPUpdateCatalog(manifestURL: url).manifest() }
  }
}
