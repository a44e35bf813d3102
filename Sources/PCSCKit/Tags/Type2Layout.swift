/// The memory layout of an NFC Forum Type 2 tag as far as NDEF goes: the capability container in
/// page 3 and the TLV blocks of the data area from page 4.
package struct Type2Layout: Sendable, Hashable {
  /// The capability container's magic number: the tag holds NDEF data.
  package static let magic: UInt8 = 0xE1
  /// Bytes per page.
  package static let pageSize = 4
  /// The first page of the data area.
  package static let firstDataPage = 4

  /// Pages 0–3 as read: UID, internal bytes, static lock bytes and the capability container.
  package var header: [UInt8]
  /// The data area's size in bytes (the container's byte 2 times 8).
  package var dataAreaSize: Int

  /// Reads the capability container in page 3 of `header` (pages 0–3, 16 bytes).
  /// - Throws: `.notNDEFFormatted` when the magic number or the major version is not NFC Forum's,
  ///   `.malformed` when the header is short or the data area empty.
  package init(header: [UInt8]) throws(TagFailure) {
    guard header.count >= 16 else { throw .malformed("pages 0-3 came back as \(header.count) bytes, not 16") }
    guard header[12] == Self.magic else {
      throw .notNDEFFormatted("the capability container's magic number is \(Self.hexByte(header[12])), not E1")
    }
    guard header[13] >> 4 == 1 else {
      throw .notNDEFFormatted("mapping version \(header[13] >> 4).\(header[13] & 0x0F) is not supported")
    }
    guard header[14] > 0 else { throw .malformed("the capability container declares an empty data area") }
    self.header = Array(header.prefix(16))
    dataAreaSize = Int(header[14]) * 8
  }

  /// The capability container's access byte: read access in the high nibble, write access in the low
  /// one (`0` free, `F` none).
  package var access: UInt8 { header[15] }

  /// Whether the data area may be written.
  package var isWritable: Bool { access & 0x0F == 0 }

  /// The largest NDEF message an NDEF Message TLV at data area offset `offset` can hold.
  package func capacity(ofTLVAt offset: Int) -> Int {
    let room = dataAreaSize - offset
    if room >= 4 + 255 { return min(room - 4, 0xFFFE) }
    return max(0, min(room - 2, 254))
  }

  static func hexByte(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return digits.count == 1 ? "0" + digits : digits
  }
}

/// A Lock Control TLV's value: where the dynamic lock bits are and how many there are.
package struct Type2LockControl: Sendable, Hashable {
  /// The byte address (from the start of the tag's memory) of the first dynamic lock byte.
  package var byteAddress: Int
  /// How many lock bits there are.
  package var bitCount: Int

  package init(byteAddress: Int, bitCount: Int) {
    self.byteAddress = byteAddress
    self.bitCount = bitCount
  }

  /// Where the dynamic lock bits are on a tag without a Lock Control TLV: right after a data area of
  /// `size` bytes, one bit for each 8 bytes past the first 48 (none for a data area of 48 bytes).
  package static func defaultLocation(dataAreaSize size: Int) -> Type2LockControl? {
    guard size > 48 else { return nil }
    return Type2LockControl(byteAddress: 16 + size, bitCount: (size - 48 + 7) / 8)
  }

  /// Reads a 3-byte Lock Control TLV value.
  package init(_ value: some Collection<UInt8>) {
    let bytes = Array(value.prefix(3))
    let pageAddress = Int(bytes[0] >> 4)
    let byteOffset = Int(bytes[0] & 0x0F)
    let bytesPerPage = 1 << Int(bytes[2] & 0x0F)
    byteAddress = pageAddress * bytesPerPage + byteOffset
    bitCount = bytes[1] == 0 ? 256 : Int(bytes[1])
  }
}

/// The TLV blocks of a Type 2 data area, scanned as far as the bytes read so far allow.
package enum Type2TLVScan: Sendable, Hashable {
  /// The scan needs the data area read up to (not including) this offset.
  case needsBytes(upTo: Int)
  /// The NDEF Message TLV starts at `offset`; its value of `length` bytes at `valueOffset`.
  case ndef(offset: Int, valueOffset: Int, length: Int, lockControls: [Type2LockControl])
  /// The data area has no NDEF Message TLV (a terminator or the end came first).
  case noNDEF(String)
  /// A TLV's length runs past the data area.
  case malformed(String)

  /// The tags this scan knows: NULL, Lock Control, Memory Control, NDEF Message, proprietary,
  /// terminator.
  static let null: UInt8 = 0x00
  static let lockControl: UInt8 = 0x01
  static let ndefMessage: UInt8 = 0x03
  static let terminator: UInt8 = 0xFE

  /// Scans `area` (the data area's first bytes) in a data area of `size` bytes.
  package static func scan(_ area: [UInt8], size: Int) -> Type2TLVScan {
    var offset = 0
    var locks: [Type2LockControl] = []
    while offset < size {
      guard offset < area.count else { return .needsBytes(upTo: offset + 1) }
      let tag = area[offset]
      if tag == null {
        offset += 1
        continue
      }
      if tag == terminator { return .noNDEF("a terminator TLV at byte \(offset) comes before any NDEF Message TLV") }
      guard offset + 1 < size else {
        return .malformed("TLV \(Type2Layout.hexByte(tag)) at byte \(offset) has no length")
      }
      guard offset + 1 < area.count else { return .needsBytes(upTo: offset + 2) }
      var length = Int(area[offset + 1])
      var header = 2
      if length == 0xFF {
        guard offset + 3 < size else {
          return .malformed("TLV \(Type2Layout.hexByte(tag)) at byte \(offset) has a cut 3-byte length")
        }
        guard offset + 3 < area.count else { return .needsBytes(upTo: offset + 4) }
        length = Int(area[offset + 2]) << 8 | Int(area[offset + 3])
        header = 4
      }
      let value = offset + header
      guard value + length <= size else {
        return .malformed(
          "TLV \(Type2Layout.hexByte(tag)) at byte \(offset) claims \(length) bytes, past the \(size)-byte data area")
      }
      if tag == ndefMessage { return .ndef(offset: offset, valueOffset: value, length: length, lockControls: locks) }
      if tag == lockControl && length >= 3 {
        guard value + 3 <= area.count else { return .needsBytes(upTo: value + 3) }
        if locks.count < 8 { locks.append(Type2LockControl(area[value..<value + 3])) }
      }
      offset = value + length
    }
    return .noNDEF("the data area has no NDEF Message TLV")
  }
}
