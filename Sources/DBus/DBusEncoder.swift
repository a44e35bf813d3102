/// Marshals values into D-Bus's wire format, little-endian, aligning each value to its type's
/// boundary from the start of the buffer (the start of a message, so a body that starts on an
/// 8-byte boundary aligns the same).
struct DBusEncoder {
  private(set) var bytes: [UInt8] = []

  init(reservingCapacity capacity: Int = 0) {
    bytes.reserveCapacity(capacity)
  }

  mutating func pad(to alignment: Int) {
    let remainder = bytes.count % alignment
    if remainder != 0 { bytes.append(contentsOf: repeatElement(0, count: alignment - remainder)) }
  }

  mutating func append<T: FixedWidthInteger>(_ value: T) {
    pad(to: MemoryLayout<T>.size)
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  mutating func append(_ value: DBusValue) {
    switch value {
    case .byte(let value): bytes.append(value)
    case .boolean(let value): append(UInt32(value ? 1 : 0))
    case .int16(let value): append(value)
    case .uint16(let value): append(value)
    case .int32(let value): append(value)
    case .uint32(let value): append(value)
    case .int64(let value): append(value)
    case .uint64(let value): append(value)
    case .double(let value): append(value.bitPattern)
    case .string(let text), .objectPath(let text): appendString(text)
    case .signature(let text): appendSignature(text)
    case .unixFD(let index): append(index)
    case .array(let element, let elements):
      append(UInt32(0))
      let lengthAt = bytes.count - 4
      pad(to: element.alignment)
      let start = bytes.count
      for element in elements { append(element) }
      let length = UInt32(truncatingIfNeeded: bytes.count - start)
      withUnsafeBytes(of: length.littleEndian) { raw in
        for index in 0..<4 { bytes[lengthAt + index] = raw[index] }
      }
    case .dictEntry(let key, let value):
      pad(to: 8)
      append(key)
      append(value)
    case .structure(let members):
      pad(to: 8)
      for member in members { append(member) }
    case .variant(let inner):
      appendSignature(inner.type.signature)
      append(inner)
    }
  }

  private mutating func appendString(_ text: String) {
    let utf8 = Array(text.utf8)
    append(UInt32(truncatingIfNeeded: utf8.count))
    bytes.append(contentsOf: utf8)
    bytes.append(0)
  }

  private mutating func appendSignature(_ text: String) {
    let utf8 = Array(text.utf8)
    bytes.append(UInt8(truncatingIfNeeded: utf8.count))
    bytes.append(contentsOf: utf8)
    bytes.append(0)
  }
}
