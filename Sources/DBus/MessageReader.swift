/// Splits the bytes coming from the bus into SASL lines, then messages: it waits for a message's
/// 16-byte prefix, learns its length from it (bounded by `limit` before anything is kept), and reads
/// until the whole message is there.
struct MessageReader {
  /// The longest SASL line accepted.
  static let maximumLineLength = 16 * 1024

  let fd: Int32
  let limit: Int
  private var buffer: [UInt8] = []
  private var start = 0

  init(fd: Int32, limit: Int) {
    self.fd = fd
    self.limit = limit
  }

  /// One `\r\n`-terminated line of the authentication conversation, without its terminator.
  mutating func readLine() throws(DBusError) -> String {
    while true {
      let window = buffer[start...]
      if let newline = window.firstIndex(of: UInt8(ascii: "\n")) {
        var line = buffer[start..<newline]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        start = newline + 1
        return String(decoding: line, as: UTF8.self)
      }
      guard window.count < Self.maximumLineLength else {
        throw DBusError(name: DBusError.authFailed, message: "the bus sent a line longer than 16 KiB")
      }
      try fill()
    }
  }

  /// The next whole message.
  mutating func readMessage() throws(DBusError) -> DBusMessage {
    while true {
      let available = buffer.count - start
      let length: Int?
      do { length = try DBusMessage.frameLength(buffer[start...], limit: limit) } catch {
        throw DBusError(name: DBusError.invalidMessage, message: "the bus sent a malformed message: \(error)")
      }
      if let length, available >= length {
        let bytes = Array(buffer[start..<(start + length)])
        start += length
        do { return try DBusMessage.decode(bytes) } catch {
          throw DBusError(name: DBusError.invalidMessage, message: "the bus sent a malformed message: \(error)")
        }
      }
      try fill()
    }
  }

  /// Messages until the reply (return or error) to `serial`; others are dropped.
  mutating func readReply(to serial: UInt32) throws(DBusError) -> DBusMessage {
    while true {
      let message = try readMessage()
      if message.kind == .methodReturn || message.kind == .error, message.replySerial == serial { return message }
    }
  }

  private mutating func fill() throws(DBusError) {
    if start > 0 && start * 2 >= buffer.count {
      buffer.removeSubrange(0..<start)
      start = 0
    }
    guard try UnixSocket.read(fd, into: &buffer, capacity: 64 * 1024) > 0 else {
      throw DBusError(name: DBusError.disconnected, message: "the bus closed the connection")
    }
  }
}
