import Foundation
import ReaderCore
import ReaderKit

/// MCUboot images for the update tests, laid out as `imgtool` lays them out (a 32-byte header, the body,
/// a TLV area with the SHA-256 of header and body), and a catalog offering one of them.
enum UpdateImages {
  /// An image of version `major.minor.revision` with `bodySize` seeded bytes.
  static func image(_ major: UInt8, _ minor: UInt8, _ revision: UInt16, bodySize: Int) -> [UInt8] {
    func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
    var bytes = le32(0x96F3_B83D) + le32(0) + le16(32) + le16(0) + le32(UInt32(bodySize)) + le32(0)
    bytes += [major, minor] + le16(Int(revision)) + le32(0) + le32(0)
    var value: UInt8 = 1
    for _ in 0..<bodySize {
      value = value &* 31 &+ 7
      bytes.append(value)
    }
    let tlv = le16(0x10) + le16(32) + SHA256Checksum.compute(bytes).bytes
    return bytes + le16(0x6907) + le16(4 + tlv.count) + tlv
  }

  /// The SHA-256 of a whole image file, in hex, as a manifest names it.
  static func hex(_ image: [UInt8]) -> String { SHA256Checksum.compute(image).hex }

  /// The SHA-256 TLV of an image made by `image`: the hash a reader reports for it.
  static func hash(_ image: [UInt8]) -> [UInt8] { Array(image.suffix(32)) }

  /// A catalog offering `image` as version `version` of `deviceType`, released a day ago and required
  /// `requiredIn` seconds from now (in the past: required already).
  static func catalog(
    _ image: [UInt8], version: String = "1.1.0", deviceType: DeviceType = .stripeM2, requiredIn: TimeInterval
  ) throws -> InMemoryUpdateCatalog {
    let catalog = InMemoryUpdateCatalog(sha256: { SHA256Checksum.compute($0) })
    let data = Data(image)
    catalog.add(
      UpdateRelease(
        deviceType: deviceType, version: try SoftwareVersion(version), releasedAt: Date().addingTimeInterval(-86_400),
        requiredAt: Date().addingTimeInterval(requiredIn), components: .firmware,
        durationEstimate: .estimate1To2Minutes,
        image: FirmwareImage(
          url: URL(string: "https://updates.example/reader-\(version).bin")!, size: data.count,
          sha256: SHA256Checksum.compute(data))),
      image: data)
    return catalog
  }
}
