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
  /// The offset of the ID field.
  var idStart: Int { typeStart + typeLength }
  /// The offset of the PAYLOAD field.
  var payloadStart: Int { idStart + idLength }
  /// The offset just past the record.
  var end: Int { payloadStart + payloadLength }
}
