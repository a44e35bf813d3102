/// The command APDUs ReaderKit sends to NFC tags through a PC/SC reader: ISO 7816-4 for Type 4 tags,
/// and the PC/SC Part 3 storage-card pseudo-APDUs (class `FF`) that contactless readers such as the
/// ACR122U turn into Type 2 READ and WRITE commands. All are short APDUs (Lc and Le of one byte).
package enum CommandAPDU {
  /// The NFC Forum Type 4 Tag NDEF application, mapping version 2.0 and later.
  package static let ndefApplicationV2: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]
  /// The NFC Forum Type 4 Tag NDEF application of mapping version 1.0.
  package static let ndefApplicationV1: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x00]
  /// The capability container's file identifier.
  package static let capabilityContainerFile: UInt16 = 0xE103
  /// The most data one short APDU moves (Le `00` asks for 256 bytes; Lc holds up to 255).
  package static let maxShortResponse = 256
  package static let maxShortCommand = 255

  /// SELECT by name (`00 A4 04 00 Lc AID 00`): selects an application.
  package static func selectApplication(_ aid: [UInt8]) -> [UInt8] {
    [0x00, 0xA4, 0x04, 0x00, UInt8(aid.count)] + aid + [0x00]
  }

  /// SELECT by file identifier, first or only occurrence, no FCI (`00 A4 00 0C 02 ID`).
  package static func selectFile(_ id: UInt16) -> [UInt8] {
    [0x00, 0xA4, 0x00, 0x0C, 0x02, UInt8(id >> 8), UInt8(id & 0xFF)]
  }

  /// READ BINARY of `length` bytes (1–256) at `offset` (0–0x7FFF) of the selected file.
  package static func readBinary(offset: Int, length: Int) -> [UInt8] {
    [0x00, 0xB0, UInt8((offset >> 8) & 0x7F), UInt8(offset & 0xFF), UInt8(truncatingIfNeeded: length)]
  }

  /// UPDATE BINARY of `data` (1–255 bytes) at `offset` (0–0x7FFF) of the selected file.
  package static func updateBinary(offset: Int, _ data: some Collection<UInt8>) -> [UInt8] {
    [0x00, 0xD6, UInt8((offset >> 8) & 0x7F), UInt8(offset & 0xFF), UInt8(data.count)] + data
  }

  /// Storage card READ BINARY (`FF B0 MSB LSB Le`): 16 bytes (four pages) from page `page` of a
  /// Type 2 tag, or `length` bytes.
  package static func readPages(from page: Int, length: Int = 16) -> [UInt8] {
    [0xFF, 0xB0, UInt8((page >> 8) & 0xFF), UInt8(page & 0xFF), UInt8(length)]
  }

  /// Storage card UPDATE BINARY (`FF D6 MSB LSB 04 data`): writes one 4-byte page of a Type 2 tag.
  package static func writePage(_ page: Int, _ data: [UInt8]) -> [UInt8] {
    [0xFF, 0xD6, UInt8((page >> 8) & 0xFF), UInt8(page & 0xFF), UInt8(data.count)] + data
  }
}

/// A response APDU: the data the card returned and its status word (SW1 SW2, `90 00` for success).
package struct ResponseAPDU: Sendable, Hashable {
  /// `90 00`: the command completed normally.
  package static let success: UInt16 = 0x9000

  /// The response data, without the status word.
  package var data: [UInt8]
  /// SW1 SW2 as one number, e.g. `0x6A82`.
  package var statusWord: UInt16

  /// Splits `bytes` into data and status word; `nil` when fewer than 2 bytes came back, which is what
  /// a reader returns when the tag left in the middle of the command.
  package init?(_ bytes: [UInt8]) {
    guard bytes.count >= 2 else { return nil }
    data = Array(bytes.dropLast(2))
    statusWord = UInt16(bytes[bytes.count - 2]) << 8 | UInt16(bytes[bytes.count - 1])
  }

  package init(data: [UInt8], statusWord: UInt16) {
    self.data = data
    self.statusWord = statusWord
  }

  /// Whether the status word is `90 00`.
  package var isSuccess: Bool { statusWord == Self.success }

  /// `6A82`: the status word as four hex digits.
  package static func hex(_ statusWord: UInt16) -> String {
    let digits = String(statusWord, radix: 16, uppercase: true)
    return String(repeating: "0", count: 4 - digits.count) + digits
  }
}
