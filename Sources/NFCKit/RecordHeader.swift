/// The header of one record (or chunk) as read from the wire, with the offsets of its fields.
///
/// Offsets are local to the buffer being parsed. A header is only created once every length in it has
/// been checked against the bytes that remain, so `end` never points past the buffer.
struct RecordHeader {
  /// The offset of the header byte (MB ME CF SR IL TNF).
  let start: Int
  /// The header byte.
  let flags: UInt8
  /// The TYPE_LENGTH field.
  let typeLength: Int
  /// The PAYLOAD_LENGTH field.
  let payloadLength: Int
  /// The ID_LENGTH field, or 0 without the IL flag.
  let idLength: Int
  /// The offset of the TYPE field.
  let typeStart: Int

  /// MB: this is the first record of the message.
  var messageBegin: Bool { flags & 0x80 != 0 }
  /// ME: this is the last record of the message.
  var messageEnd: Bool { flags & 0x40 != 0 }
  /// CF: this is the first or a middle chunk of a chunked record.
  var chunked: Bool { flags & 0x20 != 0 }
  /// SR: the payload length is one byte.
  var shortRecord: Bool { flags & 0x10 != 0 }
  /// IL: an ID_LENGTH field is present.
  var hasIDLength: Bool { flags & 0x08 != 0 }
  /// The TNF bits.
  var typeNameFormat: TypeNameFormat { TypeNameFormat(headerByte: flags) }

  /// The offset of TYPE_LENGTH.
  var typeLengthOffset: Int { start + 1 }
  /// The offset of PAYLOAD_LENGTH.
  var payloadLengthOffset: Int { start + 2 }
  /// The offset of ID_LENGTH (meaningful with the IL flag).
  var idLengthOffset: Int { start + (shortRecord ? 3 : 6) }
  // The fields lie inside the buffer (checked before the header was made), so their offsets cannot overflow.
  /// The offset of the ID field.
  var idStart: Int { typeStart &+ typeLength }
  /// The offset of the PAYLOAD field.
  var payloadStart: Int { idStart &+ idLength }
  /// The offset just past the record.
  var end: Int { payloadStart &+ payloadLength }

  // MARK: The record's fields

  // A record's fields are TYPE, ID and PAYLOAD one after the other, read where they lie (a span of the input,
  // or of the buffer a chunked record's payloads were joined into), so that reading a record takes no
  // reference to the buffer, as an NDEFRecord made of it would (a retain, then a release when dropped).

  /// Whether this is the header of a well-known record whose type, at the start of `fields`, is the one
  /// byte `name` (as ``NDEFRecord/isWellKnown(_:)-(UInt8)`` says of the record).
  func isWellKnown(_ name: UInt8, fields: Span<UInt8>) -> Bool {
    flags & 0x07 == 0x01 && typeLength == 1 && fields[0] == name
  }

  /// Whether this is the header of a well-known record whose type, at the start of `fields`, is the bytes
  /// `first`, `second` and the optional `third`.
  func isWellKnown(_ first: UInt8, _ second: UInt8, _ third: UInt8? = nil, fields: Span<UInt8>) -> Bool {
    guard flags & 0x07 == 0x01, typeLength == (third == nil ? 2 : 3) else { return false }
    return fields[0] == first && fields[1] == second && (third.map { fields[2] == $0 } ?? true)
  }

  /// Calls `body` with the PAYLOAD of the record whose fields are `fields`, keeping a typed error.
  func withPayload<R, E: Error>(in fields: Span<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R)
    throws(E) -> R
  {
    let start = typeLength &+ idLength
    return try fields.withUnsafeBufferPointer { (fields) throws(E) in
      try body(UnsafeBufferPointer(rebasing: fields[start...]))
    }
  }

  /// The PAYLOAD of the record whose first header this is: that of `joined` when it was joined from chunks,
  /// otherwise a view of `input`, the buffer this header was read from (sharing it, with no record made).
  @inline(__always)
  func payload(joined: NDEFRecord?, in input: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    if let joined { return joined.payload.storage }
    // Offsets inside `input` (checked when the header was read) cannot overflow; the slice checks its bounds.
    let base = input.startIndex
    return input[(base &+ payloadStart)..<(base &+ end)]
  }

  /// The record whose first header this is: `joined` when it was joined from chunks, otherwise a view of
  /// `input`, the buffer this header was read from (sharing it).
  @inline(__always)
  func record(joined: NDEFRecord?, in input: ArraySlice<UInt8>) -> NDEFRecord {
    if let joined { return joined }
    // Offsets inside `input` (checked when the header was read) cannot overflow; the slice checks its bounds.
    let base = input.startIndex
    return NDEFRecord(
      validated: typeNameFormat, fields: input[(base &+ typeStart)..<(base &+ end)], typeLength: typeLength,
      identifierLength: idLength)
  }
}
