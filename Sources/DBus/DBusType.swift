/// One complete D-Bus type, as a signature spells it (`s`, `a{sv}`, `(oa{sa{sv}})`).
///
/// Signatures are parsed within the D-Bus specification's limits: at most 255 bytes, arrays and
/// structures each nested at most 32 deep, a dictionary entry only as an array's element with a
/// basic key. A signature outside them is refused with a `DBusWireError`, never a crash.
public indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
  /// `y`, an unsigned byte.
  case byte
  /// `b`, a boolean (marshalled as a 32-bit 0 or 1).
  case boolean
  /// `n`, a signed 16-bit integer.
  case int16
  /// `q`, an unsigned 16-bit integer.
  case uint16
  /// `i`, a signed 32-bit integer.
  case int32
  /// `u`, an unsigned 32-bit integer.
  case uint32
  /// `x`, a signed 64-bit integer.
  case int64
  /// `t`, an unsigned 64-bit integer.
  case uint64
  /// `d`, an IEEE 754 double.
  case double
  /// `s`, a UTF-8 string without NUL.
  case string
  /// `o`, an object path such as `/org/bluez/hci0`.
  case objectPath
  /// `g`, a signature.
  case signature
  /// `h`, an index into the file descriptors sent with the message.
  case unixFD
  /// `v`, a value carrying its own type.
  case variant
  /// `aT`, a sequence of values of one type.
  case array(DBusType)
  /// `{KV}`, a key and a value; only as an array's element (`a{KV}` is a dictionary).
  case dictEntry(key: DBusType, value: DBusType)
  /// `(T…)`, a fixed sequence of values of possibly different types.
  case structure([DBusType])

  /// The longest signature the specification allows, in bytes.
  public static let maximumSignatureLength = 255
  /// How deep arrays, and separately structures, may nest.
  public static let maximumNesting = 32

  /// The type's signature.
  public var signature: String {
    switch self {
    case .byte: "y"
    case .boolean: "b"
    case .int16: "n"
    case .uint16: "q"
    case .int32: "i"
    case .uint32: "u"
    case .int64: "x"
    case .uint64: "t"
    case .double: "d"
    case .string: "s"
    case .objectPath: "o"
    case .signature: "g"
    case .unixFD: "h"
    case .variant: "v"
    case .array(let element): "a" + element.signature
    case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
    case .structure(let members): "(" + members.map(\.signature).joined() + ")"
    }
  }

  public var description: String { signature }

  /// The boundary (in bytes, from the start of the message) a value of this type starts on.
  public var alignment: Int {
    switch self {
    case .byte, .signature, .variant: 1
    case .int16, .uint16: 2
    case .boolean, .int32, .uint32, .string, .objectPath, .unixFD, .array: 4
    case .int64, .uint64, .double, .dictEntry, .structure: 8
    }
  }

  /// Whether the type is basic (a fixed-size number, a string-like type): only those key a dictionary.
  public var isBasic: Bool {
    switch self {
    case .variant, .array, .dictEntry, .structure: false
    default: true
    }
  }

  /// Parses a signature of any number of complete types (a message body's signature).
  /// - Throws: `DBusWireError` for a signature longer than 255 bytes, an unknown type code, an
  ///   unbalanced bracket, an empty structure, a misplaced or non-basic-keyed dictionary entry, or
  ///   nesting deeper than 32.
  public static func parse(_ signature: String) throws(DBusWireError) -> [DBusType] {
    let bytes = Array(signature.utf8)
    guard bytes.count <= maximumSignatureLength else {
      throw DBusWireError(.invalidSignature, "a signature of \(bytes.count) bytes exceeds 255", offset: 0)
    }
    var parser = SignatureParser(bytes: bytes)
    var types: [DBusType] = []
    while parser.position < bytes.count { types.append(try parser.completeType(arrays: 0, structs: 0)) }
    return types
  }

  /// Parses a signature that must hold exactly one complete type (a variant's).
  public static func parseSingle(_ signature: String) throws(DBusWireError) -> DBusType {
    let types = try parse(signature)
    guard types.count == 1, let type = types.first else {
      throw DBusWireError(.invalidSignature, "a variant's signature '\(signature)' is not one complete type", offset: 0)
    }
    return type
  }
}

/// Reads complete types from a signature's bytes, counting nesting as it goes.
private struct SignatureParser {
  let bytes: [UInt8]
  var position = 0

  mutating func completeType(arrays: Int, structs: Int) throws(DBusWireError) -> DBusType {
    guard position < bytes.count else { throw failure("the signature ends inside a type") }
    let code = bytes[position]
    position += 1
    switch code {
    case UInt8(ascii: "y"): return .byte
    case UInt8(ascii: "b"): return .boolean
    case UInt8(ascii: "n"): return .int16
    case UInt8(ascii: "q"): return .uint16
    case UInt8(ascii: "i"): return .int32
    case UInt8(ascii: "u"): return .uint32
    case UInt8(ascii: "x"): return .int64
    case UInt8(ascii: "t"): return .uint64
    case UInt8(ascii: "d"): return .double
    case UInt8(ascii: "s"): return .string
    case UInt8(ascii: "o"): return .objectPath
    case UInt8(ascii: "g"): return .signature
    case UInt8(ascii: "h"): return .unixFD
    case UInt8(ascii: "v"): return .variant
    case UInt8(ascii: "a"):
      guard arrays < DBusType.maximumNesting else { throw failure("arrays nest deeper than 32") }
      if position < bytes.count, bytes[position] == UInt8(ascii: "{") {
        position += 1
        let key = try completeType(arrays: arrays + 1, structs: structs)
        guard key.isBasic else { throw failure("a dictionary's key must be a basic type, not \(key)") }
        let value = try completeType(arrays: arrays + 1, structs: structs)
        guard position < bytes.count, bytes[position] == UInt8(ascii: "}") else {
          throw failure("a dictionary entry holds a key and one value, then '}'")
        }
        position += 1
        return .array(.dictEntry(key: key, value: value))
      }
      return .array(try completeType(arrays: arrays + 1, structs: structs))
    case UInt8(ascii: "("):
      guard structs < DBusType.maximumNesting else { throw failure("structures nest deeper than 32") }
      var members: [DBusType] = []
      while position < bytes.count, bytes[position] != UInt8(ascii: ")") {
        members.append(try completeType(arrays: arrays, structs: structs + 1))
      }
      guard position < bytes.count else { throw failure("a structure is not closed") }
      guard !members.isEmpty else { throw failure("a structure is empty") }
      position += 1
      return .structure(members)
    case UInt8(ascii: "{"):
      throw failure("a dictionary entry outside an array")
    default:
      throw failure("unknown type code 0x\(String(code, radix: 16))")
    }
  }

  func failure(_ message: String) -> DBusWireError {
    DBusWireError(.invalidSignature, message, offset: max(0, position - 1))
  }
}
