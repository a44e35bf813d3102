import Foundation
import ReaderCore
import Testing

@testable import ReaderKit

@Suite struct SHA256ChecksumTests {
  // FIPS 180-2 appendix B and the empty-message digest.
  @Test func matchesTheStandardTestVectors() {
    #expect(
      SHA256Checksum.compute(Data()).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(
      SHA256Checksum.compute(Data("abc".utf8)).hex
        == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(
      SHA256Checksum.compute(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).hex
        == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    #expect(
      SHA256Checksum.compute(Data(repeating: UInt8(ascii: "a"), count: 1_000_000)).hex
        == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  @Test func hashesAnyContiguousBytesAlike() {
    let bytes: [UInt8] = Array("abc".utf8)
    #expect(SHA256Checksum.compute(bytes) == SHA256Checksum.compute(Data(bytes)))
    let slice = Data("xxabcxx".utf8)[2..<5]
    #expect(SHA256Checksum.compute(slice) == SHA256Checksum.compute(bytes))
  }

  @Test func imageDescribedFromItsContentsVerifies() throws {
    let contents = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    let image = FirmwareImage(url: URL(string: "memory:image")!, contents: contents)
    #expect(image.size == 5000)
    try image.verify(contents, sha256: SHA256Checksum.compute)
    var altered = contents
    altered[4999] ^= 1
    #expect(throws: ReaderError.self) { try image.verify(altered, sha256: SHA256Checksum.compute) }
  }

  @Test func inMemoryCatalogWithTheRealDigestRejectsAnAlteredImage() throws {
    let contents = Data("firmware".utf8)
    let image = FirmwareImage(url: URL(string: "memory:fw")!, contents: contents)
    let catalog = InMemoryUpdateCatalog(images: [image.url: Data("firmwarf".utf8)], sha256: SHA256Checksum.compute)
    do {
      _ = try catalog.firmwareImage(for: image)
      Issue.record("an altered image was returned")
    } catch {
      #expect(error.code == .firmwareImageRejected)
      #expect(error.context["field"] == "sha256")
    }
  }
}
