/// An HTTP answer that breaks the message syntax (RFC 9112): what is wrong, and the line where.
struct HTTPMalformedResponse: Error, Equatable {
  /// What is wrong, for people: `the chunk size is not hexadecimal digits`.
  var reason: String
  /// The offending line as received, shown safely (see `shown(_:)`).
  var line: String

  init(_ reason: String, line: some Collection<UInt8>) {
    self.reason = reason
    self.line = Self.shown(line)
  }

  /// The longest part of a line kept in an error.
  static let maximumShownLength = 120

  /// `bytes` as text for an error's context and a terminal: printable ASCII as it is, every other byte
  /// as `\xNN`, cut after `maximumShownLength` characters with `…`.
  static func shown(_ bytes: some Collection<UInt8>) -> String {
    var text = ""
    for byte in bytes {
      if text.count >= maximumShownLength {
        text += "…"
        break
      }
      if (0x20...0x7E).contains(byte), byte != UInt8(ascii: "\\") {
        text.unicodeScalars.append(Unicode.Scalar(byte))
      } else {
        let digits = String(byte, radix: 16, uppercase: true)
        text += "\\x" + (digits.count == 1 ? "0" : "") + digits
      }
    }
    return text
  }
}
