/// A card in a simulated PC/SC reader: its ATR, and how it answers each command APDU (data and status
/// word, as `SCardTransmit` returns them).
public protocol SimulatedSmartCard: Sendable {
  /// The ATR the reader reports for the card.
  var atr: [UInt8] { get }
  /// The card's answer to `apdu`.
  mutating func respond(to apdu: [UInt8]) -> [UInt8]
}

/// The parts of a short command APDU (`CLA INS P1 P2 [Lc data] [Le]`).
struct ShortAPDU {
  var instruction: UInt8
  var p1: UInt8
  var p2: UInt8
  var data: [UInt8]
  /// The expected response length (256 for `00`), `nil` when absent.
  var expected: Int?

  init?(_ bytes: [UInt8]) {
    guard bytes.count >= 4 else { return nil }
    instruction = bytes[1]
    p1 = bytes[2]
    p2 = bytes[3]
    data = []
    expected = nil
    if bytes.count == 5 {
      expected = bytes[4] == 0 ? 256 : Int(bytes[4])
    } else if bytes.count > 5 {
      let length = Int(bytes[4])
      guard length > 0, bytes.count >= 5 + length, bytes.count <= 6 + length else { return nil }
      data = Array(bytes[5..<5 + length])
      if bytes.count == 6 + length { expected = bytes[5 + length] == 0 ? 256 : Int(bytes[5 + length]) }
    }
  }

  /// `P1 P2` as a 15-bit offset.
  var offset: Int { Int(p1 & 0x7F) << 8 | Int(p2) }
  /// `P1 P2` as a block number.
  var block: Int { Int(p1) << 8 | Int(p2) }

  static func status(_ word: UInt16) -> [UInt8] { [UInt8(word >> 8), UInt8(word & 0xFF)] }
}
