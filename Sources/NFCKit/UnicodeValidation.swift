/// Strict UTF-8 and UTF-16 checking and decoding that reports where invalid input starts.
enum UnicodeValidation {
  /// The result of decoding: the string, or the byte index (in the given bytes) of the first problem and
  /// what was expected there.
  enum Outcome {
    case valid(String)
    case invalid(at: Int, expected: String)
  }

  static let utf8Expectation = "well-formed UTF-8"

  /// The string of bytes that are well-formed UTF-8 (checked by the caller), copied as they are (marked as
  /// US-ASCII when they are).
  static func string(wellFormedUTF8 buffer: UnsafeBufferPointer<UInt8>) -> String {
    string(checkedUTF8: buffer, isASCII: isASCII(buffer))
  }

  /// The string of bytes that are well-formed UTF-8 (checked by the caller), all US-ASCII when `isASCII`, made
  /// without checking them again. US-ASCII that fits in a small string (at most 15 bytes, stored inside the
  /// `String` itself) is copied into it in one piece; the standard library's unchecked path builds a small
  /// string a byte at a time.
  @inline(__always)
  static func string(checkedUTF8 buffer: UnsafeBufferPointer<UInt8>, isASCII: Bool) -> String {
    guard isASCII, buffer.count <= smallStringCapacity, let source = buffer.baseAddress else {
      return String(copying: UTF8Span(unchecked: buffer.span, isKnownASCII: isASCII))
    }
    // US-ASCII: the standard library's look at the small string finds it US-ASCII and checks nothing more.
    return String(unsafeUninitializedCapacity: buffer.count) { target in
      target.baseAddress!.initialize(from: source, count: buffer.count)
      return buffer.count
    }
  }

  /// The most UTF-8 bytes a `String` holds without allocating (on 64-bit platforms).
  static var smallStringCapacity: Int { 15 }

  /// Whether every byte is below 0x80, looked at eight bytes at a time.
  @inline(__always)
  static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var index = 0
    while bytes.count - index >= 8 {
      let word = UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)
      guard word & 0x8080_8080_8080_8080 == 0 else { return false }
      index += 8
    }
    while index < bytes.count {
      guard bytes[index] < 0x80 else { return false }
      index += 1
    }
    return true
  }

  /// The index of the first byte that is not part of a well-formed UTF-8 sequence, or `bytes.count`.
  static func firstInvalidUTF8(_ bytes: NDEFBytes) -> Int {
    bytes.storage.withUnsafeBufferPointer { firstInvalidUTF8($0) }
  }

  /// The index of the first byte that is not part of a well-formed UTF-8 sequence (the lead byte of a
  /// sequence cut short by the end of the bytes), or `bytes.count` when there is none.
  static func firstInvalidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
    var index = 0
    let count = bytes.count
    while index < count {
      // ASCII runs, eight bytes at a time.
      while index + 8 <= count,
        UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0
      {
        index += 8
      }
      guard index < count else { break }
      let lead = bytes[index]
      if lead < 0x80 {
        index += 1
        continue
      }
      let length: Int
      var secondRange: ClosedRange<UInt8> = 0x80...0xBF
      switch lead {
      case 0xC2...0xDF: length = 2
      case 0xE0:
        length = 3
        secondRange = 0xA0...0xBF
      case 0xE1...0xEC, 0xEE...0xEF: length = 3
      case 0xED:
        length = 3
        secondRange = 0x80...0x9F
      case 0xF0:
        length = 4
        secondRange = 0x90...0xBF
      case 0xF1...0xF3: length = 4
      case 0xF4:
        length = 4
        secondRange = 0x80...0x8F
      default: return index
      }
      for continuation in 1..<length {
        let position = index + continuation
        guard position < count else { return index }
        let range: ClosedRange<UInt8> = continuation == 1 ? secondRange : 0x80...0xBF
        guard range.contains(bytes[position]) else { return position }
      }
      index += length
    }
    return count
  }

  /// The byte index of the first problem in UTF-16 code units stored two bytes each in the given byte order
  /// (an odd trailing byte, an unpaired surrogate) and what was expected there, or `nil` when valid.
  static func firstInvalidUTF16(_ buffer: UnsafeBufferPointer<UInt8>, bigEndian: Bool) -> (
    at: Int, expected: String
  )? {
    guard buffer.count % 2 == 0 else { return (buffer.count - 1, "an even number of bytes of UTF-16") }
    let count = buffer.count
    // The byte of each unit that says whether it is a surrogate (D8-DF).
    let high = bigEndian ? 0 : 1
    var index = 0
    // The high bytes of four units at a time, each made 0 exactly when it is D8-DF (a surrogate); the low
    // bytes set to FF so that only high bytes can be 0.
    let highBytes: UInt64 = bigEndian ? 0x00FF_00FF_00FF_00FF : 0xFF00_FF00_FF00_FF00
    let surrogate: UInt64 = 0xD8D8_D8D8_D8D8_D8D8 & highBytes
    while count - index >= 8 {
      let word = UnsafeRawPointer(buffer.baseAddress! + index).loadUnaligned(as: UInt64.self)
      let lanes = ((word & (0xF8F8_F8F8_F8F8_F8F8 & highBytes)) ^ surrogate) | ~highBytes
      // Some byte of `lanes` is 0: a surrogate among the four units.
      guard (lanes &- 0x0101_0101_0101_0101) & ~lanes & 0x8080_8080_8080_8080 == 0 else { break }
      index += 8
    }
    while index < count {
      // Runs without surrogates, one byte per unit looked at (`count` is even, so `index + high < count`).
      while index < count, buffer[index + high] & 0xF8 != 0xD8 { index += 2 }
      guard index < count else { break }
      switch unit(buffer, at: index, bigEndian: bigEndian) {
      case 0xD800...0xDBFF:
        guard index + 2 < count, (0xDC00...0xDFFF).contains(unit(buffer, at: index + 2, bigEndian: bigEndian))
        else {
          return (index, "a low surrogate (DC00-DFFF) after the high surrogate")
        }
        index += 4
      case 0xDC00...0xDFFF:
        return (index, "a high surrogate (D800-DBFF) before the low surrogate")
      default:
        index += 2
      }
    }
    return nil
  }

  /// Decodes UTF-16 code units stored two bytes each in the given byte order to UTF-8 in a temporary buffer
  /// (no array of code units on the way), checking the surrogates as it goes, then makes the string of it without
  /// checking it again: it is well-formed by construction. Only when the units are not well-formed are they looked
  /// at again, by ``firstInvalidUTF16(_:bigEndian:)``, to say where and why.
  static func decodeUTF16(_ buffer: UnsafeBufferPointer<UInt8>, bigEndian: Bool) -> Outcome {
    // A unit takes at most 3 bytes of UTF-8; a surrogate pair (2 units) takes 4.
    let text = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: buffer.count / 2 * 3) { utf8 -> String? in
      guard buffer.count % 2 == 0, let written = transcodeUTF16(buffer, bigEndian: bigEndian, into: utf8) else {
        return nil
      }
      // Each unit of US-ASCII is one byte of UTF-8, and every other unit more: one byte per unit means US-ASCII.
      return String(
        copying: UTF8Span(
          unchecked: UnsafeBufferPointer(rebasing: utf8[..<written]).span, isKnownASCII: written == buffer.count / 2))
    }
    if let text { return .valid(text) }
    // The transcoding stopped at a problem, which this finds.
    guard let (index, expected) = firstInvalidUTF16(buffer, bigEndian: bigEndian) else {
      preconditionFailure("UTF-16 that does not transcode is not well-formed")
    }
    return .invalid(at: index, expected: expected)
  }

  /// Writes the UTF-8 of UTF-16 code units stored two bytes each in the given byte order (an even number of bytes)
  /// into `utf8`, which has room for 3 bytes per unit; returns the number of bytes written, or `nil` at an unpaired
  /// surrogate.
  private static func transcodeUTF16(
    _ buffer: UnsafeBufferPointer<UInt8>, bigEndian: Bool, into utf8: UnsafeMutableBufferPointer<UInt8>
  ) -> Int? {
    var written = 0
    var index = 0
    // Four units at a time while they are all US-ASCII (high byte 0, low byte below 0x80).
    let notASCII: UInt64 = bigEndian ? 0x80FF_80FF_80FF_80FF : 0xFF80_FF80_FF80_FF80
    let shift: UInt64 = bigEndian ? 8 : 0
    while buffer.count - index >= 8 {
      let word = UnsafeRawPointer(buffer.baseAddress! + index).loadUnaligned(as: UInt64.self)
      guard word & notASCII == 0 else { break }
      utf8[written] = UInt8(truncatingIfNeeded: word >> shift)
      utf8[written + 1] = UInt8(truncatingIfNeeded: word >> (16 + shift))
      utf8[written + 2] = UInt8(truncatingIfNeeded: word >> (32 + shift))
      utf8[written + 3] = UInt8(truncatingIfNeeded: word >> (48 + shift))
      written += 4
      index += 8
    }
    while index + 1 < buffer.count {
      let first = UInt32(unit(buffer, at: index, bigEndian: bigEndian))
      index += 2
      if first < 0x80 {
        utf8[written] = UInt8(first)
        written += 1
      } else if first < 0x800 {
        utf8[written] = UInt8(0xC0 | first >> 6)
        utf8[written + 1] = UInt8(0x80 | first & 0x3F)
        written += 2
      } else if first & 0xF800 == 0xD800 {
        // A high surrogate (D800-DBFF) followed by a low one (DC00-DFFF); anything else is unpaired.
        guard first < 0xDC00, index + 1 < buffer.count else { return nil }
        let second = UInt32(unit(buffer, at: index, bigEndian: bigEndian))
        guard second & 0xFC00 == 0xDC00 else { return nil }
        index += 2
        let scalar = 0x10000 + ((first - 0xD800) << 10 | (second - 0xDC00))
        utf8[written] = UInt8(0xF0 | scalar >> 18)
        utf8[written + 1] = UInt8(0x80 | scalar >> 12 & 0x3F)
        utf8[written + 2] = UInt8(0x80 | scalar >> 6 & 0x3F)
        utf8[written + 3] = UInt8(0x80 | scalar & 0x3F)
        written += 4
      } else {
        utf8[written] = UInt8(0xE0 | first >> 12)
        utf8[written + 1] = UInt8(0x80 | first >> 6 & 0x3F)
        utf8[written + 2] = UInt8(0x80 | first & 0x3F)
        written += 3
      }
    }
    return written
  }

  /// The UTF-16 code unit at byte `index` (which must have a byte after it).
  private static func unit(_ buffer: UnsafeBufferPointer<UInt8>, at index: Int, bigEndian: Bool) -> UInt16 {
    let first = UInt16(buffer[index])
    let second = UInt16(buffer[index + 1])
    return bigEndian ? first << 8 | second : second << 8 | first
  }
}
