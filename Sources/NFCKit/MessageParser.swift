/// Parses one NDEF message out of a buffer: the decoder's engine, also used for Smart Poster payloads.
///
/// Every length is checked against the bytes that remain before anything is sliced or allocated; the
/// only copies made are reassembled chunked payloads, sized exactly after the whole chunk sequence has
/// been checked. Offsets are local to `input` (0 is its first byte); `absolute` maps them to the offsets
/// reported in errors, so problems inside nested messages and reassembled chunks point into the original
/// input. Nothing is allocated for error reporting unless an error is thrown.
struct MessageParser {
  /// The bytes of the message.
  let input: ArraySlice<UInt8>
  /// The limits in force.
  let options: NDEFDecodingOptions
  /// 0 for the outermost message, 1 inside a Smart Poster, and so on.
  let depth: Int
  /// Maps a local offset to the offset reported in errors.
  let absolute: ErrorOffsets
  /// The typed views built while payloads are checked (with ``NDEFDecodingOptions/validatesWellKnownPayloads``).
  var building: Building = .nothing

  /// Which typed views the parser builds from the payloads it checks, instead of only checking them.
  enum Building {
    /// None: payloads are only checked (the decoder's `decode`).
    case nothing
    /// Text and URI values; Smart Posters are only checked (inside a Smart Poster being read).
    case textAndURI
    /// Text, URI and Smart Poster values (the decoder's `decodeTyped`).
    case all
  }

  /// The number of bytes in `input`.
  private var count: Int { input.count }

  /// The byte at a local offset.
  private func byte(_ offset: Int) -> UInt8 { input[input.startIndex + offset] }

  /// An error at a local offset.
  private func failure(
    _ code: NDEFError.Code, _ message: String, at offset: Int, expected: String, record: Int,
    field: String? = nil
  ) -> NDEFError {
    var context = ["record": String(record)]
    if depth > 0 { context["depth"] = String(depth) }
    if let field { context["field"] = field }
    return NDEFError(code, message, offset: absolute(offset), expected: expected, context: context)
  }

  /// Parses the whole buffer as one message.
  ///
  /// - Parameter budget: records that may still be read (shared with nested messages); decremented per chunk.
  func parseMessage(budget: inout Int) throws(NDEFError) -> [NDEFRecord] {
    var values = DiscardedRecordValues()
    return try parseMessage(budget: &budget, values: &values)
  }

  /// Parses the whole buffer as one message, handing `values` the typed view of each record (see
  /// ``building``) as soon as its payload has been checked.
  ///
  /// - Parameter budget: records that may still be read (shared with nested messages); decremented per chunk.
  func parseMessage<Values: RecordValueSink>(budget: inout Int, values: inout Values) throws(NDEFError)
    -> [NDEFRecord]
  {
    var reader = RecordsAndValues(values: values)
    // The values are handed back whether or not the parse succeeds.
    defer { values = reader.values }
    try parseMessage(budget: &budget, into: &reader)
    return reader.records
  }

  /// Parses the whole buffer as one message, handing `reader` the typed view of each record (see
  /// ``building``) as soon as its payload has been checked, then the record itself.
  ///
  /// - Parameter budget: records that may still be read (shared with nested messages); decremented per chunk.
  func parseMessage<Reader: RecordValueSink & RecordCollector>(budget: inout Int, into reader: inout Reader)
    throws(NDEFError)
  {
    guard depth <= options.effectiveMaxNestingDepth else {
      throw failure(
        .nestingTooDeep, "Smart Posters nest \(depth) deep", at: 0,
        expected:
          "at most \(options.effectiveMaxNestingDepth) nested messages (NDEFDecodingOptions.maxNestingDepth, "
          + "at most \(NDEFDecodingOptions.nestingDepthCeiling))",
        record: 0)
    }
    guard count > 0 else {
      throw failure(
        .zeroLengthMessage, depth == 0 ? "the input is empty" : "the nested message is empty", at: 0,
        expected: "at least one record (the empty message is D0 00 00)", record: 0)
    }
    // Room for a few records without looking ahead (most messages are short); a message with more is
    // measured when the array is full, so it is allocated once more, to its exact size.
    reader.reserveCapacity(min(Self.recordsReservedUpFront, count / 3, budget))
    reader.reserve(reader.capacity)
    var position = 0
    var index = 0
    // Read once: the options do not change during the parse.
    let payloadLimit = payloadLimit
    let checksWellKnownPayloads = options.validatesWellKnownPayloads
    while true {
      guard position < count else {
        throw failure(
          .missingMessageEnd, "the input ends after record \(index - 1), which does not have the ME flag",
          at: position, expected: "another record, or the ME flag on the last record", record: index)
      }
      if index == reader.capacity {
        reader.reserveCapacity(index + headerCount(from: position, upTo: budget))
      }
      try spend(&budget, at: position, record: index)
      // A header that fits is read in one pass over the bytes; one that does not is read again, field by
      // field, to say which length is wrong.
      let header: RecordHeader
      if let fitting = fittingHeader(at: position) {
        header = fitting
      } else {
        header = try readHeader(at: position, record: index)
      }
      if index == 0 {
        guard header.messageBegin else {
          throw failure(
            .missingMessageBegin, "the first record does not have the MB flag", at: position,
            expected: "MB (0x80) set on the first record", record: index)
        }
      } else if header.messageBegin {
        throw failure(
          .unexpectedMessageBegin, "record \(index) has the MB flag", at: position,
          expected: "MB only on the first record", record: index)
      }
      try checkLayout(of: header, record: index)

      let last: RecordHeader
      if header.chunked {
        let joined: NDEFRecord
        (joined, last) = try reassemble(from: header, record: index, budget: &budget)
        try hand(
          joined.fields.span, header: header, joined: joined, checksWellKnownPayloads: checksWellKnownPayloads,
          record: index, budget: &budget, to: &reader)
      } else {
        guard header.payloadLength <= payloadLimit else {
          throw payloadTooLarge(header.payloadLength, at: header.payloadLengthOffset, record: index)
        }
        last = header
        // A header is made only once its lengths fit in the input: its fields lie inside it.
        try hand(
          input.span.extracting(unchecked: Range(uncheckedBounds: (header.typeStart, header.end))), header: header,
          joined: nil, checksWellKnownPayloads: checksWellKnownPayloads, record: index, budget: &budget, to: &reader)
      }
      position = last.end
      if last.messageEnd {
        guard position == count else {
          throw failure(
            .trailingBytes, "\(count - position) bytes follow the record with the ME flag", at: position,
            expected: "the end of the message after the ME record", record: index + 1)
        }
        return
      }
      // At most the budget of records: no overflow.
      index &+= 1
    }
  }

  /// Hands `reader` the typed view of the record whose fields (TYPE, ID, PAYLOAD, where they lie) are `fields`
  /// and whose (first) header is `header` (see ``building``), once its payload has been checked; then the
  /// record. `joined` is the record joined from chunks, `nil` when it was not chunked;
  /// `checksWellKnownPayloads` is ``NDEFDecodingOptions/validatesWellKnownPayloads``.
  @inline(__always)
  private func hand<Reader: RecordValueSink & RecordCollector>(
    _ fields: Span<UInt8>, header: RecordHeader, joined: NDEFRecord?, checksWellKnownPayloads: Bool,
    record index: Int, budget: inout Int, to reader: inout Reader
  ) throws(NDEFError) {
    // Only well-known records with a type of one or two bytes starting with T, U or S (T, U, Sp) have a payload to
    // check or a value (a well-known record has a type: checkLayout saw to it).
    if checksWellKnownPayloads, header.flags & 0x07 == 0x01, header.typeLength <= 2,
      fields[0] == UInt8(ascii: "T") || fields[0] == UInt8(ascii: "U") || fields[0] == UInt8(ascii: "S")
    {
      do {
        try validateWellKnownPayload(fields, header: header, joined: joined, budget: &budget, values: &reader)
      } catch {
        throw depth > 0 ? error.naming(record: index, depth: depth) : error
      }
    } else {
      reader.takeNone()
    }
    reader.append(fields, header: header, joined: joined, in: input)
  }

  /// The records a message has room for before anything past its first header is read.
  private static let recordsReservedUpFront = 8

  /// The number of record and chunk headers, up to `limit`, found by following the lengths from local
  /// offset `start` until the ME flag, the end of the input or a length past it: the capacity to reserve
  /// for the records that remain (without looking at anything else, so it may count chunks and malformed
  /// records too).
  private func headerCount(from start: Int, upTo limit: Int) -> Int {
    var headers = 0
    var position = start
    while headers < limit, position < count {
      let flags = byte(position)
      let lengthsSize = 2 + (flags & 0x10 != 0 ? 1 : 4) + (flags & 0x08 != 0 ? 1 : 0)
      guard count - position >= lengthsSize else { break }
      let typeLength = Int(byte(position + 1))
      let payloadLength =
        flags & 0x10 != 0
        ? Int(byte(position + 2))
        : Int(byte(position + 2)) << 24 | Int(byte(position + 3)) << 16 | Int(byte(position + 4)) << 8
          | Int(byte(position + 5))
      let idLength = flags & 0x08 != 0 ? Int(byte(position + lengthsSize - 1)) : 0
      headers += 1
      guard flags & 0x40 == 0 else { break }
      position += lengthsSize + typeLength + idLength + payloadLength
    }
    return headers
  }

  /// The local offset of the first header of logical record `index` of a message that parsed (found again
  /// by following the headers: only errors need it).
  func start(ofRecord index: Int) -> Int {
    var position = 0
    var record = 0
    while record < index, position < count, var header = try? readHeader(at: position, record: record) {
      while header.chunked, header.end < count, let next = try? readHeader(at: header.end, record: record) {
        header = next
      }
      position = header.end
      record += 1
    }
    return position
  }

  /// The largest payload accepted for one logical record.
  private var payloadLimit: Int { options.effectiveMaxPayloadSize }

  /// Takes one record from the budget.
  @inline(__always)
  private func spend(_ budget: inout Int, at offset: Int, record: Int) throws(NDEFError) {
    guard budget > 0 else { throw tooManyRecords(at: offset, record: record) }
    budget &-= 1
  }

  private func tooManyRecords(at offset: Int, record: Int) -> NDEFError {
    failure(
      .tooManyRecords, "more than \(options.effectiveMaxRecords) records", at: offset,
      expected: "at most \(options.effectiveMaxRecords) records and chunks (NDEFDecodingOptions.maxRecords)",
      record: record)
  }

  private func payloadTooLarge(_ size: Int, at offset: Int, record: Int) -> NDEFError {
    failure(
      .payloadTooLarge, "record \(record) has a payload of \(size) bytes", at: offset,
      expected: "a payload of at most \(payloadLimit) bytes (NDEFDecodingOptions.maxPayloadSize)",
      record: record, field: "PAYLOAD_LENGTH")
  }

  /// Reads the header at `start` (which must be inside the buffer), checking every length against the
  /// bytes that remain.
  @inline(__always)
  func readHeader(at start: Int, record: Int) throws(NDEFError) -> RecordHeader {
    let flags = byte(start)
    var cursor = start + 1

    func truncated(_ field: String, needs: Int) -> NDEFError {
      failure(
        .truncated, "the input ends inside the header of record \(record)", at: cursor,
        expected: "\(needs) byte\(needs == 1 ? "" : "s") of \(field), \(count - cursor) available", record: record,
        field: field)
    }

    guard cursor < count else { throw truncated("TYPE_LENGTH", needs: 1) }
    let typeLength = Int(byte(cursor))
    cursor += 1

    let payloadLength32: UInt32
    if flags & 0x10 != 0 {
      guard cursor < count else { throw truncated("PAYLOAD_LENGTH (SR set)", needs: 1) }
      payloadLength32 = UInt32(byte(cursor))
      cursor += 1
    } else {
      guard count - cursor >= 4 else { throw truncated("PAYLOAD_LENGTH (SR clear)", needs: 4) }
      payloadLength32 =
        UInt32(byte(cursor)) << 24 | UInt32(byte(cursor + 1)) << 16 | UInt32(byte(cursor + 2)) << 8
        | UInt32(byte(cursor + 3))
      cursor += 4
    }

    var idLength = 0
    if flags & 0x08 != 0 {
      guard cursor < count else { throw truncated("ID_LENGTH (IL set)", needs: 1) }
      idLength = Int(byte(cursor))
      cursor += 1
    }

    // Every length against what remains, before anything is sliced.
    var remaining = count - cursor
    func outOfBounds(_ field: String, _ length: UInt64, at offset: Int) -> NDEFError {
      failure(
        .lengthOutOfBounds, "\(field) \(length) of record \(record) points past the end of the input", at: offset,
        expected: "at most \(remaining) bytes, the rest of the input", record: record, field: field)
    }
    guard typeLength <= remaining else { throw outOfBounds("TYPE_LENGTH", UInt64(typeLength), at: start + 1) }
    remaining -= typeLength
    let idLengthOffset = start + (flags & 0x10 != 0 ? 3 : 6)
    guard idLength <= remaining else { throw outOfBounds("ID_LENGTH", UInt64(idLength), at: idLengthOffset) }
    remaining -= idLength
    guard UInt64(payloadLength32) <= UInt64(remaining) else {
      throw outOfBounds("PAYLOAD_LENGTH", UInt64(payloadLength32), at: start + 2)
    }
    return RecordHeader(
      start: start, flags: flags, typeLength: typeLength, payloadLength: Int(payloadLength32), idLength: idLength,
      typeStart: cursor)
  }

  /// The header at local offset `start` (inside the buffer) when every length in it fits in the bytes that
  /// remain, as ``readHeader(at:record:)`` reads it, or `nil` (then that function says what is wrong). Each
  /// byte is read only after the bytes left have been checked to hold it.
  @inline(__always)
  private func fittingHeader(at start: Int) -> RecordHeader? {
    input.withUnsafeBufferPointer { bytes -> RecordHeader? in
      // `start` is inside the buffer (the subtraction cannot overflow; a negative one is refused below).
      let left = bytes.count &- start
      // The header byte, TYPE_LENGTH and at least one byte of PAYLOAD_LENGTH.
      guard start >= 0, left >= 3, let base = bytes.baseAddress.map({ $0 + start }) else { return nil }
      let flags = base[0]
      let typeLength = Int(base[1])
      var size: Int
      let payloadLength: Int
      if flags & 0x10 != 0 {
        payloadLength = Int(base[2])
        size = 3
      } else {
        guard left >= 6 else { return nil }
        payloadLength = Int(base[2]) << 24 | Int(base[3]) << 16 | Int(base[4]) << 8 | Int(base[5])
        size = 6
      }
      var idLength = 0
      if flags & 0x08 != 0 {
        guard left > size else { return nil }
        idLength = Int(base[size])
        size &+= 1
      }
      // Each length is below 2^32 and `size` at most 7: neither side can overflow.
      guard typeLength &+ idLength &+ payloadLength <= left &- size else { return nil }
      return RecordHeader(
        start: start, flags: flags, typeLength: typeLength, payloadLength: payloadLength, idLength: idLength,
        typeStart: start &+ size)
    }
  }

  /// Checks the rules a record (or first chunk) must follow for its TNF.
  @inline(__always)
  private func checkLayout(of header: RecordHeader, record: Int) throws(NDEFError) {
    // Most records pass at a glance, inline in the parse loop: TNF 1 to 4 with a type, not both CF (0x20)
    // and ME (0x40), which is all the rules below ask of them.
    let format = header.flags & 0x07
    guard format == 0 || format > 4 || header.typeLength == 0 || header.flags & 0x60 == 0x60 else { return }
    try checkLayoutInDetail(of: header, record: record)
  }

  /// ``checkLayout(of:record:)`` for a record the glance did not pass: each rule, with the error it breaks.
  private func checkLayoutInDetail(of header: RecordHeader, record: Int) throws(NDEFError) {
    switch header.typeNameFormat {
    case .unchanged:
      throw failure(
        .unexpectedUnchangedRecord,
        header.chunked
          ? "record \(record) starts a chunked record with TNF 6 (unchanged)"
          : "record \(record) has TNF 6 (unchanged) but is not part of a chunked record",
        at: header.start,
        expected: "TNF 6 only on the middle and terminating chunks of a chunked record", record: record,
        field: "TNF")
    case .empty:
      guard header.typeLength == 0 else {
        throw failure(
          .invalidTypeLength, "empty record \(record) has TYPE_LENGTH \(header.typeLength)",
          at: header.typeLengthOffset, expected: "TYPE_LENGTH 0 for TNF 0 (empty)", record: record,
          field: "TYPE_LENGTH")
      }
      guard header.idLength == 0 else {
        throw failure(
          .invalidEmptyRecord, "empty record \(record) has ID_LENGTH \(header.idLength)",
          at: header.idLengthOffset, expected: "ID_LENGTH 0 for TNF 0 (empty)", record: record, field: "ID_LENGTH")
      }
      guard header.payloadLength == 0 else {
        throw failure(
          .invalidEmptyRecord, "empty record \(record) has PAYLOAD_LENGTH \(header.payloadLength)",
          at: header.payloadLengthOffset, expected: "PAYLOAD_LENGTH 0 for TNF 0 (empty)", record: record,
          field: "PAYLOAD_LENGTH")
      }
      guard !header.chunked else {
        throw failure(
          .invalidChunk, "empty record \(record) has the CF flag", at: header.start,
          expected: "no CF flag on an empty record (TNF 0 has no payload to chunk)", record: record, field: "CF")
      }
    case .nfcWellKnown, .media, .absoluteURI, .nfcExternal:
      guard header.typeLength > 0 else {
        throw failure(
          .invalidTypeLength, "record \(record) (\(header.typeNameFormat)) has TYPE_LENGTH 0",
          at: header.typeLengthOffset, expected: "TYPE_LENGTH of at least 1 for TNF \(header.typeNameFormat.rawValue)",
          record: record, field: "TYPE_LENGTH")
      }
    case .unknown:
      guard header.typeLength == 0 else {
        throw failure(
          .invalidTypeLength, "unknown-type record \(record) has TYPE_LENGTH \(header.typeLength)",
          at: header.typeLengthOffset, expected: "TYPE_LENGTH 0 for TNF 5 (unknown)", record: record,
          field: "TYPE_LENGTH")
      }
    case .reserved:
      break
    }
    if header.chunked && header.messageEnd {
      throw failure(
        .invalidChunk, "record \(record) has both CF and ME", at: header.start,
        expected: "a chunked record to end with a terminating chunk (CF clear) before ME", record: record,
        field: "CF")
    }
  }

  /// Checks the chunk sequence that starts with `first`, then joins the chunks' payloads into one record.
  ///
  /// The first pass checks every chunk header and sums the payload sizes without copying; only then is
  /// a buffer of exactly that size allocated and filled.
  private func reassemble(from first: RecordHeader, record: Int, budget: inout Int) throws(NDEFError) -> (
    NDEFRecord, RecordHeader
  ) {
    var total = first.payloadLength
    guard total <= payloadLimit else { throw payloadTooLarge(total, at: first.payloadLengthOffset, record: record) }
    var last = first
    var position = first.end
    var chunk = 1
    repeat {
      guard position < count else {
        throw failure(
          .truncated, "the input ends inside chunked record \(record) after chunk \(chunk - 1)", at: position,
          expected: "a middle or terminating chunk (TNF 6, unchanged)", record: record)
      }
      try spend(&budget, at: position, record: record)
      let header = try readHeader(at: position, record: record)
      let name = "chunk \(chunk) of record \(record)"
      guard !header.messageBegin else {
        throw failure(
          .unexpectedMessageBegin, "\(name) has the MB flag", at: header.start,
          expected: "MB only on the first record", record: record, field: "MB")
      }
      guard header.typeNameFormat == .unchanged else {
        throw failure(
          .invalidChunk, "\(name) has TNF \(header.typeNameFormat.rawValue) (\(header.typeNameFormat))",
          at: header.start, expected: "TNF 6 (unchanged) on a middle or terminating chunk", record: record,
          field: "TNF")
      }
      guard header.typeLength == 0 else {
        throw failure(
          .invalidChunk, "\(name) has TYPE_LENGTH \(header.typeLength)", at: header.typeLengthOffset,
          expected: "TYPE_LENGTH 0 on a middle or terminating chunk", record: record, field: "TYPE_LENGTH")
      }
      guard !header.hasIDLength else {
        throw failure(
          .invalidChunk, "\(name) has the IL flag", at: header.start,
          expected: "no IL flag on a middle or terminating chunk (only the first chunk carries the ID)",
          record: record, field: "IL")
      }
      guard !(header.chunked && header.messageEnd) else {
        throw failure(
          .invalidChunk, "\(name) has both CF and ME", at: header.start,
          expected: "a terminating chunk (CF clear) before ME", record: record, field: "CF")
      }
      total += header.payloadLength
      guard total <= payloadLimit else { throw payloadTooLarge(total, at: header.payloadLengthOffset, record: record) }
      last = header
      position = header.end
      chunk += 1
    } while last.chunked

    // TYPE and ID of the first chunk, then every chunk's payload: the record's fields in one buffer.
    var fields: [UInt8] = []
    fields.reserveCapacity(first.typeLength + first.idLength + total)
    fields += input[(input.startIndex + first.typeStart)..<(input.startIndex + first.payloadStart)]
    position = first.start
    while position < last.end {
      let header = try readHeader(at: position, record: record)
      let start = input.startIndex + header.payloadStart
      fields.append(contentsOf: input[start..<(start + header.payloadLength)])
      position = header.end
    }
    let joined = NDEFRecord(
      validated: first.typeNameFormat, fields: fields[...], typeLength: first.typeLength,
      identifierLength: first.idLength)
    return (joined, last)
  }

  /// The local offset of byte `index` of the payload of the record whose first header is at `recordStart`,
  /// following the chunks of a chunked record.
  func localOffset(ofPayloadByte index: Int, recordStart: Int) -> Int {
    var position = recordStart
    var remaining = index
    while position < count, let header = try? readHeader(at: position, record: 0) {
      if remaining < header.payloadLength || !header.chunked { return header.payloadStart + remaining }
      remaining -= header.payloadLength
      position = header.end
    }
    return recordStart
  }

  /// The offsets reported for the payload of the record whose first header is `header`: the input's own
  /// offsets, shifted, unless the payload was joined from chunks.
  @inline(__always)
  private func payloadOffsets(of header: RecordHeader) -> ErrorOffsets {
    guard header.chunked else { return absolute.shifted(by: header.payloadStart) }
    return ErrorOffsets { [self] in absolute(localOffset(ofPayloadByte: $0, recordStart: header.start)) }
  }

  /// The offset reported for byte `index` of the payload of logical record `record` (found again by
  /// following the headers: only errors need it).
  func offset(ofPayloadByte index: Int, record: Int) -> Int {
    absolute(localOffset(ofPayloadByte: index, recordStart: start(ofRecord: record)))
  }

  /// Parses Text, URI and Smart Poster payloads so that malformed ones fail here, at offsets in the input;
  /// hands `values` the typed view of the record when ``building`` asks for it, built by that same parse,
  /// and `takeNone()` for any other record.
  private func validateWellKnownPayload<Values: RecordValueSink>(
    _ fields: Span<UInt8>, header: RecordHeader, joined: NDEFRecord?, budget: inout Int, values: inout Values
  ) throws(NDEFError) {
    // Text and URI payloads are read where they lie: no slice of the input (and no retain of it) is made.
    if header.isWellKnown(UInt8(ascii: "T"), fields: fields) {
      do {
        guard building != .nothing else {
          try header.withPayload(in: fields) { (payload) throws(NDEFError) in try TextRecord.check(payload) { $0 } }
          return values.takeNone()
        }
        values.take(
          text: try header.withPayload(in: fields) { (payload) throws(NDEFError) in
            try TextRecord.parse(payload) { $0 }
          })
      } catch {
        throw error.mappingOffset(payloadOffsets(of: header).callAsFunction)
      }
    } else if header.isWellKnown(UInt8(ascii: "U"), fields: fields) {
      do {
        guard building != .nothing else {
          _ = try header.withPayload(in: fields) { (payload) throws(NDEFError) in
            try URIRecord.check(payload) { $0 }
          }
          return values.takeNone()
        }
        values.take(
          uri: try header.withPayload(in: fields) { (payload) throws(NDEFError) in
            try URIRecord.parse(payload) { $0 }
          })
      } catch {
        throw error.mappingOffset(payloadOffsets(of: header).callAsFunction)
      }
    } else if header.isWellKnown(UInt8(ascii: "S"), UInt8(ascii: "p"), fields: fields) {
      // The nested message is parsed from a view of the payload, which shares the buffer.
      let poster = try SmartPosterRecord.parse(
        header.payload(joined: joined, in: input), options: options, depth: depth + 1, budget: &budget,
        offset: payloadOffsets(of: header), building: building == .all)
      if let poster { values.take(smartPoster: poster) } else { values.takeNone() }
    } else {
      values.takeNone()
    }
  }
}

/// Maps offsets local to a parsed buffer to the offsets reported in errors: the buffer's position in the
/// input added, or, for a payload joined from chunks, a function that follows the chunks (the only case
/// that allocates, and it is rare).
struct ErrorOffsets {
  /// A function from local offsets to reported ones, in a class so that copying offsets retains at most one
  /// reference.
  private final class Mapping {
    let map: (Int) -> Int
    init(_ map: @escaping (Int) -> Int) { self.map = map }
  }

  /// Added to a local offset when there is no `mapping`.
  private let base: Int
  /// Maps a local offset, for buffers that are not one piece of the input.
  private let mapping: Mapping?

  private init(base: Int, mapping: Mapping?) {
    self.base = base
    self.mapping = mapping
  }

  /// The offsets of the input itself.
  static var identity: ErrorOffsets { ErrorOffsets(base: 0, mapping: nil) }

  /// Offsets given by a function.
  init(_ mapping: @escaping (Int) -> Int) {
    self.init(base: 0, mapping: Mapping(mapping))
  }

  /// The offset reported for local offset `local`.
  func callAsFunction(_ local: Int) -> Int {
    guard let mapping else { return base + local }
    return mapping.map(local)
  }

  /// The offsets of a buffer that starts at local offset `start` of this one.
  @inline(__always)
  func shifted(by start: Int) -> ErrorOffsets {
    guard let mapping else { return ErrorOffsets(base: base + start, mapping: nil) }
    return ErrorOffsets { mapping.map(start + $0) }
  }
}
