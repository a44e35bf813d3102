/// A D-Bus value with its type: what a message body, a property or a variant holds.
///
/// An array carries its element type, so an empty array still marshals with its signature; a
/// dictionary is an array of `dictEntry` values. The accessors (`string`, `int`, `dictionary`, …)
/// look through variants and return `nil` for a value of another type, so code reading a peer's
/// untrusted properties never traps on a surprise.
public indirect enum DBusValue: Hashable, Sendable {
  /// `y`
  case byte(UInt8)
  /// `b`
  case boolean(Bool)
  /// `n`
  case int16(Int16)
  /// `q`
  case uint16(UInt16)
  /// `i`
  case int32(Int32)
  /// `u`
  case uint32(UInt32)
  /// `x`
  case int64(Int64)
  /// `t`
  case uint64(UInt64)
  /// `d`
  case double(Double)
  /// `s`
  case string(String)
  /// `o`
  case objectPath(String)
  /// `g`
  case signature(String)
  /// `h`: an index into the message's file descriptors.
  case unixFD(UInt32)
  /// `aT`, with the element type `T`.
  case array(DBusType, [DBusValue])
  /// `{KV}`, an element of a dictionary.
  case dictEntry(DBusValue, DBusValue)
  /// `(…)`
  case structure([DBusValue])
  /// `v`
  case variant(DBusValue)

  /// The value's type.
  public var type: DBusType {
    switch self {
    case .byte: .byte
    case .boolean: .boolean
    case .int16: .int16
    case .uint16: .uint16
    case .int32: .int32
    case .uint32: .uint32
    case .int64: .int64
    case .uint64: .uint64
    case .double: .double
    case .string: .string
    case .objectPath: .objectPath
    case .signature: .signature
    case .unixFD: .unixFD
    case .array(let element, _): .array(element)
    case .dictEntry(let key, let value): .dictEntry(key: key.type, value: value.type)
    case .structure(let members): .structure(members.map(\.type))
    case .variant: .variant
    }
  }

  // MARK: Building

  /// An `a{sv}` dictionary: each value wrapped in a variant, keys in sorted order (so the bytes are
  /// the same for the same dictionary).
  public static func stringVariantDictionary(_ entries: [String: DBusValue]) -> DBusValue {
    .array(
      .dictEntry(key: .string, value: .variant),
      entries.keys.sorted().map { .dictEntry(.string($0), .variant(entries[$0]!)) })
  }

  /// An `as` array.
  public static func stringArray(_ strings: [String]) -> DBusValue {
    .array(.string, strings.map(DBusValue.string))
  }

  /// An `ay` array.
  public static func bytes(_ bytes: [UInt8]) -> DBusValue {
    .array(.byte, bytes.map(DBusValue.byte))
  }

  // MARK: Reading (through variants)

  /// The value inside any number of variants.
  public var unwrapped: DBusValue {
    var value = self
    while case .variant(let inner) = value { value = inner }
    return value
  }

  /// A string, object path or signature's text.
  public var string: String? {
    switch unwrapped {
    case .string(let text), .objectPath(let text), .signature(let text): text
    default: nil
    }
  }

  /// A boolean.
  public var bool: Bool? {
    if case .boolean(let value) = unwrapped { return value }
    return nil
  }

  /// Any integer type, when it fits an `Int`.
  public var int: Int? {
    switch unwrapped {
    case .byte(let value): Int(value)
    case .int16(let value): Int(value)
    case .uint16(let value): Int(value)
    case .int32(let value): Int(value)
    case .uint32(let value): Int(value)
    case .int64(let value): Int(value)
    case .uint64(let value): Int(exactly: value)
    case .unixFD(let value): Int(value)
    default: nil
    }
  }

  /// An array's elements.
  public var elements: [DBusValue]? {
    if case .array(_, let elements) = unwrapped { return elements }
    return nil
  }

  /// An `ay` array's bytes.
  public var byteArray: [UInt8]? {
    guard case .array(.byte, let elements) = unwrapped else { return nil }
    return elements.compactMap { if case .byte(let byte) = $0 { byte } else { nil } }
  }

  /// An `as` (or `ao`) array's strings.
  public var stringArray: [String]? {
    elements?.compactMap(\.string)
  }

  /// A dictionary with string keys (`a{sv}`, `a{sa{sv}}`, …); a later duplicate key wins.
  public var dictionary: [String: DBusValue]? {
    guard case .array(.dictEntry, let entries) = unwrapped else { return nil }
    var result: [String: DBusValue] = [:]
    for case .dictEntry(let key, let value) in entries {
      if let key = key.string { result[key] = value }
    }
    return result
  }

  /// A dictionary with integer keys (`a{qv}`, `a{yv}`); a later duplicate key wins.
  public var integerDictionary: [Int: DBusValue]? {
    guard case .array(.dictEntry, let entries) = unwrapped else { return nil }
    var result: [Int: DBusValue] = [:]
    for case .dictEntry(let key, let value) in entries {
      if let key = key.int { result[key] = value }
    }
    return result
  }
}
