/// Unmarshals D-Bus values from untrusted bytes, in either byte order.
///
/// Every length is checked against the bytes that remain before anything is read or allocated, so
/// a value can never claim more memory than its input holds; arrays are bounded by the
/// specification's 64 MiB, nesting by 64 levels (variants included), padding must be zero, strings
/// valid UTF-8 without NUL, booleans 0 or 1, object paths well formed. Offsets are from the start of
/// `bytes`, which must be the start of the message for alignment to be right.
struct DBusDecoder {
  /// The longest array the specification allows, in bytes.
  static let maximumArrayLength = 64 * 1024 * 1024
  /// How deep values may nest, arrays, structures and variants together.
  static let maximumDepth = 64

  let bytes: [UInt8]
  let littleEndian: Bool
  var offset: Int

  init(bytes: [UInt8], littleEndian: Bool, offset: Int = 0) {
    self.bytes = bytes
    self.littleEndian = littleEndian
    self.offset = offset
  }

  var remaining: Int { bytes.count - offset }

  func failure(_ code: DBusWireError.Code, _ message: String) -> DBusWireError {
    DBusWireError(code, message, offset: offset)
  }

  mutating func align(_ alignment: Int) throws(DBusWireError) {
    let padding = (alignment - offset % alignment) % alignment
    guard padding <= remaining else { throw failure(.truncated, "the bytes end inside padding") }
    for index in offset..<(offset + padding) where bytes[index] != 0 {
      throw DBusWireError(.invalidValue, "padding byte is not zero", offset: index)
    }
    offset += padding
  }

  mutating func readByte() throws(DBusWireError) -> UInt8 {
    guard remaining >= 1 else { throw failure(.truncated, "the bytes end before a byte") }
    defer { offset += 1 }
    return bytes[offset]
  }

  mutating func read<T: FixedWidthInteger>(_: T.Type) throws(DBusWireError) -> T {
    let size = MemoryLayout<T>.size
    try align(size)
    guard remaining >= size else { throw failure(.truncated, "the bytes end inside a \(size)-byte number") }
    var value = T.zero
    for index in 0..<size {
      let byte = T(bytes[offset + (littleEndian ? size - 1 - index : index)])
      value = size == 1 ? byte : (value << 8) | byte
    }
    offset += size
    return value
  }

  mutating func readValue(_ type: DBusType, depth: Int = 0) throws(DBusWireError) -> DBusValue {
    guard depth <= Self.maximumDepth else { throw failure(.tooLong, "values nest deeper than 64") }
    switch type {
    case .byte: return .byte(try readByte())
    case .boolean:
      let start = offset
      switch try read(UInt32.self) {
      case 0: return .boolean(false)
      case 1: return .boolean(true)
      case let other: throw DBusWireError(.invalidValue, "a boolean holds \(other)", offset: start)
      }
    case .int16: return .int16(try read(Int16.self))
    case .uint16: return .uint16(try read(UInt16.self))
    case .int32: return .int32(try read(Int32.self))
    case .uint32: return .uint32(try read(UInt32.self))
    case .int64: return .int64(try read(Int64.self))
    case .uint64: return .uint64(try read(UInt64.self))
    case .double: return .double(Double(bitPattern: try read(UInt64.self)))
    case .unixFD: return .unixFD(try read(UInt32.self))
    case .string: return .string(try readString())
    case .objectPath:
      let start = offset
      let path = try readString()
      guard Self.isValidObjectPath(path) else {
        throw DBusWireError(.invalidValue, "'\(path.prefix(64))' is not an object path", offset: start)
      }
      return .objectPath(path)
    case .signature: return .signature(try readSignature())
    case .variant:
      let start = offset
      let signature = try readSignature()
      let inner: DBusType
      do { inner = try DBusType.parseSingle(signature) } catch {
        throw DBusWireError(.invalidSignature, error.message, offset: start)
      }
      return .variant(try readValue(inner, depth: depth + 1))
    case .array(let element):
      let length = Int(try read(UInt32.self))
      guard length <= Self.maximumArrayLength else { throw failure(.tooLong, "an array of \(length) bytes") }
      try align(element.alignment)
      guard length <= remaining else { throw failure(.truncated, "an array claims \(length) bytes") }
      let end = offset + length
      var elements: [DBusValue] = []
      while offset < end {
        elements.append(try readValue(element, depth: depth + 1))
      }
      guard offset == end else { throw failure(.invalidValue, "an element runs past its array's end") }
      return .array(element, elements)
    case .dictEntry(let keyType, let valueType):
      try align(8)
      let key = try readValue(keyType, depth: depth + 1)
      return .dictEntry(key, try readValue(valueType, depth: depth + 1))
    case .structure(let members):
      try align(8)
      var values: [DBusValue] = []
      values.reserveCapacity(members.count)
      for member in members { values.append(try readValue(member, depth: depth + 1)) }
      return .structure(values)
    }
  }

  mutating func readString() throws(DBusWireError) -> String {
    let length = Int(try read(UInt32.self))
    return try readText(length: length)
  }

  mutating func readSignature() throws(DBusWireError) -> String {
    let length = Int(try readByte())
    return try readText(length: length)
  }

  /// `length` bytes of UTF-8 and a NUL, checked before anything is copied.
  private mutating func readText(length: Int) throws(DBusWireError) -> String {
    guard length < remaining else { throw failure(.truncated, "a string claims \(length) bytes") }
    let range = offset..<(offset + length)
    guard bytes[offset + length] == 0 else { throw failure(.invalidValue, "a string is not NUL-terminated") }
    guard !bytes[range].contains(0) else { throw failure(.invalidValue, "a string holds NUL") }
    guard let text = String(validating: bytes[range], as: UTF8.self) else {
      throw failure(.invalidValue, "a string is not UTF-8")
    }
    offset += length + 1
    return text
  }

  /// `/`, or `/` followed by non-empty elements of `[A-Za-z0-9_]` separated by single `/`.
  static func isValidObjectPath(_ path: String) -> Bool {
    let bytes = Array(path.utf8)
    guard bytes.first == UInt8(ascii: "/") else { return false }
    if bytes.count == 1 { return true }
    guard bytes.last != UInt8(ascii: "/") else { return false }
    var previousSlash = false
    for byte in bytes.dropFirst() {
      if byte == UInt8(ascii: "/") {
        if previousSlash { return false }
        previousSlash = true
        continue
      }
      previousSlash = false
      let ok =
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
      if !ok { return false }
    }
    return true
  }
}
