/// Encodes NDEF messages to bytes.
///
/// ``encode(_:)`` writes the canonical form: MB on the first record, ME on the last, SR whenever a
/// payload is shorter than 256 bytes, IL only when a record has an identifier, and no chunking. For any
/// message `m`, `decode(encode(m)) == m`; for canonical bytes `b`, `encode(decode(b)) == b`.
/// ``encode(_:chunkSize:)`` splits long payloads into chunks instead, for readers and tags that need it.
///
/// ```swift
/// let bytes = NDEFEncoder().encode(NDEFMessage(try .text("hello")))
/// // D1 01 08 54 02 65 6E 68 65 6C 6C 6F
/// ```
public struct NDEFEncoder: Sendable {
  /// Creates an encoder.
  public init() {}

  /// The canonical encoding of `message`. Encoding cannot fail: messages and records are checked when
  /// they are created.
  public func encode(_ message: NDEFMessage) -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(encodedLength(of: message))
    let last = message.records.count - 1
    for (index, record) in message.records.enumerated() {
      appendRecord(
        to: &output, typeNameFormat: record.typeNameFormat, type: record.type, identifier: record.identifier,
        payload: record.payload, messageBegin: index == 0, messageEnd: index == last, chunked: false)
    }
    return output
  }

  /// The encoding of `message` with every payload longer than `chunkSize` split into chunks of at most
  /// `chunkSize` bytes: a first chunk with the record's TNF, type and identifier and the CF flag, middle
  /// chunks with TNF 6 (unchanged) and CF, and a terminating chunk with TNF 6 and no CF.
  ///
  /// - Throws: ``NDEFError/Code/invalidArgument`` when `chunkSize` is less than 1.
  public func encode(_ message: NDEFMessage, chunkSize: Int) throws(NDEFError) -> [UInt8] {
    guard chunkSize >= 1 else {
      throw NDEFError(
        .invalidArgument, "chunk size \(chunkSize)", offset: 0, expected: "a chunk size of at least 1 byte",
        context: ["field": "chunkSize"])
    }
    return encode(message, chunkSizes: { _ in chunkSize })
  }

  /// The encoding of `message` with the payload of record `i` split into chunks of at most
  /// `chunkSizes(i)` bytes (0: not chunked), as ``encode(_:chunkSize:)`` splits them.
  func encode(_ message: NDEFMessage, chunkSizes: (Int) -> Int) -> [UInt8] {
    var output: [UInt8] = []
    let last = message.records.count - 1
    for (index, record) in message.records.enumerated() {
      let payload = record.payload
      let chunkSize = chunkSizes(index)
      guard chunkSize >= 1, payload.count > chunkSize else {
        appendRecord(
          to: &output, typeNameFormat: record.typeNameFormat, type: record.type, identifier: record.identifier,
          payload: payload, messageBegin: index == 0, messageEnd: index == last, chunked: false)
        continue
      }
      var start = 0
      while start < payload.count {
        let end = min(start + chunkSize, payload.count)
        let isFirst = start == 0
        let isLast = end == payload.count
        appendRecord(
          to: &output, typeNameFormat: isFirst ? record.typeNameFormat : .unchanged,
          type: isFirst ? record.type : [], identifier: isFirst ? record.identifier : [],
          payload: payload[start..<end], messageBegin: index == 0 && isFirst, messageEnd: index == last && isLast,
          chunked: !isLast)
        start = end
      }
    }
    return output
  }

  /// The number of bytes ``encode(_:)`` produces for `message`.
  public func encodedLength(of message: NDEFMessage) -> Int {
    message.records.reduce(0) { total, record in
      total + 3 + (record.payload.count < 256 ? 0 : 3) + (record.identifier.isEmpty ? 0 : 1) + record.type.count
        + record.identifier.count + record.payload.count
    }
  }

  private func appendRecord(
    to output: inout [UInt8], typeNameFormat: TypeNameFormat, type: NDEFBytes, identifier: NDEFBytes,
    payload: NDEFBytes, messageBegin: Bool, messageEnd: Bool, chunked: Bool
  ) {
    let short = payload.count < 256
    var flags = typeNameFormat.rawValue
    if messageBegin { flags |= 0x80 }
    if messageEnd { flags |= 0x40 }
    if chunked { flags |= 0x20 }
    if short { flags |= 0x10 }
    if !identifier.isEmpty { flags |= 0x08 }
    output.append(flags)
    output.append(UInt8(type.count))
    if short {
      output.append(UInt8(payload.count))
    } else {
      let length = UInt32(payload.count)
      output.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF)])
      output.append(UInt8(length & 0xFF))
    }
    if !identifier.isEmpty { output.append(UInt8(identifier.count)) }
    output.append(contentsOf: type.storage)
    output.append(contentsOf: identifier.storage)
    output.append(contentsOf: payload.storage)
  }
}
