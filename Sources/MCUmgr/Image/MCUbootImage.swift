/// What ReaderKit reads of an MCUboot image before sending it to a reader, following MCUboot's
/// "Image Format" (`bootutil/image.h`; all fields little-endian):
///
/// ```
/// header (ih_hdr_size bytes, 32 of them defined):
///   0  ih_magic 0x96f3b83d   4  ih_load_addr   8  ih_hdr_size (u16)   10 ih_protect_tlv_size (u16)
///   12 ih_img_size (u32, without the header)   16 ih_flags   20 ih_ver {u8 major, u8 minor, u16 revision,
///   u32 build_num}   28 pad
/// body (ih_img_size bytes)
/// protected TLV area (when ih_protect_tlv_size > 0): info {u16 0x6908, u16 total incl. info} + TLVs
/// TLV area: info {u16 0x6907, u16 total incl. info} + TLVs {u16 type, u16 length, value}
/// ```
///
/// The SHA-256 TLV (type 0x10) holds the hash of the header, the body and the protected TLV area: the
/// hash a reader reports for the image in its image state (Zephyr's `img_mgmt` "hash" field), which is
/// not the SHA-256 of the whole file. Bytes after the TLV area (padding, a trailer) are allowed.
public struct MCUbootImage: Sendable, Hashable {
  /// The header's magic number.
  public static let magic: UInt32 = 0x96F3_B83D
  /// The magic of the TLV area's info header.
  public static let tlvInfoMagic: UInt16 = 0x6907
  /// The magic of the protected TLV area's info header.
  public static let protectedTLVInfoMagic: UInt16 = 0x6908
  /// The type of the SHA-256 TLV.
  public static let sha256TLV: UInt16 = 0x10

  /// An image version as `imgtool` sets it.
  public struct Version: Sendable, Hashable, CustomStringConvertible {
    /// The major number.
    public var major: UInt8
    /// The minor number.
    public var minor: UInt8
    /// The revision.
    public var revision: UInt16
    /// The build number.
    public var build: UInt32

    /// Creates a version.
    public init(major: UInt8, minor: UInt8, revision: UInt16, build: UInt32 = 0) {
      self.major = major
      self.minor = minor
      self.revision = revision
      self.build = build
    }

    /// As Zephyr's `img_mgmt_ver_str` prints it: `major.minor.revision`, then `.build` when not 0.
    public var description: String {
      "\(major).\(minor).\(revision)" + (build == 0 ? "" : ".\(build)")
    }
  }

  /// The header's size; the body starts there.
  public var headerSize: Int
  /// The size of the protected TLV area (0 when there is none).
  public var protectedTLVSize: Int
  /// The body's size.
  public var imageSize: Int
  /// The header flags.
  public var flags: UInt32
  /// The image's version.
  public var version: Version
  /// The SHA-256 TLV's 32 bytes.
  public var sha256: [UInt8]

  /// How many bytes from the start the SHA-256 TLV covers: header, body and protected TLV area.
  public var hashedLength: Int { headerSize + imageSize + protectedTLVSize }

  /// Reads the header and the TLV areas of `bytes`.
  /// - Throws: `MCUbootImageError` naming the field at fault and its offset.
  public init(parsing bytes: [UInt8]) throws(MCUbootImageError) {
    func u16(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
    func u32(_ offset: Int) -> UInt32 {
      (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }
    guard bytes.count >= 32 else { throw MCUbootImageError(.truncated("header"), at: 0) }
    guard u32(0) == Self.magic else { throw MCUbootImageError(.badMagic(u32(0)), at: 0) }
    headerSize = u16(8)
    protectedTLVSize = u16(10)
    imageSize = Int(u32(12))
    flags = u32(16)
    version = Version(major: bytes[20], minor: bytes[21], revision: UInt16(u16(22)), build: u32(24))
    guard headerSize >= 32 else { throw MCUbootImageError(.headerTooSmall(headerSize), at: 8) }
    var offset = headerSize + imageSize
    guard offset <= bytes.count else { throw MCUbootImageError(.truncated("body"), at: bytes.count) }
    if protectedTLVSize > 0 {
      guard offset + 4 <= bytes.count else { throw MCUbootImageError(.truncated("protected TLV area"), at: offset) }
      guard u16(offset) == Int(Self.protectedTLVInfoMagic) else {
        throw MCUbootImageError(.badTLVInfoMagic(UInt16(u16(offset))), at: offset)
      }
      // MCUboot's bootutil refuses an image whose protected area disagrees with the header.
      guard u16(offset + 2) == protectedTLVSize else {
        throw MCUbootImageError(.protectedTLVSizeMismatch(header: protectedTLVSize, area: u16(offset + 2)), at: offset)
      }
      offset += protectedTLVSize
    }
    guard offset + 4 <= bytes.count else { throw MCUbootImageError(.truncated("TLV area"), at: offset) }
    guard u16(offset) == Int(Self.tlvInfoMagic) else {
      throw MCUbootImageError(.badTLVInfoMagic(UInt16(u16(offset))), at: offset)
    }
    let end = offset + u16(offset + 2)
    guard end <= bytes.count, end >= offset + 4 else { throw MCUbootImageError(.truncated("TLV area"), at: offset) }
    var hash: [UInt8]?
    var cursor = offset + 4
    while cursor < end {
      guard cursor + 4 <= end else { throw MCUbootImageError(.truncated("TLV"), at: cursor) }
      let (type, length) = (u16(cursor), u16(cursor + 2))
      guard cursor + 4 + length <= end else { throw MCUbootImageError(.truncated("TLV"), at: cursor) }
      if type == Int(Self.sha256TLV) {
        guard hash == nil else { throw MCUbootImageError(.multipleSHA256, at: cursor) }
        guard length == 32 else { throw MCUbootImageError(.badSHA256Length(length), at: cursor) }
        hash = Array(bytes[cursor + 4..<cursor + 36])
      }
      cursor += 4 + length
    }
    guard let hash else { throw MCUbootImageError(.noSHA256, at: offset) }
    sha256 = hash
  }
}

/// Why bytes are not an MCUboot image a reader can be given, and where.
public struct MCUbootImageError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong.
  public enum Reason: Sendable, Hashable {
    /// The file ends inside the named part.
    case truncated(String)
    /// The header does not start with 0x96f3b83d.
    case badMagic(UInt32)
    /// The header claims fewer than its 32 bytes.
    case headerTooSmall(Int)
    /// A TLV area does not start with its info magic (0x6907, or 0x6908 for the protected one).
    case badTLVInfoMagic(UInt16)
    /// The protected TLV area's size differs from the header's.
    case protectedTLVSizeMismatch(header: Int, area: Int)
    /// There is no SHA-256 TLV.
    case noSHA256
    /// There is more than one SHA-256 TLV.
    case multipleSHA256
    /// The SHA-256 TLV is not 32 bytes long.
    case badSHA256Length(Int)
  }

  /// What is wrong.
  public var reason: Reason
  /// The byte offset in the file.
  public var offset: Int

  /// Creates an error.
  public init(_ reason: Reason, at offset: Int) {
    self.reason = reason
    self.offset = offset
  }

  /// A sentence naming the fault and its offset.
  public var description: String {
    let what: String =
      switch reason {
      case .truncated(let part): "the file ends inside the \(part)"
      case .badMagic(let magic): "the header magic is 0x\(String(magic, radix: 16)), not 0x96f3b83d"
      case .headerTooSmall(let size): "the header size is \(size) bytes (at least 32)"
      case .badTLVInfoMagic(let magic): "a TLV area starts with 0x\(String(magic, radix: 16))"
      case .protectedTLVSizeMismatch(let header, let area):
        "the protected TLV area is \(area) bytes, the header says \(header)"
      case .noSHA256: "there is no SHA-256 TLV"
      case .multipleSHA256: "there are two SHA-256 TLVs"
      case .badSHA256Length(let length): "the SHA-256 TLV is \(length) bytes"
      }
    return "MCUboot image: \(what) (byte \(offset))"
  }
}
