/// The strings of Text records' language codes: made once for the codes of two lower-case letters (the ISO 639-1
/// codes most tags carry, such as `en` or `de`), so that reading one of those takes a string from a table
/// instead of making one from the bytes.
enum LanguageCodeStrings {
  /// The string of a language code that has been checked to be printable US-ASCII.
  @inline(__always)
  static func string(_ code: UnsafeBufferPointer<UInt8>) -> String {
    if code.count == 2, let first = letterIndex(code[0]), let second = letterIndex(code[1]) {
      return twoLetters[first &* 26 &+ second]
    }
    // Printable US-ASCII (checked by the caller) is well-formed UTF-8.
    return String(copying: UTF8Span(unchecked: code.span, isKnownASCII: true))
  }

  /// 0 to 25 for `a` to `z`, otherwise `nil`.
  @inline(__always)
  private static func letterIndex(_ byte: UInt8) -> Int? {
    let index = byte &- UInt8(ascii: "a")
    return index < 26 ? Int(index) : nil
  }

  /// `aa`, `ab`, … `zz`: the string of the code whose letters are `first` and `second` at `first * 26 + second`.
  private static let twoLetters: [String] = (0..<(26 * 26)).map { index in
    String(decoding: [UInt8(ascii: "a") + UInt8(index / 26), UInt8(ascii: "a") + UInt8(index % 26)], as: UTF8.self)
  }
}
