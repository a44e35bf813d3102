/// The capability container of an NFC Forum Type 4 tag (file `E103`): the mapping version, how much
/// one command may move, and where the NDEF file is and who may read and write it.
package struct Type4CapabilityContainer: Sendable, Hashable {
  /// The mapping version byte, e.g. `0x20` for 2.0.
  package var version: UInt8
  /// MLe: the most data one READ BINARY response may carry.
  package var maxResponseData: Int
  /// MLc: the most data one UPDATE BINARY command may carry.
  package var maxCommandData: Int
  /// The NDEF file's identifier.
  package var fileID: UInt16
  /// The NDEF file's size: NLEN's 2 bytes plus the largest message.
  package var maxFileSize: Int
  /// `00`: anyone may read the NDEF file.
  package var readAccess: UInt8
  /// `00`: anyone may write the NDEF file; `FF`: nobody; other values are proprietary (not writable here).
  package var writeAccess: UInt8

  /// The offset of the write access byte in the container, where a lock writes `FF`.
  package static let writeAccessOffset = 14
  /// The bytes of the container ReaderKit reads: CCLEN up to the NDEF File Control TLV's end.
  package static let length = 15

  /// Parses the first 15 bytes of a capability container.
  /// - Throws: `.notNDEFFormatted` for a mapping version other than 1.x or 2.x (3.0's extended file is
  ///   not read here) or no NDEF File Control TLV; `.malformed` for fields out of their ranges.
  package init(_ bytes: [UInt8]) throws(TagFailure) {
    guard bytes.count >= Self.length else {
      throw .malformed("the capability container holds \(bytes.count) bytes; it has at least \(Self.length)")
    }
    func word(_ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }
    let length = word(0)
    guard length >= Self.length else { throw .malformed("CCLEN is \(length); it is at least \(Self.length)") }
    version = bytes[2]
    guard version >> 4 == 1 || version >> 4 == 2 else {
      throw .notNDEFFormatted("mapping version \(version >> 4).\(version & 0x0F) is not supported")
    }
    maxResponseData = word(3)
    maxCommandData = word(5)
    guard maxResponseData >= 1, maxCommandData >= 1 else {
      throw .malformed("MLe \(maxResponseData) or MLc \(maxCommandData) is zero")
    }
    guard bytes[7] == 0x04 else { throw .notNDEFFormatted("the capability container has no NDEF File Control TLV") }
    guard bytes[8] >= 6 else { throw .malformed("the NDEF File Control TLV's length is \(bytes[8]); it is 6") }
    fileID = UInt16(word(9))
    guard ![0x0000, 0xE102, 0xE103, 0x3F00, 0x3FFF, 0xFFFF].contains(fileID) else {
      throw .malformed("the NDEF file identifier \(ResponseAPDU.hex(fileID)) is reserved")
    }
    maxFileSize = word(11)
    guard (3...0xFFFE).contains(maxFileSize) else {
      throw .malformed("the NDEF file size \(maxFileSize) is outside 3-65534")
    }
    readAccess = bytes[13]
    writeAccess = bytes[14]
  }

  /// The largest message the NDEF file holds.
  package var capacity: Int { maxFileSize - 2 }

  /// Whether the NDEF file may be written.
  package var isWritable: Bool { writeAccess == 0x00 }

  /// How many bytes one READ BINARY asks for at most: MLe, within a short APDU.
  package var readChunk: Int { min(maxResponseData, CommandAPDU.maxShortResponse) }

  /// How many bytes one UPDATE BINARY carries at most: MLc, within a short APDU.
  package var writeChunk: Int { min(maxCommandData, CommandAPDU.maxShortCommand) }
}
