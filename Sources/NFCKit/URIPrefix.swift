/// One entry of the URI record's abbreviation table (NFC Forum URI RTD): an identifier code and the
/// string it stands for.
///
/// Codes 0x00–0x23 are defined (0x00 means "no abbreviation"); 0x24–0xFF are reserved (RFU). The
/// URI RTD has readers treat a reserved code as 0x00 and forbids generators to write one, so a
/// reserved code can be read (``init(readingCode:)``: it stands for no abbreviation and is kept, so
/// the record re-encodes to the same bytes) but not built (``init(code:)`` returns `nil`, and
/// ``URIRecord/payload()`` refuses one).
///
/// ```swift
/// URIPrefix(code: 0x02)?.string                         // "https://www."
/// URIPrefix.longestMatch(for: "https://www.example.com") // code 0x02
/// ```
public struct URIPrefix: Hashable, Sendable, CustomStringConvertible {
  /// The identifier code: 0x00–0x23, or a reserved code read from a tag.
  public let code: UInt8

  private init(unchecked code: UInt8) { self.code = code }

  /// The entry for a code, or `nil` for a reserved code (0x24–0xFF).
  public init?(code: UInt8) {
    guard Int(code) < URIPrefix.strings.count else { return nil }
    self.code = code
  }

  /// The entry a reader sees for any code: a reserved code (0x24–0xFF) stands for no abbreviation.
  public init(readingCode code: UInt8) {
    self.code = code
  }

  /// Whether the code is reserved (0x24–0xFF); such a prefix stands for no abbreviation.
  public var isReserved: Bool { Int(code) >= URIPrefix.strings.count }

  /// The string the code stands for; empty for code 0x00 and for reserved codes.
  public var string: String { isReserved ? "" : URIPrefix.strings[Int(code)] }

  /// Code 0x00: no abbreviation, the URI field holds the whole URI.
  public static let none = URIPrefix(unchecked: 0)

  /// All 36 entries, in code order.
  public static let all: [URIPrefix] = (0..<UInt8(strings.count)).map { URIPrefix(unchecked: $0) }

  /// The entry whose string is the longest prefix of `uri` (comparing UTF-8 bytes), or ``none``.
  public static func longestMatch(for uri: String) -> URIPrefix {
    var best = URIPrefix.none
    var bestLength = 0
    for (code, prefix) in utf8Strings.enumerated() where prefix.count > bestLength && uri.utf8.starts(with: prefix) {
      best = URIPrefix(unchecked: UInt8(code))
      bestLength = prefix.count
    }
    return best
  }

  /// `0x02 "https://www."`.
  public var description: String {
    let hex = String(code, radix: 16)
    return "0x\(hex.count == 1 ? "0" : "")\(hex) \"\(string)\""
  }

  /// The table, NFC Forum URI Record Type Definition 1.0, section 3.2.2, as strings stored in the program (a
  /// prefix's bytes are read from there without a reference to count).
  static let staticStrings: [StaticString] = [
    "", "http://www.", "https://www.", "http://", "https://", "tel:", "mailto:", "ftp://anonymous:anonymous@",
    "ftp://ftp.", "ftps://", "sftp://", "smb://", "nfs://", "ftp://", "dav://", "news:", "telnet://", "imap:",
    "rtsp://", "urn:", "pop:", "sip:", "sips:", "tftp:", "btspp://", "btl2cap://", "btgoep://", "tcpobex://",
    "irdaobex://", "file://", "urn:epc:id:", "urn:epc:tag:", "urn:epc:pat:", "urn:epc:raw:", "urn:epc:", "urn:nfc:",
  ]

  /// The table.
  static let strings: [String] = staticStrings.map { $0.description }

  /// The table's strings as UTF-8 bytes.
  static let utf8Strings: [[UInt8]] = strings.map { Array($0.utf8) }
}
