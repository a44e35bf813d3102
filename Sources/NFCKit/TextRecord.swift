/// The typed view of an NFC Forum well-known Text record (`T`): a string with its language code.
///
/// The payload is a status byte (bit 7: UTF-16 instead of UTF-8; bit 6: reserved, ignored when reading
/// and written as 0; bits 5–0: length of the language code), the IANA language code in US-ASCII, then
/// the text. UTF-16 text may start with a byte-order mark (`FE FF` big-endian, `FF FE` little-endian);
/// without one it is big-endian, as the Text RTD specifies. The UTF-8 form has no byte-order mark: an
/// `EF BB BF` at its start is kept as U+FEFF in ``text``.
///
/// ```swift
/// let record = try TextRecord(text: "hello", languageCode: "en").record()
/// record.payload.hex                 // "02656e68656c6c6f"
/// try TextRecord(record).languageCode // "en"
/// ```
public struct TextRecord: Hashable, Sendable {
  /// How the text is stored in the payload.
  public enum Encoding: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// UTF-8 (status bit 7 clear).
    case utf8
    /// UTF-16, big-endian, no byte-order mark.
    case utf16BigEndian
    /// UTF-16, big-endian, starting with the byte-order mark `FE FF`.
    case utf16BigEndianWithBOM
    /// UTF-16, little-endian, starting with the byte-order mark `FF FE` (what Python's "UTF-16" codec
    /// writes on little-endian machines).
    case utf16LittleEndianWithBOM

    /// Whether status bit 7 is set (any UTF-16 form).
    public var isUTF16: Bool { self != .utf8 }

    /// `"UTF-8"`, `"UTF-16BE"`, `"UTF-16BE with BOM"` or `"UTF-16LE with BOM"`.
    public var description: String {
      switch self {
      case .utf8: "UTF-8"
      case .utf16BigEndian: "UTF-16BE"
      case .utf16BigEndianWithBOM: "UTF-16BE with BOM"
      case .utf16LittleEndianWithBOM: "UTF-16LE with BOM"
      }
    }
  }

  /// The text, without any byte-order mark.
  public var text: String
  /// The IANA language code, e.g. `"en"` or `"de-CH"`.
  public var languageCode: String
  /// How the text is (or will be) stored.
  public var encoding: Encoding

  /// Creates a Text record value.
  public init(text: String, languageCode: String = "en", encoding: Encoding = .utf8) {
    self.text = text
    self.languageCode = languageCode
    self.encoding = encoding
  }

  /// Reads a Text record.
  ///
  /// - Throws: ``NDEFError/Code/typeMismatch`` when `record` is not a well-known `T` record;
  ///   ``NDEFError/Code/invalidTextRecord``, ``NDEFError/Code/lengthOutOfBounds``,
  ///   ``NDEFError/Code/invalidUTF8`` or ``NDEFError/Code/invalidUTF16`` for a malformed payload, with the
  ///   offset in the payload.
  public init(_ record: NDEFRecord) throws(NDEFError) {
    guard record.isWellKnown(UInt8(ascii: "T")) else {
      throw mismatch(record, expected: "a well-known Text record (TNF 1, type T)")
    }
    self = try parsingOnItsOwn { () throws(NDEFError) in try TextRecord.parse(record.payload, offset: { $0 }) }
  }

  /// The payload bytes for this text.
  ///
  /// - Throws: ``NDEFError/Code/invalidArgument`` when ``languageCode`` is empty, longer than 63 bytes or
  ///   not printable US-ASCII, or when ``text`` starts with U+FEFF or U+FFFE and ``encoding`` is
  ///   ``Encoding/utf16BigEndian``: without a byte-order mark a reader would take that character for
  ///   one (use ``Encoding/utf16BigEndianWithBOM``).
  public func payload() throws(NDEFError) -> NDEFBytes {
    let language = Array(languageCode.utf8)
    guard (1...63).contains(language.count), language.allSatisfy({ (0x21...0x7E).contains($0) }) else {
      throw NDEFError(
        .invalidArgument, "language code \"\(languageCode)\" cannot be stored in a Text record", offset: 0,
        expected: "a language code of 1 to 63 printable US-ASCII bytes", context: ["field": "languageCode"])
    }
    if encoding == .utf16BigEndian, let first = text.utf16.first, first == 0xFEFF || first == 0xFFFE {
      throw NDEFError(
        .invalidArgument,
        "UTF-16 text without a byte-order mark cannot start with U+\(String(first, radix: 16).uppercased())",
        offset: 0, expected: "a byte-order mark before a text that starts with U+FEFF or U+FFFE",
        context: ["field": "text"])
    }
    var bytes: [UInt8] = [UInt8(language.count) | (encoding.isUTF16 ? 0x80 : 0)]
    bytes += language
    switch encoding {
    case .utf8:
      bytes += text.utf8
    case .utf16BigEndian, .utf16BigEndianWithBOM:
      if encoding == .utf16BigEndianWithBOM { bytes += [0xFE, 0xFF] }
      for unit in text.utf16 { bytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
    case .utf16LittleEndianWithBOM:
      bytes += [0xFF, 0xFE]
      for unit in text.utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
    }
    return NDEFBytes(bytes)
  }

  /// The well-known `T` record for this text.
  ///
  /// - Throws: as ``payload()``.
  public func record(identifier: NDEFBytes = []) throws(NDEFError) -> NDEFRecord {
    try NDEFRecord(typeNameFormat: .nfcWellKnown, type: [0x54], identifier: identifier, payload: payload())
  }

  /// Parses a Text payload, checking it as ``check(_:offset:)`` does; `offset` maps payload indices to the
  /// offsets reported in errors.
  static func parse(_ payload: NDEFBytes, offset: (Int) -> Int) throws(NDEFError) -> TextRecord {
    try payload.withBuffer { (payload) throws(NDEFError) in try parse(payload, offset: offset) }
  }

  /// Parses a Text payload read where it lies (the decoder's parse: no slice of the input is made).
  @inline(__always)
  static func parse(_ payload: UnsafeBufferPointer<UInt8>, offset: (Int) -> Int) throws(NDEFError) -> TextRecord {
    let layout = try Layout(payload, offset: offset)
    let body = UnsafeBufferPointer(rebasing: payload[layout.textStart...])
    let text: String
    if layout.encoding != .utf8 {
      switch UnicodeValidation.decodeUTF16(body, bigEndian: layout.encoding != .utf16LittleEndianWithBOM) {
      case .valid(let decoded): text = decoded
      case .invalid(let index, let expected):
        throw layout.invalidText(at: layout.textStart + index, expected: expected, offset: offset)
      }
    } else if UnicodeValidation.isASCII(body) {
      // US-ASCII is well-formed UTF-8: the string is made without another check.
      text = UnicodeValidation.string(checkedUTF8: body, isASCII: true)
    } else {
      let invalid = UnicodeValidation.firstInvalidUTF8(body)
      guard invalid == body.count else {
        throw layout.invalidText(
          at: layout.textStart + invalid, expected: UnicodeValidation.utf8Expectation, offset: offset)
      }
      // Checked just above: the standard library need not check it again.
      text = String(copying: UTF8Span(unchecked: body.span))
    }
    // Layout checked the language code: printable US-ASCII.
    let language = LanguageCodeStrings.string(UnsafeBufferPointer(rebasing: payload[1..<(1 + layout.languageLength)]))
    return TextRecord(text: text, languageCode: language, encoding: layout.encoding)
  }

  /// Checks a Text payload as ``parse(_:offset:)`` does, without building strings (the decoder's check).
  static func check(_ payload: NDEFBytes, offset: (Int) -> Int) throws(NDEFError) {
    try payload.withBuffer { (payload) throws(NDEFError) in try check(payload, offset: offset) }
  }

  /// Checks a Text payload read where it lies, without building strings.
  static func check(_ payload: UnsafeBufferPointer<UInt8>, offset: (Int) -> Int) throws(NDEFError) {
    let layout = try Layout(payload, offset: offset)
    let body = UnsafeBufferPointer(rebasing: payload[layout.textStart...])
    if layout.encoding == .utf8 {
      let invalid = UnicodeValidation.firstInvalidUTF8(body)
      guard invalid == body.count else {
        throw layout.invalidText(
          at: layout.textStart + invalid, expected: UnicodeValidation.utf8Expectation, offset: offset)
      }
    } else if let (index, expected) = UnicodeValidation.firstInvalidUTF16(
      body, bigEndian: layout.encoding != .utf16LittleEndianWithBOM)
    {
      throw layout.invalidText(at: layout.textStart + index, expected: expected, offset: offset)
    }
  }

  /// The parts of a Text payload before the text: status byte, language code, byte-order mark.
  private struct Layout {
    let languageLength: Int
    let encoding: Encoding
    /// The payload index of the text, after any byte-order mark.
    let textStart: Int

    @inline(__always)
    init(_ payload: UnsafeBufferPointer<UInt8>, offset: (Int) -> Int) throws(NDEFError) {
      guard let status = payload.first else {
        throw NDEFError(
          .invalidTextRecord, "the Text record payload is empty", offset: offset(0),
          expected: "a status byte (bit 7 UTF-16, bits 5-0 language code length)", context: ["field": "status"])
      }
      languageLength = Int(status & 0x3F)
      guard languageLength > 0 else {
        throw NDEFError(
          .invalidTextRecord, "the Text record's language code length is 0", offset: offset(0),
          expected: "a language code of 1 to 63 bytes", context: ["field": "status"])
      }
      guard languageLength < payload.count else {
        throw NDEFError(
          .lengthOutOfBounds, "the language code length \(languageLength) points past the end of the payload",
          offset: offset(0), expected: "a language code length of at most \(payload.count - 1)",
          context: ["field": "status"])
      }
      for index in 1..<(languageLength + 1) where !(0x21...0x7E).contains(payload[index]) {
        throw NDEFError(
          .invalidTextRecord, "the language code has the byte 0x\(String(payload[index], radix: 16))",
          offset: offset(index), expected: "a language code in printable US-ASCII",
          context: ["field": "languageCode"])
      }
      let bodyStart = 1 + languageLength
      if status & 0x80 == 0 {
        encoding = .utf8
      } else if payload.count - bodyStart >= 2, payload[bodyStart] == 0xFE, payload[bodyStart + 1] == 0xFF {
        encoding = .utf16BigEndianWithBOM
      } else if payload.count - bodyStart >= 2, payload[bodyStart] == 0xFF, payload[bodyStart + 1] == 0xFE {
        encoding = .utf16LittleEndianWithBOM
      } else {
        encoding = .utf16BigEndian
      }
      textStart = bodyStart + (encoding == .utf8 || encoding == .utf16BigEndian ? 0 : 2)
    }

    func invalidText(at index: Int, expected: String, offset: (Int) -> Int) -> NDEFError {
      NDEFError(
        encoding == .utf8 ? .invalidUTF8 : .invalidUTF16, "the text is not valid \(encoding)", offset: offset(index),
        expected: expected, context: ["field": "text"])
    }
  }
}
