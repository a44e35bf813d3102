/// A JSON syntax checker (RFC 8259) that finds the byte offset of the first error, used only to
/// explain why `JSONDecoder` rejected a saved record or a manifest.
package struct JSONSyntax {
  private let bytes: [UInt8]
  private var index = 0

  private init(_ bytes: [UInt8]) { self.bytes = bytes }

  /// The byte offset of the first syntax error, or `nil` when `bytes` are one JSON value (nested at
  /// most 512 deep) with only white space around it.
  package static func firstErrorOffset(in bytes: [UInt8]) -> Int? {
    var scanner = JSONSyntax(bytes)
    scanner.skipWhiteSpace()
    guard scanner.value(depth: 0) else { return scanner.index }
    scanner.skipWhiteSpace()
    return scanner.index == bytes.count ? nil : scanner.index
  }

  private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  private mutating func skipWhiteSpace() {
    while let byte = current, [0x20, 0x09, 0x0A, 0x0D].contains(byte) { index += 1 }
  }

  private mutating func consume(_ byte: UInt8) -> Bool {
    guard current == byte else { return false }
    index += 1
    return true
  }

  /// Scans one value; on `false`, `index` is the offset of the error.
  private mutating func value(depth: Int) -> Bool {
    guard let byte = current else { return false }
    switch byte {
    case UInt8(ascii: "{"): return container(close: UInt8(ascii: "}"), depth: depth, keyed: true)
    case UInt8(ascii: "["): return container(close: UInt8(ascii: "]"), depth: depth, keyed: false)
    case UInt8(ascii: "\""): return string()
    case UInt8(ascii: "t"): return literal("true")
    case UInt8(ascii: "f"): return literal("false")
    case UInt8(ascii: "n"): return literal("null")
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
    default: return false
    }
  }

  private mutating func container(close: UInt8, depth: Int, keyed: Bool) -> Bool {
    guard depth < 512 else { return false }
    index += 1
    skipWhiteSpace()
    if consume(close) { return true }
    while true {
      skipWhiteSpace()
      if keyed {
        guard current == UInt8(ascii: "\""), string() else { return false }
        skipWhiteSpace()
        guard consume(UInt8(ascii: ":")) else { return false }
        skipWhiteSpace()
      }
      guard value(depth: depth + 1) else { return false }
      skipWhiteSpace()
      if consume(close) { return true }
      guard consume(UInt8(ascii: ",")) else { return false }
    }
  }

  private mutating func string() -> Bool {
    index += 1
    while let byte = current {
      switch byte {
      case UInt8(ascii: "\""):
        index += 1
        return true
      case UInt8(ascii: "\\"):
        index += 1
        guard let escaped = current else { return false }
        if escaped == UInt8(ascii: "u") {
          for _ in 0..<4 {
            index += 1
            guard let hex = current, hex.isHexDigit else { return false }
          }
        } else if !Array("\"\\/bfnrt".utf8).contains(escaped) {
          return false
        }
        index += 1
      case 0..<0x20:
        return false
      default:
        index += 1
      }
    }
    return false
  }

  private mutating func number() -> Bool {
    _ = consume(UInt8(ascii: "-"))
    if !consume(UInt8(ascii: "0")) {
      guard digits() else { return false }
    }
    if consume(UInt8(ascii: ".")) {
      guard digits() else { return false }
    }
    if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
      if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
      guard digits() else { return false }
    }
    return true
  }

  /// One or more decimal digits.
  private mutating func digits() -> Bool {
    let start = index
    while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
    return index > start
  }

  private mutating func literal(_ word: StaticString) -> Bool {
    for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
      guard consume(expected) else { return false }
    }
    return true
  }
}

extension UInt8 {
  fileprivate var isHexDigit: Bool {
    (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
  }
}
