/// Puts SMP frames back together from the notifications that carry them.
///
/// A response longer than a notification arrives in several, with no framing but the first piece's
/// header (Zephyr's SMP transport over Bluetooth); a notification may also end one frame and begin the
/// next. Bytes are buffered until the header's length is complete. The buffer is bounded: a header
/// announcing a body over `maximumBodyLength` is refused at once. After a malformed header the buffer
/// is dropped, since nothing in the stream marks where the next frame starts; the next notification
/// starts afresh (as every frame starts a notification of its own in practice). `reset()` drops a
/// partial frame when the link goes down.
public struct SMPReassembler: Sendable {
  /// The longest body accepted.
  public let maximumBodyLength: Int
  private var buffer: [UInt8] = []

  /// A reassembler that accepts bodies of up to `maximumBodyLength` bytes.
  public init(maximumBodyLength: Int = 16_384) {
    self.maximumBodyLength = maximumBodyLength
  }

  /// Bytes of a partial frame held back.
  public var pendingCount: Int { buffer.count }

  /// Drops a partial frame.
  public mutating func reset() { buffer.removeAll() }

  /// Takes one notification; returns the frames it completed, and the error that made it drop the
  /// buffer, if any (frames completed before the error are kept).
  public mutating func append(_ bytes: [UInt8]) -> (frames: [SMPFrame], error: SMPFrameError?) {
    buffer.append(contentsOf: bytes)
    var frames: [SMPFrame] = []
    var start = 0
    while buffer.count - start >= SMPHeader.size {
      let header: SMPHeader
      do {
        header = try SMPHeader(decoding: buffer[start..<start + SMPHeader.size])
      } catch {
        buffer.removeAll()
        return (frames, error)
      }
      let length = Int(header.length)
      guard length <= maximumBodyLength else {
        buffer.removeAll()
        return (frames, SMPFrameError(.bodyTooLong(length: length, limit: maximumBodyLength)))
      }
      let end = start + SMPHeader.size + length
      guard buffer.count >= end else { break }
      frames.append(SMPFrame(header: header, body: Array(buffer[start + SMPHeader.size..<end])))
      start = end
    }
    buffer.removeFirst(start)
    return (frames, nil)
  }
}
