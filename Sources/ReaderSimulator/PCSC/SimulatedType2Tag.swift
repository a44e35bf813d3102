/// A simulated NFC Forum Type 2 tag (NTAG21x, MIFARE Ultralight) behind a reader's storage-card
/// pseudo-APDUs: `FF B0` reads four pages (wrapping at the end of memory, as an Ultralight does),
/// `FF D6` writes one. Pages 0–1 are read-only, the lock bytes of page 2 and the capability container of
/// page 3 are one-time programmable (bits are OR-ed in), and locked pages refuse writes with `63 00`.
///
/// `memory` holds every page, so a test can write any layout into it: a container claiming a larger
/// data area than the memory holds, TLVs past the data area, no NDEF TLV at all.
public struct SimulatedType2Tag: SimulatedSmartCard, Hashable {
  /// The ATR a PC/SC reader reports for a MIFARE Ultralight family card (NTAG21x included).
  public static let ultralightATR: [UInt8] = [
    0x3B, 0x8F, 0x80, 0x01, 0x80, 0x4F, 0x0C, 0xA0, 0x00, 0x00, 0x03, 0x06, 0x03, 0x00, 0x03, 0x00, 0x00, 0x00,
    0x00, 0x68,
  ]

  public var atr: [UInt8] = SimulatedType2Tag.ultralightATR
  /// Every page of the tag, 4 bytes each.
  public var memory: [UInt8]
  /// The byte address of the dynamic lock bytes, when the tag has dynamic lock bits.
  public var dynamicLockAddress: Int?
  /// How many bytes of the data area past page 15 one dynamic lock bit locks.
  public var dynamicLockBytesPerBit = 8

  /// A tag of `pages` pages whose data area (from page 4) holds `area` after a capability container
  /// declaring `dataAreaSize` bytes with `access`.
  public init(pages: Int, dataAreaSize: Int, access: UInt8 = 0x00, area: [UInt8]) {
    memory = [UInt8](repeating: 0, count: pages * 4)
    memory.replaceSubrange(0..<9, with: [0x04, 0x51, 0x7C, 0xA1, 0x22, 0x34, 0x56, 0x78, 0x9A])
    memory.replaceSubrange(12..<16, with: [0xE1, 0x10, UInt8(dataAreaSize / 8), access])
    let end = min(memory.count, 16 + area.count)
    memory.replaceSubrange(16..<end, with: area.prefix(end - 16))
  }

  /// An NTAG213 (144-byte data area, dynamic lock bits in page 40, one for every 2 pages) holding `message` in an NDEF TLV.
  public static func ntag213(message: [UInt8], access: UInt8 = 0x00) -> SimulatedType2Tag {
    var tag = SimulatedType2Tag(pages: 45, dataAreaSize: 144, access: access, area: tlv(message))
    tag.dynamicLockAddress = 160
    return tag
  }

  /// An NTAG216 (872-byte data area) holding `message`.
  public static func ntag216(message: [UInt8]) -> SimulatedType2Tag {
    var tag = SimulatedType2Tag(pages: 231, dataAreaSize: 872, area: tlv(message))
    tag.dynamicLockAddress = 904
    return tag
  }

  /// `03 L message FE` (or `03 FF L1 L2 message FE` from 255 bytes).
  public static func tlv(_ message: [UInt8]) -> [UInt8] {
    let length: [UInt8] =
      message.count > 254 ? [0xFF, UInt8(message.count >> 8), UInt8(message.count & 0xFF)] : [UInt8(message.count)]
    return [0x03] + length + message + [0xFE]
  }

  /// The pages that cannot be written: by the static lock bits of page 2, then by the dynamic ones.
  private func isLocked(page: Int) -> Bool {
    if page < 2 { return true }
    if (3...7).contains(page) { return memory[10] & UInt8(1 << page) != 0 }
    if (8...15).contains(page) { return memory[11] & UInt8(1 << (page - 8)) != 0 }
    guard let address = dynamicLockAddress, page * 4 < address else { return false }
    let bit = (page * 4 - 64) / dynamicLockBytesPerBit
    let lockByte = address + bit / 8
    return lockByte < memory.count && memory[lockByte] & UInt8(1 << (bit % 8)) != 0
  }

  public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
    guard apdu.count >= 5, apdu[0] == 0xFF, let command = ShortAPDU(apdu) else { return ShortAPDU.status(0x6A81) }
    let pages = memory.count / 4
    switch command.instruction {
    case 0xB0:
      guard command.block < pages else { return ShortAPDU.status(0x6300) }
      let wanted = min(command.expected ?? 16, 16)
      let data = (0..<wanted).map { memory[(command.block * 4 + $0) % memory.count] }
      return data + ShortAPDU.status(0x9000)
    case 0xD6:
      guard command.block < pages, command.data.count == 4, !isLocked(page: command.block) else {
        return ShortAPDU.status(0x6300)
      }
      let start = command.block * 4
      for (index, byte) in command.data.enumerated() {
        if command.block == 2 {
          if index >= 2 { memory[start + index] |= byte }
        } else if command.block == 3 {
          memory[start + index] |= byte
        } else {
          memory[start + index] = byte
        }
      }
      return ShortAPDU.status(0x9000)
    default:
      return ShortAPDU.status(0x6A81)
    }
  }
}
