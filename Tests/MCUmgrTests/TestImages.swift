import MCUmgr
import ReaderCore
import ReaderKit
import TestSupport
import Testing

/// MCUboot images for tests, laid out as `imgtool` lays them out.
enum TestImages {
  static let sha256: @Sendable ([UInt8]) -> SHA256Checksum = { SHA256Checksum.compute($0) }

  /// An image of `version` with a body of `bodySize` seeded bytes, a SHA-256 TLV (and a protected TLV
  /// area when `protected`), `headerSize` bytes of header.
  static func image(
    version: MCUbootImage.Version = .init(major: 1, minor: 1, revision: 0), bodySize: Int = 1_000, seed: UInt8 = 1,
    headerSize: Int = 32, protected: Bool = false
  ) -> [UInt8] {
    func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
    let protectedArea: [UInt8] = protected ? le16(0x6908) + le16(4 + 4 + 4) + le16(0x50) + le16(4) + le32(7) : []
    var bytes = le32(MCUbootImage.magic) + le32(0) + le16(headerSize) + le16(protectedArea.count)
    bytes += le32(UInt32(bodySize)) + le32(0) + [version.major, version.minor] + le16(Int(version.revision))
    bytes += le32(version.build) + le32(0)
    bytes += [UInt8](repeating: 0, count: headerSize - 32)
    var value = seed
    for _ in 0..<bodySize {
      value = value &* 31 &+ 7
      bytes.append(value)
    }
    bytes += protectedArea
    let hash = sha256(bytes).bytes
    let keyHash: [UInt8] = le16(0x01) + le16(4) + [9, 9, 9, 9]
    let tlvs = keyHash + le16(0x10) + le16(32) + hash
    return bytes + le16(0x6907) + le16(4 + tlvs.count) + tlvs
  }

  /// The SHA-256 TLV of `image`.
  static func hash(_ image: [UInt8]) -> [UInt8] { fixture(or: []) { try MCUbootImage(parsing: image).sha256 } }
}
