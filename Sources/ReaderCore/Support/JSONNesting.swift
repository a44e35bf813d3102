/// How deep JSON arrays and objects nest, measured without recursion, so that untrusted bytes can be
/// refused before a recursive reader (`JSONDecoder`, `JSONSerialization`) goes into them: those recurse
/// once per level, and a thread's stack can end before their own limit of 512 levels (the fuzzer found
/// exactly that in the store loader).
package enum JSONNesting {
  /// The byte offset of the first array or object nested deeper than `limit`, or `nil` when there is
  /// none. Brackets inside strings (escapes included) do not count; the bytes need not be valid JSON.
  package static func offsetOfExcessiveNesting(in bytes: some Collection<UInt8>, limit: Int) -> Int? {
    var depth = 0
    var inString = false
    var escaped = false
    for (offset, byte) in bytes.enumerated() {
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""): inString = true
      case UInt8(ascii: "["), UInt8(ascii: "{"):
        depth += 1
        if depth > limit { return offset }
      case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
      default: break
      }
    }
    return nil
  }
}
