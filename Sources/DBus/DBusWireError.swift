/// Why bytes are not a well-formed D-Bus message or value: what was wrong, and the byte offset
/// where it was found (from the start of the message, or of the signature for `invalidSignature`).
public struct DBusWireError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The kind of fault.
  public enum Code: String, Sendable, Hashable {
    /// A signature is malformed or exceeds the specification's limits.
    case invalidSignature
    /// The bytes end before the value or message does.
    case truncated
    /// A value breaks a rule of its type: a boolean other than 0 or 1, a string that is not UTF-8 or
    /// holds NUL, a malformed object path, non-zero padding, an array longer than its bytes.
    case invalidValue
    /// The fixed header or a header field is wrong: endianness, version, type, a missing required
    /// field, a body that does not match its signature.
    case invalidHeader
    /// A length exceeds the specification's (or the reader's) bound; nothing was allocated for it.
    case tooLong
  }

  /// The kind of fault.
  public var code: Code
  /// A sentence for people.
  public var message: String
  /// Where in the bytes it was found.
  public var offset: Int

  /// Creates an error.
  public init(_ code: Code, _ message: String, offset: Int) {
    self.code = code
    self.message = message
    self.offset = offset
  }

  public var description: String { "\(code.rawValue) at byte \(offset): \(message)" }
}
