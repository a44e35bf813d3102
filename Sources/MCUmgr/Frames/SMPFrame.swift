/// One SMP frame: the 8-byte header and the CBOR body it announces.
public struct SMPFrame: Sendable, Hashable {
  /// The header; its `length` is the body's size.
  public var header: SMPHeader
  /// The body's bytes (a CBOR map for the standard groups).
  public var body: [UInt8]

  /// A frame from a header and a body whose size the header already gives.
  public init(header: SMPHeader, body: [UInt8]) {
    self.header = header
    self.body = body
  }

  /// A request or response whose body is `body` encoded as CBOR.
  /// - Precondition: the encoded body fits the header's 16-bit length.
  public init(
    operation: SMPHeader.Operation, group: UInt16, command: UInt8, sequence: UInt8, body: CBORValue,
    version: UInt8 = SMPHeader.version2
  ) {
    let bytes = CBOREncoder.encode(body)
    precondition(bytes.count <= Int(UInt16.max), "an SMP body holds at most 65535 bytes")
    self.init(
      header: SMPHeader(
        operation: operation, version: version, length: UInt16(bytes.count), group: group, sequence: sequence,
        command: command),
      body: bytes)
  }

  /// Header and body, as sent.
  public var bytes: [UInt8] { header.bytes + body }

  /// The frame split into writes of at most `maximumWriteLength` bytes, in order. SMP over Bluetooth
  /// adds no framing to the pieces: the header of the first gives the total length.
  public func fragments(maximumWriteLength: Int) -> [[UInt8]] {
    let all = bytes
    let size = max(1, maximumWriteLength)
    return stride(from: 0, to: all.count, by: size).map { Array(all[$0..<min($0 + size, all.count)]) }
  }
}
