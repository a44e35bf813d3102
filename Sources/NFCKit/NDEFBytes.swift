/// A read-only, zero-based view of bytes inside an NDEF message.
///
/// Decoded types, identifiers and payloads are `NDEFBytes` that share the decoder's input buffer:
/// decoding copies no bytes except when a chunked record has to be reassembled. Indices always
/// start at 0, whatever part of the input the view covers, so `payload[0]` is the first payload byte.
/// Two views are equal when they hold the same bytes.
///
/// ```swift
/// let payload: NDEFBytes = [0x02, 0x65, 0x6E]
/// payload[0]  // 0x02
/// payload.hex // "02656e"
/// ```
public struct NDEFBytes: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral,
  CustomStringConvertible
{
  /// The bytes, as a slice of the buffer they were decoded from.
  @usableFromInline private(set) var storage: ArraySlice<UInt8>

  /// Creates an empty view.
  public init() { storage = [] }

  /// Creates a view over an array of bytes (no copy).
  public init(_ bytes: [UInt8]) { storage = bytes[...] }

  /// Creates a view over a slice of bytes (no copy); index 0 is the slice's first byte.
  @inlinable public init(_ bytes: ArraySlice<UInt8>) { storage = bytes }

  /// Creates a view holding a copy of the bytes of a sequence.
  public init(_ bytes: some Sequence<UInt8>) { storage = ArraySlice(bytes) }

  /// Creates a view holding the UTF-8 encoding of a string.
  public init(utf8 string: String) { storage = ArraySlice(string.utf8) }

  /// Creates a view from an array literal of bytes.
  public init(arrayLiteral elements: UInt8...) { storage = elements[...] }

  /// Always 0.
  public var startIndex: Int { 0 }

  /// The number of bytes.
  public var endIndex: Int { storage.count }

  /// The number of bytes.
  public var count: Int { storage.count }

  /// Whether there are no bytes.
  public var isEmpty: Bool { storage.isEmpty }

  /// The byte at `position` (0-based). Traps when `position` is out of bounds, like `Array`.
  public subscript(position: Int) -> UInt8 { storage[storage.startIndex + position] }

  /// A zero-based view of a sub-range of these bytes (no copy).
  public subscript(bounds: Range<Int>) -> NDEFBytes {
    let base = storage.startIndex
    return NDEFBytes(storage[(base + bounds.lowerBound)..<(base + bounds.upperBound)])
  }

  /// A copy of the bytes as an array.
  public var array: [UInt8] { Array(storage) }

  /// The bytes as lowercase hexadecimal digits, two per byte, no separators (`"d10100"`).
  public var hex: String {
    let digits: [UInt8] = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(storage.count * 2)
    for byte in storage {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// The bytes as a string when they are valid UTF-8, otherwise `nil`.
  public var utf8String: String? { String(validating: storage, as: UTF8.self) }

  /// The bytes as a string when they are all US-ASCII (0x00–0x7F), otherwise `nil`.
  public var asciiString: String? { storage.withUnsafeBufferPointer(Self.asciiString) }

  /// `bytes` as a string when they are all US-ASCII, otherwise `nil`.
  static func asciiString(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    guard UnicodeValidation.isASCII(bytes) else { return nil }
    // ASCII, so valid UTF-8: the string is not checked again.
    return UnicodeValidation.string(checkedUTF8: bytes, isASCII: true)
  }

  /// The same as ``hex``.
  public var description: String { hex }

  /// Calls `body` with the bytes' contiguous storage.
  @inlinable
  public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    // `ArraySlice.withUnsafeBytes` is not typed-throws; keep the typed error across the call.
    var result: Result<R, E>?
    storage.withUnsafeBytes { buffer in
      do throws(E) {
        result = .success(try body(buffer))
      } catch {
        result = .failure(error)
      }
    }
    return try result!.get()
  }

  /// Calls `body` with the bytes as a buffer of `UInt8`, keeping a typed error across the call.
  func withBuffer<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
    try storage.withUnsafeBufferPointer(body)
  }

  /// Parses hexadecimal text into bytes: two digits per byte, upper or lower case, whitespace anywhere
  /// between bytes ignored. Returns `nil` for anything else (an odd number of digits, a non-hex character).
  ///
  /// ```swift
  /// NDEFBytes(hex: "d1 01 00 54")?.count // 4
  /// ```
  public init?(hex text: some StringProtocol) {
    guard let bytes = try? NDEFBytes(hexText: text.utf8) else { return nil }
    self = bytes
  }

  /// Parses hexadecimal text (as UTF-8 or ASCII bytes) by the rules of `init?(hex:)`, saying where
  /// and why it fails.
  /// - Throws: `NDEFHexError` with the offset of the first byte of `text` that breaks the rules.
  public init(hexText text: some Collection<UInt8>) throws(NDEFHexError) {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.count / 2)
    var high: UInt8?
    for (offset, character) in text.enumerated() {
      let nibble: UInt8
      switch character {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
      case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
        guard high == nil else { throw NDEFHexError(offset: offset, found: character, expectedSecondDigit: true) }
        continue
      default:
        throw NDEFHexError(offset: offset, found: character, expectedSecondDigit: high != nil)
      }
      if let value = high {
        bytes.append(value << 4 | nibble)
        high = nil
      } else {
        high = nibble
      }
    }
    guard high == nil else { throw NDEFHexError(offset: text.count, found: nil, expectedSecondDigit: true) }
    storage = bytes[...]
  }
}

/// Why hexadecimal text could not be read as bytes, and where.
public struct NDEFHexError: Error, Equatable, Sendable {
  /// The offset, in bytes of the text, of the character that broke the rules; the text's length
  /// when it ended in the middle of a byte.
  public var offset: Int
  /// The character found at `offset`; `nil` at the end of the text.
  public var found: UInt8?
  /// Whether the second digit of a byte was expected there (otherwise a digit or whitespace was).
  public var expectedSecondDigit: Bool

  /// Creates the error for the character `found` (`nil`: the end of the text) at `offset`.
  public init(offset: Int, found: UInt8?, expectedSecondDigit: Bool) {
    self.offset = offset
    self.found = found
    self.expectedSecondDigit = expectedSecondDigit
  }
}
