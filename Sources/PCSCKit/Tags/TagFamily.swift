/// Which NFC Forum tag type a card in a PC/SC reader is, told from its ATR.
///
/// A contactless reader reports a storage card (PC/SC Part 3) with a made-up ATR
/// `3B 8F 80 01 80 4F 0C A0 00 00 03 06 SS C0 C1 00 00 00 00 TCK`, where `SS` names the standard and
/// `C0 C1` the card; an ISO 14443-4 card gets an ATR carrying its historical bytes instead and speaks
/// ISO 7816-4 APDUs.
package enum TagFamily: Sendable, Hashable, CustomStringConvertible {
  /// NFC Forum Type 2 (NTAG21x, MIFARE Ultralight): storage card name `00 03`.
  case type2
  /// NFC Forum Type 4 (ISO-DEP): any card that is not a storage card.
  case type4
  /// A storage card without an NFC Forum NDEF mapping reachable here (MIFARE Classic, FeliCa, Topaz),
  /// by its PC/SC card name.
  case otherStorageCard(name: UInt16)

  /// The family of the card whose ATR is `atr`.
  package init(atr: [UInt8]) {
    let storagePrefix: [UInt8] = [0x3B, 0x8F, 0x80, 0x01, 0x80, 0x4F, 0x0C, 0xA0, 0x00, 0x00, 0x03, 0x06]
    guard atr.count >= 15, Array(atr.prefix(12)) == storagePrefix else {
      self = .type4
      return
    }
    let name = UInt16(atr[13]) << 8 | UInt16(atr[14])
    self = name == 0x0003 ? .type2 : .otherStorageCard(name: name)
  }

  package var description: String {
    switch self {
    case .type2: "Type 2"
    case .type4: "Type 4"
    case .otherStorageCard(let name): "storage card \(ResponseAPDU.hex(name))"
    }
  }
}
