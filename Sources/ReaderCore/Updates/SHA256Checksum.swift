/// A SHA-256 digest: the 32 bytes a firmware image must hash to.
///
/// Written as 64 hexadecimal digits (either case when parsed, lower case when printed or encoded).
/// ReaderKit computes digests with `SHA256Checksum.compute(_:)` (the system's libcrypto on Linux,
/// CryptoKit on Apple platforms).
public struct SHA256Checksum: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The 32 digest bytes.
  public let bytes: [UInt8]

  /// A digest from its 32 bytes, or `nil` when there are not exactly 32.
  public init?(bytes: some Collection<UInt8>) {
    guard bytes.count == 32 else { return nil }
    self.bytes = Array(bytes)
  }

  /// A digest from 64 hexadecimal digits, or `nil` for any other text.
  public init?(hex: String) {
    let digits = hex.utf8
    guard digits.count == 64 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(32)
    var high: UInt8?
    for digit in digits {
      guard let value = Self.value(ofHexDigit: digit) else { return nil }
      if let first = high {
        bytes.append(first << 4 | value)
        high = nil
      } else {
        high = value
      }
    }
    self.bytes = bytes
  }

  /// The 64 lower-case hexadecimal digits.
  public var hex: String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(64)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  public var description: String { hex }

  /// Decodes the hexadecimal form.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    guard let checksum = SHA256Checksum(hex: text) else {
      throw DecodingError.dataCorruptedError(
        in: container, debugDescription: "a SHA-256 digest is 64 hexadecimal digits")
    }
    self = checksum
  }

  /// Encodes the hexadecimal form.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(hex)
  }

  private static func value(ofHexDigit digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
