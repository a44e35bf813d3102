/// Why bytes are not a JSON text `JSONReader` accepts: what is wrong and the byte offset where it
/// starts.
package struct JSONReadError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What is wrong.
  package enum Kind: Hashable, Sendable {
    /// The input is longer than `maximumSize`; `offset` is the first byte past the limit.
    case tooLarge(limit: Int)
    /// An array or object opens deeper than `maximumDepth`; `offset` is its bracket.
    case tooDeep(limit: Int)
    /// A string (or key) holds more than `maximumStringLength` bytes; `offset` is its opening quote.
    case stringTooLong(limit: Int)
    /// The text holds more than `maximumElementCount` values; `offset` is the first one too many.
    case tooManyElements(limit: Int)
    /// Not JSON's grammar: `expected` says what could come at `offset` (e.g. `a value`).
    case unexpected(expected: String)
    /// The text ends where `expected` had to come.
    case unexpectedEnd(expected: String)
    /// A byte sequence that is not UTF-8 inside a string; `offset` is its first byte.
    case invalidUTF8
    /// An escape that is not one of RFC 8259's (`offset` is its letter), or a `\u` escape of a lone
    /// surrogate (`offset` is its backslash).
    case invalidEscape
    /// A key that an object already has; `offset` is its opening quote.
    case duplicateKey(String)
    /// A number too large for a `Double`; `offset` is its first byte.
    case numberOutOfRange
  }

  /// What is wrong.
  package var kind: Kind
  /// The byte offset in the input where it is wrong.
  package var offset: Int

  package init(_ kind: Kind, at offset: Int) {
    self.kind = kind
    self.offset = offset
  }

  /// Whether the fault is a limit of the reader rather than the text's syntax.
  package var isLimit: Bool {
    switch kind {
    case .tooLarge, .tooDeep, .stringTooLong, .tooManyElements: true
    default: false
    }
  }

  /// A phrase for people, without the offset: `a value was expected`, `the key "a" is repeated`, ….
  package var reason: String {
    switch kind {
    case .tooLarge(let limit): "the text is longer than \(limit) bytes"
    case .tooDeep(let limit): "arrays and objects nest deeper than \(limit) levels"
    case .stringTooLong(let limit): "a string is longer than \(limit) bytes"
    case .tooManyElements(let limit): "the text holds more than \(limit) values"
    case .unexpected(let expected): "\(expected) was expected"
    case .unexpectedEnd(let expected): "the text ends where \(expected) was expected"
    case .invalidUTF8: "a string is not valid UTF-8"
    case .invalidEscape: "a string holds an invalid escape"
    case .duplicateKey(let key): "the key \"\(key.prefix(60))\" is repeated"
    case .numberOutOfRange: "a number out of range of a Double"
    }
  }

  package var description: String { "\(reason) (at byte \(offset))" }
}
