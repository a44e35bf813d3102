import Foundation
import Testing

@testable import ReaderCore

private let now = Date(timeIntervalSince1970: 1_780_000_000)
private let bytes = Data("firmware 2.1".utf8)
/// A stand-in digest function for ReaderCore, which has no SHA-256: the bytes padded or cut to 32.
private let fakeDigest: @Sendable (Data) -> SHA256Checksum = { data in
  SHA256Checksum(bytes: Array((Array(data) + [UInt8](repeating: 0, count: 32)).prefix(32)))!
}
private let image = FirmwareImage(url: URL(string: "memory:m2-2.1")!, size: bytes.count, sha256: fakeDigest(bytes))
private var releaseFixture: UpdateRelease {
  get throws {
    UpdateRelease(
      deviceType: .stripeM2, version: try SoftwareVersion("2.1"), releasedAt: now, requiredAt: now + 86_400,
      components: .firmware, durationEstimate: .estimate5To15Minutes, image: image)
  }
}
private var installedFixture: InstalledSoftware {
  get throws {
    InstalledSoftware(
      deviceType: .stripeM2, serialNumber: "STRM2-0001", locationId: "tml_1", version: try SoftwareVersion("2.0"))
  }
}

@Suite(.timeLimit(.minutes(2))) struct InMemoryUpdateCatalogTests {
  @Test func offersAddedReleasesAndRecordsEveryQuestion() throws {
    let release = try releaseFixture
    let installed = try installedFixture
    let catalog = InMemoryUpdateCatalog()
    #expect(try catalog.availableUpdate(for: installed, at: now) == .upToDate)
    catalog.add(release, image: bytes)
    let answer = try catalog.availableUpdate(for: installed, at: now)
    #expect(answer.update?.deviceSoftwareVersion == "2.1")
    #expect(answer.installedVersionSupersededAt == now)
    #expect(catalog.checks == [installed, installed])
    #expect(catalog.releases == [release])
  }

  @Test func injectedFailuresFailOneCallEachInOrder() throws {
    let release = try releaseFixture
    let installed = try installedFixture
    let catalog = InMemoryUpdateCatalog(releases: [release])
    let first = ReaderError(.updateCatalogTimedOut, "first")
    let second = ReaderError(.updateCatalogInvalid, "second")
    catalog.failNextCheck(with: first)
    catalog.failNextCheck(with: second)
    #expect(throws: first) { try catalog.availableUpdate(for: installed, at: now) }
    #expect(throws: second) { try catalog.availableUpdate(for: installed, at: now) }
    #expect(try catalog.availableUpdate(for: installed, at: now).update != nil)
    #expect(catalog.checks.count == 3)

    catalog.setImage(bytes, at: image.url)
    catalog.failNextImage()
    #expect(throws: ReaderError(.updateCatalogUnavailable, "injected image failure")) {
      try catalog.firmwareImage(for: image)
    }
    #expect(try catalog.firmwareImage(for: image) == bytes)
    #expect(catalog.imageRequests == [image.url, image.url])
  }

  @Test func imageMissingIsUnavailableNamingItsURL() throws {
    let release = try releaseFixture
    let catalog = InMemoryUpdateCatalog(releases: [release])
    #expect(
      throws: ReaderError(
        .updateCatalogUnavailable, "no firmware image at memory:m2-2.1", context: ["url": "memory:m2-2.1"])
    ) { try catalog.firmwareImage(for: image) }
  }

  @Test func imageOfTheWrongSizeIsRejectedEvenWithoutADigestFunction() {
    let catalog = InMemoryUpdateCatalog(images: [image.url: bytes + [0]])
    do {
      _ = try catalog.firmwareImage(for: image)
      Issue.record("a padded image was returned")
    } catch {
      #expect(error.code == .firmwareImageRejected)
      #expect(error.context["field"] == "size")
    }
  }

  @Test func digestIsCheckedWhenTheCatalogHasADigestFunction() throws {
    var altered = bytes
    altered[0] ^= 0xFF
    let trusting = InMemoryUpdateCatalog(images: [image.url: altered])
    #expect(try trusting.firmwareImage(for: image) == altered)
    let verifying = InMemoryUpdateCatalog(images: [image.url: altered], sha256: fakeDigest)
    do {
      _ = try verifying.firmwareImage(for: image)
      Issue.record("an altered image was returned")
    } catch {
      #expect(error.code == .firmwareImageRejected)
      #expect(error.context["field"] == "sha256")
    }
    verifying.setImage(bytes, at: image.url)
    #expect(try verifying.firmwareImage(for: image) == bytes)
  }

  @Test func removeAllForgetsReleasesAndImages() throws {
    let release = try releaseFixture
    let installed = try installedFixture
    let catalog = InMemoryUpdateCatalog()
    catalog.add(release, image: bytes)
    catalog.removeAll()
    #expect(try catalog.availableUpdate(for: installed, at: now) == .upToDate)
    #expect(throws: ReaderError.self) { try catalog.firmwareImage(for: image) }
  }

  @Test func asyncFormsGiveTheSameAnswersAndErrors() async throws {
    let release = try releaseFixture
    let installed = try installedFixture
    let catalog = InMemoryUpdateCatalog(releases: [release], images: [image.url: bytes])
    let answer = try await catalog.availableUpdate(for: installed, at: now)
    #expect(answer.update?.deviceSoftwareVersion == "2.1")
    #expect(try await catalog.firmwareImage(for: image) == bytes)
    catalog.failNextCheck(with: ReaderError(.updateCatalogTimedOut, "slow"))
    await #expect(throws: ReaderError(.updateCatalogTimedOut, "slow")) {
      try await catalog.availableUpdate(for: installed, at: now)
    }
  }
}
