import Foundation

/// Turns a `JSONValue` that `JSONReader` read into a `Decodable` value, with `JSONDecoder`'s
/// defaults: a `Date` is its seconds since the reference date, `Data` is Base64 text, a `URL` is
/// its text. Errors are `DecodingError`s with the coding path, as `JSONDecoder`'s are.
///
/// The one way the package turns JSON into typed values, so the existing `Codable` types read the
/// same bytes they always did, from the one reader.
package struct JSONValueDecoder: Sendable {
  /// Strings that stand for the numbers JSON cannot hold (`inf`, `-inf`, `nan`), when a writer used
  /// `JSONEncoder`'s `convertToString` for them.
  package struct NonConformingFloats: Hashable, Sendable {
    package var positiveInfinity: String
    package var negativeInfinity: String
    package var nan: String

    package init(positiveInfinity: String, negativeInfinity: String, nan: String) {
      self.positiveInfinity = positiveInfinity
      self.negativeInfinity = negativeInfinity
      self.nan = nan
    }
  }

  /// How non-finite numbers are written, if they may be.
  package var nonConformingFloats: NonConformingFloats?

  package init(nonConformingFloats: NonConformingFloats? = nil) {
    self.nonConformingFloats = nonConformingFloats
  }

  /// Decodes `type` from `value`.
  /// - Throws: `DecodingError`, as `JSONDecoder` would for the same text.
  package func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
    try ValueDecoder(value, path: [], options: self).decode(type)
  }
}

/// A coding key for an array index or a key found in the text.
private struct AnyKey: CodingKey {
  var stringValue: String
  var intValue: Int?
  init(stringValue: String) { self.stringValue = stringValue }
  init(intValue: Int) {
    self.stringValue = "Index \(intValue)"
    self.intValue = intValue
  }
}

private final class ValueDecoder: Decoder {
  let value: JSONValue
  let codingPath: [any CodingKey]
  let options: JSONValueDecoder
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  init(_ value: JSONValue, path: [any CodingKey], options: JSONValueDecoder) {
    self.value = value
    self.codingPath = path
    self.options = options
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard case .object(let members) = value else { throw mismatch([String: Any].self, value) }
    return KeyedDecodingContainer(KeyedContainer<Key>(self, members: members))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard case .array(let elements) = value else { throw mismatch([Any].self, value) }
    return UnkeyedContainer(self, elements: elements)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleContainer(self) }

  // MARK: Values

  func mismatch(_ type: Any.Type, _ found: JSONValue, path: [any CodingKey]? = nil) -> DecodingError {
    let context = DecodingError.Context(
      codingPath: path ?? codingPath,
      debugDescription: "Expected to decode \(type) but found \(found.kindName) instead.")
    if case .null = found { return .valueNotFound(type, context) }
    return .typeMismatch(type, context)
  }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    switch type {
    case is URL.Type:
      let text = try decodeString()
      guard let url = URL(string: text) else {
        throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Invalid URL string."))
      }
      return url as! T
    case is Data.Type:
      let text = try decodeString()
      guard let data = Data(base64Encoded: text) else {
        throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Invalid Base64 text."))
      }
      return data as! T
    default:
      return try T(from: self)
    }
  }

  func decodeString() throws -> String {
    guard case .string(let text) = value else { throw mismatch(String.self, value) }
    return text
  }

  func decodeBool() throws -> Bool {
    guard case .bool(let flag) = value else { throw mismatch(Bool.self, value) }
    return flag
  }

  func decodeFloatingPoint<T: BinaryFloatingPoint>(_ type: T.Type) throws -> T {
    switch value {
    case .int(let integer): return T(integer)
    case .number(let number, _): return T(number)
    case .string(let text) where options.nonConformingFloats != nil:
      let names = options.nonConformingFloats!
      if text == names.positiveInfinity { return .infinity }
      if text == names.negativeInfinity { return -.infinity }
      if text == names.nan { return .nan }
      throw mismatch(type, value)
    default: throw mismatch(type, value)
    }
  }

  func decodeInteger<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
    let result: T?
    switch value {
    case .int(let integer): result = T(exactly: integer)
    case .number(let number, _): result = number.isFinite ? T(exactly: number) : nil
    default: throw mismatch(type, value)
    }
    guard let result else {
      throw DecodingError.dataCorrupted(
        .init(
          codingPath: codingPath, debugDescription: "Parsed JSON number <\(value.rendered)> does not fit in \(type)."))
    }
    return result
  }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: ValueDecoder
  let members: [String: JSONValue]
  let allKeys: [Key]
  var codingPath: [any CodingKey] { decoder.codingPath }

  init(_ decoder: ValueDecoder, members pairs: [(String, JSONValue)]) {
    self.decoder = decoder
    // `JSONReader` refuses repeated keys; a value built otherwise keeps the last one, as `JSONDecoder` does.
    self.members = Dictionary(pairs, uniquingKeysWith: { $1 })
    self.allKeys = pairs.compactMap { Key(stringValue: $0.0) }
  }

  func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

  private func child(_ key: Key) throws -> ValueDecoder {
    guard let value = members[key.stringValue] else {
      throw DecodingError.keyNotFound(
        key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue)."))
    }
    return ValueDecoder(value, path: codingPath + [key], options: decoder.options)
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    guard case .null = try child(key).value else { return false }
    return true
  }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try child(key).decodeBool() }
  func decode(_ type: String.Type, forKey key: Key) throws -> String { try child(key).decodeString() }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try child(key).decodeFloatingPoint(type) }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try child(key).decodeFloatingPoint(type) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try child(key).decodeInteger(type) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try child(key).decodeInteger(type) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try child(key).decodeInteger(type) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try child(key).decodeInteger(type) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try child(key).decodeInteger(type) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try child(key).decodeInteger(type) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try child(key).decodeInteger(type) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try child(key).decodeInteger(type) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try child(key).decodeInteger(type) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try child(key).decodeInteger(type) }
  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try child(key).decode(type) }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try child(key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try child(key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    ValueDecoder(members["super"] ?? .null, path: codingPath + [AnyKey(stringValue: "super")], options: decoder.options)
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    ValueDecoder(members[key.stringValue] ?? .null, path: codingPath + [key], options: decoder.options)
  }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
  let decoder: ValueDecoder
  let elements: [JSONValue]
  var currentIndex = 0
  var codingPath: [any CodingKey] { decoder.codingPath }
  var count: Int? { elements.count }
  var isAtEnd: Bool { currentIndex >= elements.count }

  init(_ decoder: ValueDecoder, elements: [JSONValue]) {
    self.decoder = decoder
    self.elements = elements
  }

  private mutating func next(_ type: Any.Type) throws -> ValueDecoder {
    let key = AnyKey(intValue: currentIndex)
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        type, .init(codingPath: codingPath + [key], debugDescription: "Unkeyed container is at end."))
    }
    defer { currentIndex += 1 }
    return ValueDecoder(elements[currentIndex], path: codingPath + [key], options: decoder.options)
  }

  mutating func decodeNil() throws -> Bool {
    guard !isAtEnd, case .null = elements[currentIndex] else { return false }
    currentIndex += 1
    return true
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type).decodeBool() }
  mutating func decode(_ type: String.Type) throws -> String { try next(type).decodeString() }
  mutating func decode(_ type: Double.Type) throws -> Double { try next(type).decodeFloatingPoint(type) }
  mutating func decode(_ type: Float.Type) throws -> Float { try next(type).decodeFloatingPoint(type) }
  mutating func decode(_ type: Int.Type) throws -> Int { try next(type).decodeInteger(type) }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type).decodeInteger(type) }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type).decodeInteger(type) }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type).decodeInteger(type) }
  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).decode(type) }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try next([String: Any].self).container(keyedBy: type)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try next([Any].self).unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder { try next(Any.self) }
}

private struct SingleContainer: SingleValueDecodingContainer {
  let decoder: ValueDecoder
  var codingPath: [any CodingKey] { decoder.codingPath }

  init(_ decoder: ValueDecoder) { self.decoder = decoder }

  func decodeNil() -> Bool {
    guard case .null = decoder.value else { return false }
    return true
  }

  func decode(_ type: Bool.Type) throws -> Bool { try decoder.decodeBool() }
  func decode(_ type: String.Type) throws -> String { try decoder.decodeString() }
  func decode(_ type: Double.Type) throws -> Double { try decoder.decodeFloatingPoint(type) }
  func decode(_ type: Float.Type) throws -> Float { try decoder.decodeFloatingPoint(type) }
  func decode(_ type: Int.Type) throws -> Int { try decoder.decodeInteger(type) }
  func decode(_ type: Int8.Type) throws -> Int8 { try decoder.decodeInteger(type) }
  func decode(_ type: Int16.Type) throws -> Int16 { try decoder.decodeInteger(type) }
  func decode(_ type: Int32.Type) throws -> Int32 { try decoder.decodeInteger(type) }
  func decode(_ type: Int64.Type) throws -> Int64 { try decoder.decodeInteger(type) }
  func decode(_ type: UInt.Type) throws -> UInt { try decoder.decodeInteger(type) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.decodeInteger(type) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.decodeInteger(type) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.decodeInteger(type) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.decodeInteger(type) }
  func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(type) }
}

extension JSONValue {
  /// The JSON type's name with its article, for messages: `a string`, `a number`, `null`, ….
  package var kindName: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .int, .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }
}
