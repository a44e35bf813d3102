/// The typed view of an NFC Forum well-known URI record (`U`): an abbreviation code and the rest of the URI.
///
/// The payload is one identifier code byte (see ``URIPrefix``) followed by the rest of the URI in UTF-8.
/// ``init(uri:)`` picks the longest matching prefix, as the URI RTD recommends. Two values are equal when
/// they split the URI the same way (they then encode to the same payload).
///
/// ```swift
/// let value = URIRecord(uri: "https://www.example.com")
/// value.prefix.code // 0x02
/// value.remainder   // "example.com"
/// try value.record().payload.hex // "026578616d706c652e636f6d"
/// ```
public struct URIRecord: Hashable, Sendable, CustomReflectable {
  /// The abbreviation.
  public var prefix: URIPrefix {
    get { storedPrefix }
    set {
      let remainder = remainder
      storedPrefix = newValue
      whole = Self.joined(newValue, remainder.utf8)
    }
  }
  /// The URI after the abbreviation, as stored in the URI field.
  public var remainder: String {
    get { String(decoding: whole.utf8.dropFirst(Self.prefixBytes(storedPrefix).count), as: UTF8.self) }
    set { whole = Self.joined(storedPrefix, newValue.utf8) }
  }

  /// The whole URI: the prefix's string followed by ``remainder``.
  public var uri: String { whole }

  /// The abbreviation (the stored half of ``prefix``).
  private var storedPrefix: URIPrefix
  /// The prefix's string followed by the remainder: built once, since readers ask for the whole URI (two
  /// values are equal when both their prefixes and their whole URIs are, that is when they split the URI
  /// the same way).
  private var whole: String

  /// Creates a value for a URI, abbreviated with the longest matching prefix.
  public init(uri: String) {
    storedPrefix = URIPrefix.longestMatch(for: uri)
    whole = uri
  }

  /// No abbreviation and an empty URI (what a Smart Poster being read holds until its URI record comes).
  static let empty = URIRecord(prefix: .none, remainder: "")

  /// Creates a value with an explicit abbreviation.
  public init(prefix: URIPrefix, remainder: String) {
    storedPrefix = prefix
    whole = Self.joined(prefix, remainder.utf8)
  }

  /// Shown as the two parts a URI record stores: `URIRecord(prefix: 0x02 "https://www.", remainder: "…")`.
  public var customMirror: Mirror {
    Mirror(self, children: ["prefix": prefix, "remainder": remainder], displayStyle: .struct)
  }

  /// The UTF-8 bytes a prefix stands for (none for a reserved code).
  private static func prefixBytes(_ prefix: URIPrefix) -> [UInt8] {
    prefix.isReserved ? [] : URIPrefix.utf8Strings[Int(prefix.code)]
  }

  /// The prefix's string followed by `remainder`, which is UTF-8: one string of exactly their size.
  private static func joined(_ prefix: URIPrefix, _ remainder: some Collection<UInt8>) -> String {
    guard !prefix.isReserved, prefix.code != 0 else { return String(decoding: remainder, as: UTF8.self) }
    return URIPrefix.utf8Strings[Int(prefix.code)].withUnsafeBufferPointer { head in
      String(unsafeUninitializedCapacity: head.count + remainder.count) { whole in
        _ = whole.initialize(fromContentsOf: head)
        _ = whole[head.count...].initialize(fromContentsOf: remainder)
        return whole.count
      }
    }
  }

  /// Reads a URI record.
  ///
  /// A reserved identifier code (0x24–0xFF) is read as no abbreviation, as the URI RTD requires
  /// (ndeflib rejects it instead).
  ///
  /// - Throws: ``NDEFError/Code/typeMismatch`` when `record` is not a well-known `U` record;
  ///   ``NDEFError/Code/invalidURI`` or ``NDEFError/Code/invalidUTF8`` for a malformed payload, with
  ///   the offset in the payload.
  public init(_ record: NDEFRecord) throws(NDEFError) {
    guard record.isWellKnown(UInt8(ascii: "U")) else {
      throw mismatch(record, expected: "a well-known URI record (TNF 1, type U)")
    }
    self = try parsingOnItsOwn { () throws(NDEFError) in try URIRecord.parse(record.payload, offset: { $0 }) }
  }

  /// The payload bytes: the code, then ``remainder`` in UTF-8.
  ///
  /// - Throws: ``NDEFError/Code/invalidArgument`` when ``remainder`` holds a control character
  ///   (U+0000–U+001F), which a URI cannot contain; ``NDEFError/Code/invalidURIPrefix`` for a
  ///   reserved prefix, which generators must not write.
  public func payload() throws(NDEFError) -> NDEFBytes {
    guard !prefix.isReserved else {
      throw NDEFError(
        .invalidURIPrefix, "the URI identifier code 0x\(String(prefix.code, radix: 16)) is reserved", offset: 0,
        expected: "an identifier code 0x00-0x23", context: ["field": "identifierCode"])
    }
    let remainder = remainder
    if let index = remainder.utf8.firstIndex(where: { $0 < 0x20 }) {
      throw NDEFError(
        .invalidArgument, "the URI holds the control character 0x\(String(remainder.utf8[index], radix: 16))",
        offset: 0, expected: "a URI without control characters (U+0000-U+001F)", context: ["field": "uri"])
    }
    return NDEFBytes([prefix.code] + Array(remainder.utf8))
  }

  /// The well-known `U` record for this URI.
  ///
  /// - Throws: as ``payload()``.
  public func record(identifier: NDEFBytes = []) throws(NDEFError) -> NDEFRecord {
    try NDEFRecord(typeNameFormat: .nfcWellKnown, type: [0x55], identifier: identifier, payload: payload())
  }

  /// Parses a URI payload; `offset` maps payload indices to the offsets reported in errors.
  static func parse(_ payload: NDEFBytes, offset: (Int) -> Int) throws(NDEFError) -> URIRecord {
    try payload.withBuffer { (payload) throws(NDEFError) in try parse(payload, offset: offset) }
  }

  /// Parses a URI payload read where it lies (the decoder's parse: no slice of the input is made).
  @inline(__always)
  static func parse(_ payload: UnsafeBufferPointer<UInt8>, offset: (Int) -> Int) throws(NDEFError) -> URIRecord {
    let (prefix, isASCII) = try checkedField(payload, offset: offset)
    return URIRecord(checkedPrefix: prefix, remainder: UnsafeBufferPointer(rebasing: payload[1...]), isASCII: isASCII)
  }

  /// Whether every byte is printable or a space in US-ASCII (0x20-0x7F), so that the field is well-formed UTF-8
  /// without a control character; looked at eight bytes at a time.
  @inline(__always)
  private static func isASCIIWithoutControlCharacters(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    let count = bytes.count
    var index = 0
    // A byte's high bit is set in `word` (0x80 and above) or in (word - 0x20) & ~word (below 0x20, when no byte
    // is 0x80 or above, so that no borrow crosses into the next byte unnoticed).
    while count - index >= 8 {
      let word = UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)
      guard (word | (word &- 0x2020_2020_2020_2020) & ~word) & 0x8080_8080_8080_8080 == 0 else { return false }
      index += 8
    }
    while index < count {
      guard (0x20..<0x80).contains(bytes[index]) else { return false }
      index += 1
    }
    return true
  }

  /// The index of the first byte below 0x20, or `nil`: eight bytes at a time while there is none.
  private static func firstControlCharacter(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    let count = bytes.count
    var index = 0
    // (word - 0x20 in each byte) & ~word has a byte's high bit set exactly when some byte is below 0x20.
    while count - index >= 8 {
      let word = UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)
      guard (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080 == 0 else { break }
      index += 8
    }
    while index < count {
      if bytes[index] < 0x20 { return index }
      index += 1
    }
    return nil
  }

  /// The value of a payload that has passed ``check(_:offset:)``: its prefix and the rest, valid UTF-8 (all
  /// US-ASCII when `isASCII`); the string is made without checking the bytes again.
  @inline(__always)
  private init(checkedPrefix prefix: URIPrefix, remainder: UnsafeBufferPointer<UInt8>, isASCII: Bool) {
    storedPrefix = prefix
    guard !prefix.isReserved, prefix.code != 0 else {
      whole = UnicodeValidation.string(checkedUTF8: remainder, isASCII: isASCII)
      return
    }
    // The prefix and the rest side by side in a temporary buffer (on the stack unless it is large), then one
    // string of them: the prefixes are US-ASCII, so the whole is well-formed UTF-8 (US-ASCII with the rest).
    // (Copied straight into a string's storage, the bytes would be checked again by the standard library.)
    let head = URIPrefix.staticStrings[Int(prefix.code)]
    let headCount = head.utf8CodeUnitCount
    whole = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: headCount + remainder.count) { buffer in
      // Two copies of bytes (memcpy), not loops over elements.
      let start = UnsafeMutableRawPointer(buffer.baseAddress!)
      start.copyMemory(from: head.utf8Start, byteCount: headCount)
      if let rest = remainder.baseAddress { (start + headCount).copyMemory(from: rest, byteCount: remainder.count) }
      return UnicodeValidation.string(checkedUTF8: UnsafeBufferPointer(buffer), isASCII: isASCII)
    }
  }

  /// Checks a URI payload as ``parse(_:offset:)`` does, without building the string; returns the prefix.
  @discardableResult
  static func check(_ payload: NDEFBytes, offset: (Int) -> Int) throws(NDEFError) -> URIPrefix {
    try payload.withBuffer { (payload) throws(NDEFError) in try check(payload, offset: offset) }
  }

  /// Checks a URI payload read where it lies, without building the string; returns the prefix.
  @discardableResult
  static func check(_ payload: UnsafeBufferPointer<UInt8>, offset: (Int) -> Int) throws(NDEFError) -> URIPrefix {
    try checkedField(payload, offset: offset).prefix
  }

  /// Checks a URI payload read where it lies, as ``check(_:offset:)`` does; returns the prefix and whether the
  /// URI field is all US-ASCII.
  ///
  /// A field of printable US-ASCII and spaces, the usual URI, passes one quick look; any other is checked byte
  /// by byte, for well-formed UTF-8 first, then for control characters, which says which error comes first.
  @inline(__always)
  private static func checkedField(_ payload: UnsafeBufferPointer<UInt8>, offset: (Int) -> Int) throws(NDEFError)
    -> (prefix: URIPrefix, isASCII: Bool)
  {
    guard let code = payload.first else {
      throw NDEFError(
        .invalidURI, "the URI record payload is empty", offset: offset(0),
        expected: "an identifier code byte", context: ["field": "identifierCode"])
    }
    // Reserved codes are read as "no abbreviation" (URI RTD: RFU values are treated as 0x00).
    let prefix = URIPrefix(readingCode: code)
    let field = UnsafeBufferPointer(rebasing: payload[1...])
    if isASCIIWithoutControlCharacters(field) { return (prefix, true) }
    let invalid = UnicodeValidation.firstInvalidUTF8(field)
    guard invalid == field.count else {
      throw NDEFError(
        .invalidUTF8, "the URI field is not valid UTF-8", offset: offset(1 + invalid),
        expected: UnicodeValidation.utf8Expectation, context: ["field": "uri"])
    }
    if let index = firstControlCharacter(field) {
      throw NDEFError(
        .invalidURI, "the URI field holds the control character 0x\(String(field[index], radix: 16))",
        offset: offset(1 + index), expected: "a URI without control characters (0x00-0x1F)",
        context: ["field": "uri"])
    }
    // Well-formed and without a control character, yet not all printable US-ASCII: some byte is 0x80 or above.
    return (prefix, false)
  }
}
