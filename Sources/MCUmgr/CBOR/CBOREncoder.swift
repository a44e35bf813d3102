/// Encodes `CBORValue`s as CBOR (RFC 8949) in its preferred serialization: every length and integer
/// in the shortest form, definite lengths only, map entries in their order.
public enum CBOREncoder {
  /// The bytes of `value`.
  public static func encode(_ value: CBORValue) -> [UInt8] {
    var bytes: [UInt8] = []
    encode(value, into: &bytes)
    return bytes
  }

  /// Appends the bytes of `value` to `bytes`.
  public static func encode(_ value: CBORValue, into bytes: inout [UInt8]) {
    switch value {
    case .unsigned(let number): head(0, number, into: &bytes)
    case .negative(let number): head(1, number, into: &bytes)
    case .bytes(let content):
      head(2, UInt64(content.count), into: &bytes)
      bytes.append(contentsOf: content)
    case .text(let content):
      head(3, UInt64(content.utf8.count), into: &bytes)
      bytes.append(contentsOf: content.utf8)
    case .array(let items):
      head(4, UInt64(items.count), into: &bytes)
      for item in items { encode(item, into: &bytes) }
    case .map(let entries):
      head(5, UInt64(entries.count), into: &bytes)
      for entry in entries {
        encode(entry.key, into: &bytes)
        encode(entry.value, into: &bytes)
      }
    case .bool(let flag): bytes.append(flag ? 0xF5 : 0xF4)
    case .null: bytes.append(0xF6)
    case .undefined: bytes.append(0xF7)
    }
  }

  /// The number of bytes the head of an item with argument `argument` takes.
  static func headSize(_ argument: UInt64) -> Int {
    switch argument {
    case ..<24: 1
    case ...0xFF: 2
    case ...0xFFFF: 3
    case ...0xFFFF_FFFF: 5
    default: 9
    }
  }

  private static func head(_ major: UInt8, _ argument: UInt64, into bytes: inout [UInt8]) {
    let type = major << 5
    switch headSize(argument) {
    case 1: bytes.append(type | UInt8(argument))
    case 2: bytes.append(contentsOf: [type | 24, UInt8(argument)])
    case 3:
      bytes.append(type | 25)
      appendBigEndian(argument, count: 2, into: &bytes)
    case 5:
      bytes.append(type | 26)
      appendBigEndian(argument, count: 4, into: &bytes)
    default:
      bytes.append(type | 27)
      appendBigEndian(argument, count: 8, into: &bytes)
    }
  }

  private static func appendBigEndian(_ value: UInt64, count: Int, into bytes: inout [UInt8]) {
    for index in stride(from: count - 1, through: 0, by: -1) {
      bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))))
    }
  }
}
