/// The strings of long type names that tags often carry, made once: the media types of the NFC Forum
/// Connection Handover carriers (Bluetooth and Wi-Fi) and the generic `application/json` and
/// `application/octet-stream`, so that ``NDEFRecord/mediaType`` and the other type accessors hand out a string
/// that exists already instead of allocating one for each record.
///
/// Names of up to 15 bytes are stored inside a `String` with nothing allocated; only longer ones are kept here.
enum KnownTypeNames {
  /// The string of `type` when it is one of the names kept here, byte for byte; otherwise `nil`.
  @inline(__always)
  static func string(_ type: UnsafeBufferPointer<UInt8>) -> String? {
    switch type.count {
    case 16: return matching(type, "application/json")
    case 23: return matching(type, "application/vnd.wfa.wsc") ?? matching(type, "application/vnd.wfa.p2p")
    case 24: return matching(type, "application/octet-stream")
    case 32:
      return matching(type, "application/vnd.bluetooth.ep.oob") ?? matching(type, "application/vnd.bluetooth.le.oob")
    default: return nil
    }
  }

  /// `name` (a string literal, stored in the program: handing it out allocates nothing) when `type` holds its
  /// bytes, of which it has as many.
  @inline(__always)
  private static func matching(_ type: UnsafeBufferPointer<UInt8>, _ name: String) -> String? {
    var name = name
    let equal = name.withUTF8 { name in
      name.count == type.count && sameBytes(UnsafeRawBufferPointer(name), UnsafeRawBufferPointer(type))
    }
    return equal ? name : nil
  }

  /// Whether `first` and `second`, of the same size, hold the same bytes: compared eight at a time.
  @inline(__always)
  private static func sameBytes(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Bool {
    guard let left = first.baseAddress, let right = second.baseAddress else { return first.count == second.count }
    let count = first.count
    var index = 0
    while count - index >= 8 {
      guard
        left.loadUnaligned(fromByteOffset: index, as: UInt64.self)
          == right.loadUnaligned(fromByteOffset: index, as: UInt64.self)
      else { return false }
      index += 8
    }
    while index < count {
      guard left.load(fromByteOffset: index, as: UInt8.self) == right.load(fromByteOffset: index, as: UInt8.self)
      else { return false }
      index += 1
    }
    return true
  }
}
