/// The one reader of JSON text (RFC 8259) in the package: strict, bounded, and without recursion.
///
/// It accepts exactly one JSON value with white space around it, nothing else: no comments, no
/// trailing commas, no byte-order mark, no `NaN`; strings must be UTF-8 and their `\u` escapes
/// must not leave a surrogate alone; an object may not repeat a key. Every limit is the caller's:
/// the input's size, the nesting of arrays and objects (kept on an explicit stack, so a deep input
/// cannot end the thread's stack), a string's length and the number of values. The first fault in
/// reading order is thrown with its exact byte offset.
///
/// Numbers that are whole and fit an `Int` read as `JSONValue.int`; any other number as
/// `JSONValue.number` (with `decimals` the fraction digits written, at most 9).
package struct JSONReader {
  /// What a reader accepts at most.
  package struct Limits: Hashable, Sendable {
    /// The largest input, in bytes.
    package var maximumSize: Int
    /// The deepest nesting of arrays and objects; a top-level array is at depth 1. Reading never
    /// recurses, but whatever walks the value (comparing, rendering, releasing it) recurses once per
    /// level: keep this to what the format needs (a few dozen levels).
    package var maximumDepth: Int
    /// The longest string or key, in bytes of UTF-8 once escapes are read.
    package var maximumStringLength: Int
    /// The most values in the whole text, arrays and objects counted, keys not.
    package var maximumElementCount: Int

    /// Limits; the string length and value count default to the size, which bounds them anyway.
    package init(
      maximumSize: Int, maximumDepth: Int, maximumStringLength: Int? = nil, maximumElementCount: Int? = nil
    ) {
      self.maximumSize = maximumSize
      self.maximumDepth = maximumDepth
      self.maximumStringLength = maximumStringLength ?? maximumSize
      self.maximumElementCount = maximumElementCount ?? maximumSize
    }
  }

  /// Reads `bytes` as one JSON value.
  /// - Throws: `JSONReadError` for the first fault, with its byte offset.
  package static func read(_ bytes: some Collection<UInt8>, limits: Limits) throws(JSONReadError) -> JSONValue {
    guard bytes.count <= limits.maximumSize else {
      throw JSONReadError(.tooLarge(limit: limits.maximumSize), at: limits.maximumSize)
    }
    let result = bytes.withContiguousStorageIfAvailable { buffer in
      Result { () throws(JSONReadError) in
        var reader = JSONReader(buffer, limits: limits)
        return try reader.document()
      }
    }
    if let result { return try result.get() }
    let copy = Array(bytes)
    return try copy.withUnsafeBufferPointer { buffer throws(JSONReadError) in
      var reader = JSONReader(buffer, limits: limits)
      return try reader.document()
    }
  }

  /// An array or object being read.
  private struct Container {
    var isObject: Bool
    var elements: [JSONValue] = []
    var members: [(String, JSONValue)] = []
    /// The object's keys, kept once it has enough members that a linear search costs more.
    var keys: Set<String>?
    /// The key whose value is being read.
    var key = ""
  }

  private let bytes: UnsafeBufferPointer<UInt8>
  private let limits: Limits
  private var index = 0
  private var count = 0
  private var stack: [Container] = []
  /// Scratch space for strings with escapes.
  private var scratch: [UInt8] = []

  private init(_ bytes: UnsafeBufferPointer<UInt8>, limits: Limits) {
    self.bytes = bytes
    self.limits = limits
  }

  private mutating func document() throws(JSONReadError) -> JSONValue {
    while true {
      skipWhiteSpace()
      var value = try scalarOrOpening()
      // Attach the value to the containers it completes, closing them while their end follows.
      while true {
        guard !stack.isEmpty else {
          skipWhiteSpace()
          guard index == bytes.count else {
            throw JSONReadError(.unexpected(expected: "the end of the text"), at: index)
          }
          return value
        }
        let top = stack.count - 1
        if stack[top].isObject {
          stack[top].members.append((stack[top].key, value))
        } else {
          stack[top].elements.append(value)
        }
        skipWhiteSpace()
        let close = stack[top].isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
        guard let byte = current else {
          throw JSONReadError(.unexpectedEnd(expected: stack[top].isObject ? "`,` or `}`" : "`,` or `]`"), at: index)
        }
        if byte == UInt8(ascii: ",") {
          index += 1
          if stack[top].isObject { try memberKey() }
          break
        }
        guard byte == close else {
          throw JSONReadError(.unexpected(expected: stack[top].isObject ? "`,` or `}`" : "`,` or `]`"), at: index)
        }
        index += 1
        let container = stack.removeLast()
        value = container.isObject ? .object(container.members) : .array(container.elements)
      }
    }
  }

  /// Reads a scalar whole, or opens a container (returning it when it is empty and closes at once).
  /// Leaves `index` after what it read; a container left open is on the stack, its first key read.
  private mutating func scalarOrOpening() throws(JSONReadError) -> JSONValue {
    while true {
      guard let byte = current else { throw JSONReadError(.unexpectedEnd(expected: "a value"), at: index) }
      count += 1
      guard count <= limits.maximumElementCount else {
        throw JSONReadError(.tooManyElements(limit: limits.maximumElementCount), at: index)
      }
      switch byte {
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        guard stack.count < limits.maximumDepth else {
          throw JSONReadError(.tooDeep(limit: limits.maximumDepth), at: index)
        }
        let isObject = byte == UInt8(ascii: "{")
        index += 1
        skipWhiteSpace()
        if current == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
          index += 1
          return isObject ? .object([]) : .array([])
        }
        stack.append(Container(isObject: isObject))
        if isObject { try memberKey() } else { skipWhiteSpace() }
      case UInt8(ascii: "\""): return .string(try string())
      case UInt8(ascii: "t"): return try literal("true", .bool(true))
      case UInt8(ascii: "f"): return try literal("false", .bool(false))
      case UInt8(ascii: "n"): return try literal("null", .null)
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
      default: throw JSONReadError(.unexpected(expected: "a value"), at: index)
      }
    }
  }

  /// Reads `"key" :` for the object on top of the stack, refusing a key it already has.
  private mutating func memberKey() throws(JSONReadError) {
    skipWhiteSpace()
    guard let byte = current else { throw JSONReadError(.unexpectedEnd(expected: "a key"), at: index) }
    guard byte == UInt8(ascii: "\"") else { throw JSONReadError(.unexpected(expected: "a key"), at: index) }
    let start = index
    let key = try string()
    let top = stack.count - 1
    if let keys = stack[top].keys {
      guard !keys.contains(key) else { throw JSONReadError(.duplicateKey(key), at: start) }
      stack[top].keys!.insert(key)
    } else {
      guard !stack[top].members.contains(where: { $0.0 == key }) else {
        throw JSONReadError(.duplicateKey(key), at: start)
      }
      if stack[top].members.count >= 16 { stack[top].keys = Set(stack[top].members.map(\.0) + [key]) }
    }
    stack[top].key = key
    skipWhiteSpace()
    guard let colon = current else { throw JSONReadError(.unexpectedEnd(expected: "`:`"), at: index) }
    guard colon == UInt8(ascii: ":") else { throw JSONReadError(.unexpected(expected: "`:`"), at: index) }
    index += 1
    skipWhiteSpace()
  }

  private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  private mutating func skipWhiteSpace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return
      }
    }
  }

  private mutating func literal(_ word: StaticString, _ value: JSONValue) throws(JSONReadError) -> JSONValue {
    for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
      guard let byte = current else { throw JSONReadError(.unexpectedEnd(expected: "`\(word)`"), at: index) }
      guard byte == expected else { throw JSONReadError(.unexpected(expected: "`\(word)`"), at: index) }
      index += 1
    }
    return value
  }
}

// MARK: - Strings and numbers

extension JSONReader {
  /// Reads a string from its opening quote; `index` ends after the closing quote.
  private mutating func string() throws(JSONReadError) -> String {
    let start = index
    index += 1
    let first = index
    // Fast path: ASCII without escapes is the text itself.
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        try checkLength(index - first, start: start)
        index += 1
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[first..<index - 1]), as: UTF8.self)
      }
      if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
      index += 1
    }
    scratch.removeAll(keepingCapacity: true)
    scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[first..<index]))
    while true {
      guard let byte = current else { throw JSONReadError(.unexpectedEnd(expected: "`\"`"), at: index) }
      switch byte {
      case UInt8(ascii: "\""):
        index += 1
        return String(decoding: scratch, as: UTF8.self)
      case UInt8(ascii: "\\"):
        try escape()
      case 0..<0x20:
        throw JSONReadError(.unexpected(expected: "a character (control characters are escaped)"), at: index)
      case 0x80...:
        try utf8Sequence()
      default:
        scratch.append(byte)
        index += 1
      }
      try checkLength(scratch.count, start: start)
    }
  }

  private func checkLength(_ length: Int, start: Int) throws(JSONReadError) {
    guard length <= limits.maximumStringLength else {
      throw JSONReadError(.stringTooLong(limit: limits.maximumStringLength), at: start)
    }
  }

  /// Copies one UTF-8 sequence, refusing overlong forms, surrogates and values past U+10FFFF.
  private mutating func utf8Sequence() throws(JSONReadError) {
    let start = index
    let lead = bytes[index]
    let length: Int
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    switch lead {
    case 0xC2...0xDF: length = 2
    case 0xE0: (length, low) = (3, 0xA0)
    case 0xE1...0xEC, 0xEE...0xEF: length = 3
    case 0xED: (length, high) = (3, 0x9F)
    case 0xF0: (length, low) = (4, 0x90)
    case 0xF1...0xF3: length = 4
    case 0xF4: (length, high) = (4, 0x8F)
    default: throw JSONReadError(.invalidUTF8, at: start)
    }
    guard start + length <= bytes.count else { throw JSONReadError(.invalidUTF8, at: start) }
    for position in start + 1..<start + length {
      let byte = bytes[position]
      let (minimum, maximum) = position == start + 1 ? (low, high) : (UInt8(0x80), UInt8(0xBF))
      guard byte >= minimum, byte <= maximum else { throw JSONReadError(.invalidUTF8, at: start) }
    }
    scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<start + length]))
    index = start + length
  }

  /// Reads one escape from its backslash into `scratch`.
  private mutating func escape() throws(JSONReadError) {
    let start = index
    index += 1
    guard let byte = current else { throw JSONReadError(.unexpectedEnd(expected: "an escape"), at: index) }
    index += 1
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(byte)
    case UInt8(ascii: "b"): scratch.append(0x08)
    case UInt8(ascii: "f"): scratch.append(0x0C)
    case UInt8(ascii: "n"): scratch.append(0x0A)
    case UInt8(ascii: "r"): scratch.append(0x0D)
    case UInt8(ascii: "t"): scratch.append(0x09)
    case UInt8(ascii: "u"):
      var scalar = try hexQuad()
      if (0xD800..<0xDC00).contains(scalar) {
        guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
          throw JSONReadError(.invalidEscape, at: start)
        }
        index += 2
        let second = try hexQuad()
        guard (0xDC00..<0xE000).contains(second) else { throw JSONReadError(.invalidEscape, at: start) }
        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (second - 0xDC00)
      } else if (0xDC00..<0xE000).contains(scalar) {
        throw JSONReadError(.invalidEscape, at: start)
      }
      scratch.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
    default:
      throw JSONReadError(.invalidEscape, at: start + 1)
    }
  }

  /// Four hexadecimal digits after `\u`.
  private mutating func hexQuad() throws(JSONReadError) -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<4 {
      guard let byte = current else { throw JSONReadError(.unexpectedEnd(expected: "a hexadecimal digit"), at: index) }
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: throw JSONReadError(.unexpected(expected: "a hexadecimal digit"), at: index)
      }
      value = value << 4 | UInt32(digit)
      index += 1
    }
    return value
  }

  /// Reads `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
  private mutating func number() throws(JSONReadError) -> JSONValue {
    let start = index
    let negative = current == UInt8(ascii: "-")
    if negative { index += 1 }
    var integer = 0
    var exact = true
    if current == UInt8(ascii: "0") {
      index += 1
    } else {
      let digitsStart = index
      while let byte = current, byte &- UInt8(ascii: "0") < 10 {
        let (times, overflow) = integer.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times.addingReportingOverflow(Int(byte &- UInt8(ascii: "0")))
        if overflow || overflow2 { exact = false } else { integer = sum }
        index += 1
      }
      guard index > digitsStart else { throw digitExpected() }
    }
    var fraction = 0
    var exponent = 0
    var hasExponent = false
    if current == UInt8(ascii: ".") {
      index += 1
      let digitsStart = index
      while let byte = current, byte &- UInt8(ascii: "0") < 10 { index += 1 }
      guard index > digitsStart else { throw digitExpected() }
      fraction = index - digitsStart
    }
    if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
      index += 1
      hasExponent = true
      var sign = 1
      if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
        if current == UInt8(ascii: "-") { sign = -1 }
        index += 1
      }
      let digitsStart = index
      while let byte = current, byte &- UInt8(ascii: "0") < 10 {
        exponent = min(exponent * 10 + Int(byte &- UInt8(ascii: "0")), 100_000)
        index += 1
      }
      guard index > digitsStart else { throw digitExpected() }
      exponent *= sign
    }
    if fraction == 0, !hasExponent, exact {
      return .int(negative ? -integer : integer)
    }
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    guard let value = Double(text), value.isFinite else { throw JSONReadError(.numberOutOfRange, at: start) }
    return .number(value, decimals: min(max(fraction - exponent, 0), 9))
  }

  private func digitExpected() -> JSONReadError {
    index < bytes.count
      ? JSONReadError(.unexpected(expected: "a digit"), at: index)
      : JSONReadError(.unexpectedEnd(expected: "a digit"), at: index)
  }
}
