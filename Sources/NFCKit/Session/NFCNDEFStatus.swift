/// What `NFCNDEFTag.queryNDEFStatus` reports about a tag's NDEF area (Core NFC's raw values; no 0).
public enum NFCNDEFStatus: UInt, Sendable, Hashable, CaseIterable, CustomStringConvertible {
  /// The tag has no NDEF area (not NDEF-formatted).
  case notSupported = 1
  /// The NDEF area can be read and written.
  case readWrite = 2
  /// The NDEF area can only be read.
  case readOnly = 3

  /// `notSupported`, `readWrite` or `readOnly`.
  public var description: String {
    switch self {
    case .notSupported: "notSupported"
    case .readWrite: "readWrite"
    case .readOnly: "readOnly"
    }
  }
}
