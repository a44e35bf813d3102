import Foundation
import ReaderCore
import Testing

@testable import ReaderKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite struct ManifestUpdateCatalogTests {
  @Test func offersTheNewestReleaseForTheReadersLocationAndServesItsVerifiedImage() throws {
    try withTemporaryDirectory { directory in
      let catalog = ManifestUpdateCatalog(manifestURL: try ManifestFixture().write(to: directory))
      let atHome = try catalog.availableUpdate(for: installedM2("2.01.00.17"), at: march(2))
      #expect(atHome.update?.deviceSoftwareVersion == "2.02.00.00")
      #expect(atHome.update?.components == [.config, .firmware, .keys])
      #expect(atHome.update?.requiredAt == march(15))
      #expect(atHome.installedVersionSupersededAt == march(1))
      let image = try #require(atHome.update?.image)
      #expect(image.url == directory.appendingPathComponent("images/m2-2.02.00.00.bin").standardizedFileURL)
      #expect(try catalog.firmwareImage(for: image) == ManifestFixture.imageBytes("2.02.00.00"))

      let upToDate = try catalog.availableUpdate(for: installedM2("2.02.00.00", location: "tml_7"), at: march(2))
      #expect(upToDate == .upToDate)
      let beforeRelease = try catalog.availableUpdate(for: installedM2("2.01.00.17"), at: march(1) - 1)
      #expect(beforeRelease == .upToDate)
    }
  }

  @Test func pathInitializerAndRelativeImagePathsAboveTheManifestWork() throws {
    try withTemporaryDirectory { directory in
      var fixture = ManifestFixture()
      fixture.editImage(1) { $0["url"] = "../images/m2-2.02.00.00.bin" }
      let sub = directory.appendingPathComponent("manifests", isDirectory: true)
      try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
      try fixture.write(to: directory)  // images under directory/images
      try fixture.data.write(to: sub.appendingPathComponent("manifest.json"))
      let catalog = ManifestUpdateCatalog(path: sub.appendingPathComponent("manifest.json").path)
      let image = try #require(try catalog.availableUpdate(for: installedM2("2.0"), at: march(3)).update?.image)
      #expect(try catalog.firmwareImage(for: image) == ManifestFixture.imageBytes("2.02.00.00"))
    }
  }

  @Test func aFileURLNamingAnotherHostIsRefusedNotReadAsALocalPath() throws {
    try withTemporaryDirectory { directory in
      let local = try ManifestFixture().write(to: directory)
      let remote = try #require(URL(string: "file://otherhost" + local.path))
      #expect(try ManifestUpdateCatalog(manifestURL: local).manifest().releases.count == 2)
      #expect(
        try ManifestUpdateCatalog(manifestURL: URL(string: "file://localhost" + local.path)!).manifest()
          .releases.count == 2)
      do throws(ReaderError) {
        _ = try ManifestUpdateCatalog(manifestURL: remote).manifest()
        Issue.record("file://otherhost/… was read")
      } catch {
        #expect(error.code == .updateCatalogUnavailable)
        #expect(error.context["reason"] == "a file URL naming another host")
      }
    }
  }

  @Test func missingManifestIsUnavailableNeverNoUpdate() throws {
    try withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("absent.json")
      do throws(ReaderError) {
        _ = try ManifestUpdateCatalog(manifestURL: url).availableUpdate(for: installedM2("1.0"), at: march(2))
        Issue.record("a missing manifest answered")
      } catch {
        #expect(error.code == .updateCatalogUnavailable)
        #expect(error.context["url"] == url.absoluteString)
        #expect(error.context["errno"] == "\(ENOENT)")
      }
    }
  }

  @Test func directoryOrFIFOAtTheManifestPathIsRefusedWithoutBlocking() throws {
    try withTemporaryDirectory { directory in
      #expect(throws: ReaderError.self) {
        try ManifestUpdateCatalog(manifestURL: directory).manifest()
      }
      let fifo = directory.appendingPathComponent("fifo.json")
      #expect(mkfifo(fifo.path, 0o600) == 0)
      do throws(ReaderError) {
        _ = try ManifestUpdateCatalog(manifestURL: fifo).manifest()
        Issue.record("a FIFO was read as a manifest")
      } catch {
        #expect(error.code == .updateCatalogUnavailable)
        #expect(error.context["reason"] == "not a regular file")
      }
    }
  }

  @Test func malformedManifestFileNamesTheFieldAndTheFile() throws {
    try withTemporaryDirectory { directory in
      var fixture = ManifestFixture()
      fixture.editImage(1) { $0["sha256"] = "00ff" }
      let url = try fixture.write(to: directory)
      do throws(ReaderError) {
        _ = try ManifestUpdateCatalog(manifestURL: url).availableUpdate(for: installedM2("1.0"), at: march(2))
        Issue.record("a malformed manifest answered")
      } catch {
        #expect(error.code == .updateCatalogInvalid)
        #expect(error.context["field"] == "releases[1].image.sha256")
        #expect(error.context["value"] == "00ff")
        #expect(error.context["url"] == url.absoluteString)
      }
    }
  }

  @Test func httpImageInAFileManifestIsRefused() throws {
    try withTemporaryDirectory { directory in
      var fixture = ManifestFixture()
      fixture.editImage(0) { $0["url"] = "http://127.0.0.1:1/m2.bin" }
      let catalog = ManifestUpdateCatalog(manifestURL: try fixture.write(to: directory))
      do throws(ReaderError) {
        _ = try catalog.manifest()
        Issue.record("an http image was accepted in a file manifest")
      } catch {
        #expect(error.context["field"] == "releases[0].image.url")
      }
    }
  }

  @Test func manifestFileOverTheBoundIsRefused() throws {
    try withTemporaryDirectory { directory in
      let url = try ManifestFixture().write(to: directory)
      let size = try Data(contentsOf: url).count
      do throws(ReaderError) {
        _ = try ManifestUpdateCatalog(manifestURL: url, maximumManifestSize: size - 1).manifest()
        Issue.record("an oversized manifest was read")
      } catch {
        #expect(error.code == .updateCatalogInvalid)
        #expect(error.context["limit"] == "\(size - 1)")
      }
      #expect(try ManifestUpdateCatalog(manifestURL: url, maximumManifestSize: size).manifest().releases.count == 2)
    }
  }

  @Test func imageWithAnAlteredByteIsRejectedByDigest() throws {
    try withTemporaryDirectory { directory in
      let catalog = ManifestUpdateCatalog(manifestURL: try ManifestFixture().write(to: directory))
      let image = try catalog.manifest().releases[0].image
      var bytes = ManifestFixture.imageBytes("2.01.00.18")
      bytes[100] ^= 0x01
      try bytes.write(to: image.url)
      do throws(ReaderError) {
        _ = try catalog.firmwareImage(for: image)
        Issue.record("an altered image was returned")
      } catch {
        #expect(error.code == .firmwareImageRejected)
        #expect(error.context["field"] == "sha256")
        #expect(error.context["expected"] == image.sha256.hex)
        #expect(error.context["actual"] == SHA256Checksum.compute(bytes).hex)
        #expect(error.context["url"] == image.url.absoluteString)
      }
    }
  }

  @Test func imageShorterOrLongerThanDeclaredIsRejectedBySize() throws {
    try withTemporaryDirectory { directory in
      let catalog = ManifestUpdateCatalog(manifestURL: try ManifestFixture().write(to: directory))
      let image = try catalog.manifest().releases[0].image
      let bytes = ManifestFixture.imageBytes("2.01.00.18")
      try bytes.dropLast().write(to: image.url)
      do throws(ReaderError) {
        _ = try catalog.firmwareImage(for: image)
        Issue.record("a truncated image was returned")
      } catch {
        #expect(error.code == .firmwareImageRejected)
        #expect(error.context["field"] == "size")
        #expect(error.context["actual"] == "\(bytes.count - 1)")
      }
      try (bytes + Data(count: 1 << 20)).write(to: image.url)
      do throws(ReaderError) {
        _ = try catalog.firmwareImage(for: image)
        Issue.record("a padded image was returned")
      } catch {
        #expect(error.code == .firmwareImageRejected)
        #expect(error.context["field"] == "size")
        #expect(error.context["actual"] == "more than \(bytes.count)")
      }
    }
  }

  @Test func missingImageFileIsUnavailable() throws {
    try withTemporaryDirectory { directory in
      let catalog = ManifestUpdateCatalog(manifestURL: try ManifestFixture().write(to: directory))
      let image = try catalog.manifest().releases[1].image
      try FileManager.default.removeItem(at: image.url)
      do throws(ReaderError) {
        _ = try catalog.firmwareImage(for: image)
        Issue.record("a missing image was returned")
      } catch {
        #expect(error.code == .updateCatalogUnavailable)
        #expect(error.context["url"] == image.url.absoluteString)
      }
    }
  }

  #if os(Linux)
    /// A /proc file reports a size of 0 but has content: the bound holds while reading, not only at `fstat`.
    @Test func fileLargerThanItsReportedSizeIsStillCutAtTheBound() throws {
      let status = URL(fileURLWithPath: "/proc/self/status")
      #expect(try FileFetch.contents(of: status, limit: 100) == .exceeded(limit: 100))
      guard case .complete(let all) = try FileFetch.contents(of: status, limit: 1 << 20) else {
        Issue.record("/proc/self/status is over 1 MiB")
        return
      }
      #expect(all.count > 100)
    }
  #endif

  @Test func boundedReadReturnsExactlyTheFileAtAndAroundTheBound() throws {
    try withTemporaryDirectory { directory in
      let file = directory.appendingPathComponent("bytes")
      let bytes = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
      try bytes.write(to: file)
      #expect(try FileFetch.contents(of: file, limit: 200_000) == .complete(bytes))
      #expect(try FileFetch.contents(of: file, limit: 199_999) == .exceeded(limit: 199_999))
      try Data().write(to: file)
      #expect(try FileFetch.contents(of: file, limit: 0) == .complete(Data()))
    }
  }

  /// The digest computed while reading is the digest of the bytes returned, for files read in one piece, in
  /// several, and ending exactly at a piece's end.
  @Test(arguments: [0, 1, 262_143, 262_144, 262_145, 1_000_003])
  func hashWhileReadingIsTheDigestOfTheBytesRead(size: Int) throws {
    try withTemporaryDirectory { directory in
      let file = directory.appendingPathComponent("image")
      var random = SeededRandom(seed: UInt64(size))
      let bytes = Data((0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) })
      try bytes.write(to: file)
      let (body, digest) = try FileFetch.hashedContents(of: file, limit: size)
      #expect(body == .complete(bytes))
      #expect(digest == SHA256Checksum.compute(bytes))
      let (over, none) = try FileFetch.hashedContents(of: file, limit: size - 1)
      #expect(size == 0 || over == .exceeded(limit: size - 1))
      #expect(size == 0 || none == nil)
    }
  }

  #if os(Linux)
    /// /proc/self/status says it is empty: it is read past its reported size, in a buffer that grows, and
    /// the digest still covers every byte read.
    @Test func hashWhileReadingCoversAFileLargerThanItsReportedSize() throws {
      let status = URL(fileURLWithPath: "/proc/self/status")
      let (body, digest) = try FileFetch.hashedContents(of: status, limit: 1 << 20)
      guard case .complete(let bytes) = body else {
        Issue.record("/proc/self/status is over 1 MiB")
        return
      }
      #expect(bytes.count > 100)
      #expect(digest == SHA256Checksum.compute(bytes))
    }
  #endif
}
