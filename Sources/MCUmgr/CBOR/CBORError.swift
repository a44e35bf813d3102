/// Why bytes are not a CBOR data item `CBORDecoder` accepts, and where: `offset` is the byte offset
/// (from the start of the input) of the item or byte at fault.
public struct CBORError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong.
  public enum Reason: Sendable, Hashable {
    /// The input ends inside an item.
    case truncated
    /// An initial byte uses additional information 28, 29 or 30, which RFC 8949 reserves.
    case reservedAdditionalInformation(UInt8)
    /// A "break" byte (0xFF) outside an indefinite-length string, array or map.
    case unexpectedBreak
    /// Arrays and maps nest deeper than the decoder's limit.
    case nestingTooDeep(limit: Int)
    /// A text string is not well-formed UTF-8.
    case invalidUTF8
    /// A well-formed item outside the subset SMP uses (a tag, a float, another simple value, an
    /// indefinite-length integer).
    case unsupported(String)
    /// A chunk of an indefinite-length string is not a definite-length string of the same type.
    case invalidChunk
    /// A length claims more bytes (or items) than the input has left.
    case lengthExceedsInput(UInt64)
    /// A map holds the same key twice.
    case duplicateKey
    /// An indefinite-length map ends after a key, without its value.
    case missingMapValue
    /// Bytes follow the single top-level item.
    case trailingBytes(count: Int)
  }

  /// What is wrong.
  public var reason: Reason
  /// The byte offset at fault.
  public var offset: Int

  /// Creates an error.
  public init(_ reason: Reason, at offset: Int) {
    self.reason = reason
    self.offset = offset
  }

  /// A sentence naming the fault and its offset.
  public var description: String {
    let what: String =
      switch reason {
      case .truncated: "the input ends inside an item"
      case .reservedAdditionalInformation(let value): "reserved additional information \(value)"
      case .unexpectedBreak: "a break byte outside an indefinite-length item"
      case .nestingTooDeep(let limit): "arrays and maps nest deeper than \(limit)"
      case .invalidUTF8: "a text string that is not UTF-8"
      case .unsupported(let kind): "unsupported item (\(kind))"
      case .invalidChunk: "an indefinite-length string chunk of the wrong type"
      case .lengthExceedsInput(let length): "a length of \(length) exceeds the input"
      case .duplicateKey: "a map key that appears twice"
      case .missingMapValue: "a map key without a value"
      case .trailingBytes(let count): "\(count) byte(s) after the item"
      }
    return "CBOR: \(what) at byte \(offset)"
  }
}
