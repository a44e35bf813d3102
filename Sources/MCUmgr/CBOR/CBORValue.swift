/// One CBOR data item (RFC 8949): the subset MCUmgr's SMP bodies use — integers, byte and text
/// strings, arrays, maps, booleans, null and undefined. Floating-point numbers, tags and other simple
/// values are not part of it; `CBORDecoder` refuses them with a typed error.
///
/// A map keeps its entries in their encoded order (SMP bodies are small; lookups are linear), so a
/// value encodes back to the bytes it was decoded from when those used the shortest forms.
///
/// ```swift
/// let request: CBORValue = ["off": 0, "len": 4096, "data": .bytes(chunk)]
/// let offset = response["off"]?.uint64Value
/// ```
public enum CBORValue: Sendable, Hashable {
  /// An unsigned integer (major type 0).
  case unsigned(UInt64)
  /// A negative integer (major type 1): the value is `-1 - n`.
  case negative(UInt64)
  /// A byte string (major type 2).
  case bytes([UInt8])
  /// A UTF-8 text string (major type 3).
  case text(String)
  /// An array (major type 4).
  case array([CBORValue])
  /// A map (major type 5), its entries in order; keys are unique.
  case map([CBORMapEntry])
  /// `false` or `true` (simple values 20 and 21).
  case bool(Bool)
  /// `null` (simple value 22).
  case null
  /// `undefined` (simple value 23).
  case undefined

  /// An integer of either sign.
  public static func int(_ value: Int) -> CBORValue {
    value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
  }

  /// The integer, when it is one that fits an `Int`.
  public var intValue: Int? {
    switch self {
    case .unsigned(let value): value <= UInt64(Int.max) ? Int(value) : nil
    case .negative(let value): value <= UInt64(Int.max) ? -Int(value) - 1 : nil
    default: nil
    }
  }

  /// The unsigned integer, when it is one.
  public var uint64Value: UInt64? {
    if case .unsigned(let value) = self { return value }
    return nil
  }

  /// The boolean, when it is one.
  public var boolValue: Bool? {
    if case .bool(let value) = self { return value }
    return nil
  }

  /// The byte string's bytes, when it is one.
  public var bytesValue: [UInt8]? {
    if case .bytes(let value) = self { return value }
    return nil
  }

  /// The text string, when it is one.
  public var textValue: String? {
    if case .text(let value) = self { return value }
    return nil
  }

  /// The array's items, when it is one.
  public var arrayValue: [CBORValue]? {
    if case .array(let value) = self { return value }
    return nil
  }

  /// The map's entries, when it is one.
  public var mapEntries: [CBORMapEntry]? {
    if case .map(let value) = self { return value }
    return nil
  }

  /// The value under the text key `key`, when this is a map that has it.
  public subscript(key: String) -> CBORValue? {
    guard case .map(let entries) = self else { return nil }
    for entry in entries {
      if case .text(let name) = entry.key, name == key { return entry.value }
    }
    return nil
  }
}

/// One key and its value in a CBOR map.
public struct CBORMapEntry: Sendable, Hashable {
  /// The key (SMP uses text keys).
  public var key: CBORValue
  /// The value.
  public var value: CBORValue

  /// Creates an entry.
  public init(key: CBORValue, value: CBORValue) {
    self.key = key
    self.value = value
  }
}

extension CBORValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral,
  ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
  public init(integerLiteral value: Int) { self = .int(value) }
  public init(stringLiteral value: String) { self = .text(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(arrayLiteral elements: CBORValue...) { self = .array(elements) }
  /// A map with the entries in the order written.
  public init(dictionaryLiteral elements: (CBORValue, CBORValue)...) {
    self = .map(elements.map { CBORMapEntry(key: $0.0, value: $0.1) })
  }
  public init(nilLiteral: ()) { self = .null }
}
