import NFCKit

/// A tag for `SimulatedNFCRadio`: what its NDEF area holds, how large it is, and whether it can be
/// written. Its contents are raw bytes, exactly as `readerctl ndef encode` writes them, so a tag can
/// hold a malformed message too.
///
/// ```swift
/// radio.add(SimulatedNFCTag(name: "poster", message: NDEFMessage(try .uri("https://example.com"))))
/// radio.add(SimulatedNFCTag(name: "broken", ndef: [0xD1, 0x01, 0x05, 0x54]))   // PAYLOAD_LENGTH past the end
/// radio.add(.blank(name: "new"))                                                // formatted, no message
/// radio.add(.unformatted(name: "transit card"))                                 // no NDEF area at all
/// ```
public struct SimulatedNFCTag: Sendable, Hashable {
  /// What the tag holds.
  public enum Contents: Sendable, Hashable {
    /// An NDEF area holding these bytes (none: a blank, formatted tag).
    case ndef([UInt8])
    /// No NDEF area: the tag is not NDEF-formatted.
    case notFormatted
  }

  /// The capacity a tag gets unless told otherwise: an NTAG215's 496-byte data area.
  public static let defaultCapacity = 496

  /// The tag's name in the simulated world (unique).
  public var name: String
  /// What the tag holds.
  public var contents: Contents
  /// The largest NDEF message the tag takes, in bytes.
  public var capacity: Int
  /// Whether the NDEF area can be written (false for a read-only or locked tag).
  public var isWritable: Bool

  /// A tag whose NDEF area holds `ndef` as it is (well-formed or not).
  /// - Parameter capacity: by default the larger of `defaultCapacity` and the byte count.
  public init(name: String, ndef: [UInt8], capacity: Int? = nil, isWritable: Bool = true) {
    self.name = name
    self.contents = .ndef(ndef)
    self.capacity = capacity ?? max(Self.defaultCapacity, ndef.count)
    self.isWritable = isWritable
  }

  /// A tag holding `message` in its canonical encoding.
  public init(name: String, message: NDEFMessage, capacity: Int? = nil, isWritable: Bool = true) {
    self.init(name: name, ndef: message.encoded(), capacity: capacity, isWritable: isWritable)
  }

  /// A formatted tag that holds no message (its NDEF area has length 0).
  public static func blank(name: String, capacity: Int = defaultCapacity) -> SimulatedNFCTag {
    SimulatedNFCTag(name: name, ndef: [], capacity: capacity)
  }

  /// A tag without an NDEF area.
  public static func unformatted(name: String) -> SimulatedNFCTag {
    var tag = SimulatedNFCTag(name: name, ndef: [], capacity: 0, isWritable: false)
    tag.contents = .notFormatted
    return tag
  }

  /// The tag's bytes, when it is NDEF-formatted.
  public var ndefBytes: [UInt8]? {
    if case .ndef(let bytes) = contents { return bytes }
    return nil
  }

  /// What the tag reports to a status query.
  public var status: NFCRadioTagStatus {
    let formatted = ndefBytes != nil
    return NFCRadioTagStatus(isNDEFFormatted: formatted, isWritable: formatted && isWritable, capacity: capacity)
  }
}
