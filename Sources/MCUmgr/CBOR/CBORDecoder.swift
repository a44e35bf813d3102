/// Decodes one CBOR data item (RFC 8949) from untrusted bytes, bounded: nesting is limited, and no
/// length read from the input is trusted before it is checked against what the input has left (a
/// string needs its bytes, an array or map at least a byte per item), so nothing is allocated beyond
/// a small multiple of the input's size. Definite and indefinite lengths are accepted, and integers
/// and lengths in any width (not only the shortest). Failures are `CBORError`s carrying the byte
/// offset at fault.
///
/// ```swift
/// let body = try CBORDecoder().decode(bytes)      // exactly one item, nothing after it
/// ```
public struct CBORDecoder: Sendable {
  /// The deepest nesting of arrays and maps accepted (SMP bodies nest three or four levels).
  public var maximumDepth: Int

  /// A decoder that accepts arrays and maps nested up to `maximumDepth` levels.
  public init(maximumDepth: Int = 16) {
    self.maximumDepth = maximumDepth
  }

  /// Decodes `bytes` as exactly one item.
  /// - Throws: `CBORError` for malformed, unsupported or trailing input.
  public func decode(_ bytes: [UInt8]) throws(CBORError) -> CBORValue {
    var reader = Reader(bytes: bytes, maximumDepth: maximumDepth)
    let value = try reader.item(depth: 0)
    guard reader.offset == bytes.count else {
      throw CBORError(.trailingBytes(count: bytes.count - reader.offset), at: reader.offset)
    }
    return value
  }

  /// Decodes the first item of `bytes` and says how many bytes it took.
  /// - Throws: `CBORError` for malformed or unsupported input.
  public func decodePrefix(_ bytes: [UInt8]) throws(CBORError) -> (value: CBORValue, length: Int) {
    var reader = Reader(bytes: bytes, maximumDepth: maximumDepth)
    let value = try reader.item(depth: 0)
    return (value, reader.offset)
  }
}

/// The cursor over the input.
private struct Reader {
  let bytes: [UInt8]
  let maximumDepth: Int
  var offset = 0

  init(bytes: [UInt8], maximumDepth: Int) {
    self.bytes = bytes
    self.maximumDepth = maximumDepth
  }

  private var remaining: Int { bytes.count - offset }

  /// An item's head: its major type, additional information, and argument (nil when indefinite).
  private struct Head {
    var start: Int
    var major: UInt8
    var info: UInt8
    var argument: UInt64?
  }

  mutating func item(depth: Int) throws(CBORError) -> CBORValue {
    let head = try readHead()
    return try item(head, depth: depth)
  }

  private mutating func item(_ head: Head, depth: Int) throws(CBORError) -> CBORValue {
    switch head.major {
    case 0, 1:
      guard let argument = head.argument else { throw CBORError(.unsupported("indefinite integer"), at: head.start) }
      return head.major == 0 ? .unsigned(argument) : .negative(argument)
    case 2:
      return .bytes(try string(head, major: 2))
    case 3:
      let content = try string(head, major: 3)
      guard let text = String(validating: content, as: UTF8.self) else {
        throw CBORError(.invalidUTF8, at: head.start)
      }
      return .text(text)
    case 4:
      return .array(try array(head, depth: depth + 1))
    case 5:
      return .map(try map(head, depth: depth + 1))
    case 6:
      throw CBORError(.unsupported("tag"), at: head.start)
    default:
      return try simple(head)
    }
  }

  private mutating func readHead() throws(CBORError) -> Head {
    let start = offset
    guard remaining >= 1 else { throw CBORError(.truncated, at: start) }
    let initial = bytes[offset]
    offset += 1
    let major = initial >> 5
    let info = initial & 0x1F
    switch info {
    case 0..<24:
      return Head(start: start, major: major, info: info, argument: UInt64(info))
    case 24...27:
      let width = 1 << Int(info - 24)
      guard remaining >= width else { throw CBORError(.truncated, at: start) }
      var argument: UInt64 = 0
      for index in 0..<width { argument = argument << 8 | UInt64(bytes[offset + index]) }
      offset += width
      return Head(start: start, major: major, info: info, argument: argument)
    case 31:
      return Head(start: start, major: major, info: info, argument: nil)
    default:
      throw CBORError(.reservedAdditionalInformation(info), at: start)
    }
  }

  private func isBreak() -> Bool { offset < bytes.count && bytes[offset] == 0xFF }

  /// The content of a byte or text string (major `major`), definite or in definite chunks.
  private mutating func string(_ head: Head, major: UInt8) throws(CBORError) -> [UInt8] {
    if let length = head.argument { return try take(length, at: head.start) }
    var content: [UInt8] = []
    while true {
      guard remaining >= 1 else { throw CBORError(.truncated, at: offset) }
      if isBreak() {
        offset += 1
        return content
      }
      let chunk = try readHead()
      guard chunk.major == major, let length = chunk.argument else { throw CBORError(.invalidChunk, at: chunk.start) }
      let piece = try take(length, at: chunk.start)
      // RFC 8949 §3.2.3: each chunk of a text string is well-formed UTF-8 on its own.
      if major == 3, String(validating: piece, as: UTF8.self) == nil {
        throw CBORError(.invalidUTF8, at: chunk.start)
      }
      content.append(contentsOf: piece)
    }
  }

  private mutating func take(_ length: UInt64, at start: Int) throws(CBORError) -> [UInt8] {
    guard length <= UInt64(remaining) else { throw CBORError(.lengthExceedsInput(length), at: start) }
    let count = Int(length)
    defer { offset += count }
    return Array(bytes[offset..<offset + count])
  }

  private mutating func array(_ head: Head, depth: Int) throws(CBORError) -> [CBORValue] {
    guard depth <= maximumDepth else { throw CBORError(.nestingTooDeep(limit: maximumDepth), at: head.start) }
    var items: [CBORValue] = []
    if let count = head.argument {
      // Every item takes at least one byte: a count beyond the input is a lie, refused before allocating.
      guard count <= UInt64(remaining) else { throw CBORError(.lengthExceedsInput(count), at: head.start) }
      items.reserveCapacity(Int(count))
      for _ in 0..<count { items.append(try item(depth: depth)) }
      return items
    }
    while true {
      guard remaining >= 1 else { throw CBORError(.truncated, at: offset) }
      if isBreak() {
        offset += 1
        return items
      }
      items.append(try item(depth: depth))
    }
  }

  private mutating func map(_ head: Head, depth: Int) throws(CBORError) -> [CBORMapEntry] {
    guard depth <= maximumDepth else { throw CBORError(.nestingTooDeep(limit: maximumDepth), at: head.start) }
    var entries: [CBORMapEntry] = []
    var keys = Set<CBORValue>()
    func add(_ key: CBORValue, at start: Int, _ value: CBORValue) throws(CBORError) {
      guard keys.insert(key).inserted else { throw CBORError(.duplicateKey, at: start) }
      entries.append(CBORMapEntry(key: key, value: value))
    }
    if let count = head.argument {
      // Every entry takes at least two bytes.
      guard count <= UInt64(remaining / 2) else { throw CBORError(.lengthExceedsInput(count), at: head.start) }
      entries.reserveCapacity(Int(count))
      for _ in 0..<count {
        let start = offset
        let key = try item(depth: depth)
        try add(key, at: start, try item(depth: depth))
      }
      return entries
    }
    while true {
      guard remaining >= 1 else { throw CBORError(.truncated, at: offset) }
      if isBreak() {
        offset += 1
        return entries
      }
      let start = offset
      let key = try item(depth: depth)
      guard remaining >= 1 else { throw CBORError(.truncated, at: offset) }
      if isBreak() { throw CBORError(.missingMapValue, at: offset) }
      try add(key, at: start, try item(depth: depth))
    }
  }

  private func simple(_ head: Head) throws(CBORError) -> CBORValue {
    switch head.info {
    case 20: return .bool(false)
    case 21: return .bool(true)
    case 22: return .null
    case 23: return .undefined
    case 25, 26, 27: throw CBORError(.unsupported("floating-point number"), at: head.start)
    case 31: throw CBORError(.unexpectedBreak, at: head.start)
    default: throw CBORError(.unsupported("simple value"), at: head.start)
    }
  }
}
