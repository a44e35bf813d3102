/// A simulated NFC Forum Type 4 tag (ISO-DEP), as `SimulatedPCSCService` presents it: an NDEF
/// application with a capability container (`E103`) and an NDEF file, answering SELECT, READ BINARY
/// and UPDATE BINARY as the Type 4 Tag specification describes.
///
/// Its fields set what its capability container declares and what the tag really holds, so a test
/// can make it hostile: a container claiming a larger file than there is (`fileSize`), an NLEN past
/// the file (write it into `file`), a status word for one instruction (`refusals`).
public struct SimulatedType4Tag: SimulatedSmartCard, Hashable {
  /// The ATR of an ISO 14443-4 card as a contactless reader reports it.
  public static let isoDEPATR: [UInt8] = [0x3B, 0x81, 0x80, 0x01, 0x80, 0x80]

  public var atr: [UInt8] = SimulatedType4Tag.isoDEPATR
  /// Whether the tag knows the NDEF application's version 2 AID (`D2760000850101`); the version 1 AID
  /// (`D2760000850100`) is known when this is false.
  public var answersVersion2AID = true
  /// The mapping version byte of the container.
  public var version: UInt8 = 0x20
  /// MLe and MLc.
  public var maxResponseData = 0xFF
  public var maxCommandData = 0xFF
  /// The NDEF file identifier.
  public var fileID: UInt16 = 0xE104
  /// The NDEF file's size as the container declares it.
  public var declaredFileSize: Int
  /// The read and write access bytes of the container.
  public var readAccess: UInt8 = 0x00
  public var writeAccess: UInt8 = 0x00
  /// Whether the container's write access byte can be set to `FF` (a lock).
  public var isLockable = true
  /// The NDEF file as the tag holds it: NLEN then the message; its length is the real file size.
  public var file: [UInt8]
  /// Status words the tag answers instead of doing the instruction (`INS` byte → SW).
  public var refusals: [UInt8: UInt16] = [:]
  /// A container to answer instead of the one the fields make.
  public var containerOverride: [UInt8]?

  private var applicationSelected = false
  private var selected: UInt16?

  /// A tag holding `message` (raw NDEF bytes) in an NDEF file of `fileSize` bytes (NLEN included).
  public init(message: [UInt8], fileSize: Int = 2048) {
    declaredFileSize = fileSize
    file = [UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
    if file.count < fileSize { file += repeatElement(0, count: fileSize - file.count) }
  }

  /// The capability container the fields make.
  public var container: [UInt8] {
    if let containerOverride { return containerOverride }
    func word(_ value: Int) -> [UInt8] { [UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)] }
    return [0x00, 0x0F, version] + word(maxResponseData) + word(maxCommandData) + [0x04, 0x06] + word(Int(fileID))
      + word(declaredFileSize) + [readAccess, writeAccess]
  }

  /// The NDEF message the file holds, by its NLEN (cut at the file's end).
  public var message: [UInt8] {
    guard file.count >= 2 else { return [] }
    let length = Int(file[0]) << 8 | Int(file[1])
    return Array(file.dropFirst(2).prefix(length))
  }

  public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
    guard let command = ShortAPDU(apdu) else { return ShortAPDU.status(0x6700) }
    if let word = refusals[command.instruction] { return ShortAPDU.status(word) }
    switch command.instruction {
    case 0xA4 where command.p1 == 0x04:
      let v2: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]
      let v1: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x00]
      applicationSelected = command.data == (answersVersion2AID ? v2 : v1)
      selected = nil
      return ShortAPDU.status(applicationSelected ? 0x9000 : 0x6A82)
    case 0xA4 where command.p1 == 0x00:
      guard applicationSelected, command.data.count == 2 else { return ShortAPDU.status(0x6A82) }
      let id = UInt16(command.data[0]) << 8 | UInt16(command.data[1])
      guard id == 0xE103 || id == fileID else { return ShortAPDU.status(0x6A82) }
      selected = id
      return ShortAPDU.status(0x9000)
    case 0xB0:
      guard let selected else { return ShortAPDU.status(0x6986) }
      let contents = selected == 0xE103 ? container : file
      let wanted = command.expected ?? 256
      guard command.offset <= contents.count else { return ShortAPDU.status(0x6B00) }
      let data = Array(contents[command.offset..<min(contents.count, command.offset + wanted)])
      return data + ShortAPDU.status(data.count == wanted ? 0x9000 : 0x6282)
    case 0xD6:
      guard let selected else { return ShortAPDU.status(0x6986) }
      if selected == 0xE103 {
        guard isLockable, command.offset == 14, command.data == [0xFF] else { return ShortAPDU.status(0x6982) }
        writeAccess = 0xFF
        return ShortAPDU.status(0x9000)
      }
      guard writeAccess == 0x00 else { return ShortAPDU.status(0x6982) }
      guard command.offset + command.data.count <= file.count else { return ShortAPDU.status(0x6A84) }
      file.replaceSubrange(command.offset..<command.offset + command.data.count, with: command.data)
      return ShortAPDU.status(0x9000)
    default:
      return ShortAPDU.status(0x6D00)
    }
  }
}
