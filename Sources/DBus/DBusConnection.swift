import Foundation
import ReaderCore

/// A client connection to a message bus over a Unix socket: SASL EXTERNAL with the process's uid,
/// `Hello`, then messages both ways.
///
/// `open` connects and authenticates synchronously within a timeout (the caller picks the thread:
/// never a scheduler's). `call(_:timeout:)` is the synchronous form used before `start`; after
/// `start`, one thread of the connection's own reads messages and hands each to the message handler
/// (replies to `call(_:reply:)` go to their callback instead), and `send`/`call` may be used from any
/// thread. A malformed or oversized message from the bus closes the connection (the stream cannot be
/// resynchronised); so does end of stream. When it closes, every pending call gets `disconnected`
/// and the close handler runs once.
public final class DBusConnection: Sendable {
  /// The largest message accepted from the bus, unless `open` is given another bound.
  public static let defaultMessageLimit = 32 * 1024 * 1024

  private struct State {
    var nextSerial: UInt32 = 1
    var pending: [UInt32: @Sendable (Result<DBusMessage, DBusError>) -> Void] = [:]
    var closed = false
    var started = false
  }

  private let fd: Int32
  private let state = Locked(State())
  private let reader: Locked<MessageReader>
  /// The unique name the bus gave this connection (`:1.42`).
  public let uniqueName: String

  private init(fd: Int32, reader: MessageReader, uniqueName: String) {
    self.fd = fd
    self.reader = Locked(reader)
    self.uniqueName = uniqueName
  }

  // MARK: Opening

  /// Connects to the first address that answers, authenticates, and says `Hello`.
  /// - Throws: `DBusError` named `noServer` (no socket, refused; `errno` set), `authFailed`,
  ///   `noReply` (the bus did not answer within `timeout`) or `disconnected`.
  public static func open(
    _ addresses: [DBusAddress], timeout: Duration = .seconds(2), messageLimit: Int = defaultMessageLimit
  ) throws(DBusError) -> DBusConnection {
    var lastError = DBusError(name: noServerName, message: "no usable bus address")
    for address in addresses {
      do {
        return try open(address, timeout: timeout, messageLimit: messageLimit)
      } catch {
        lastError = error
      }
    }
    throw lastError
  }

  private static let noServerName = DBusError.noServer

  private static func open(_ address: DBusAddress, timeout: Duration, messageLimit: Int) throws(DBusError)
    -> DBusConnection
  {
    let fd = try UnixSocket.connect(address, timeout: timeout)
    var reader = MessageReader(fd: fd, limit: messageLimit)
    do throws(DBusError) {
      try UnixSocket.writeAll(fd, Array("\0AUTH EXTERNAL \(hex(String(getuid())))\r\n".utf8))
      let answer = try reader.readLine()
      guard answer.hasPrefix("OK ") else {
        throw DBusError(name: DBusError.authFailed, message: "the bus answered '\(answer.prefix(80))'")
      }
      try UnixSocket.writeAll(fd, Array("BEGIN\r\n".utf8))
      let hello = DBusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
        member: "Hello")
      var message = hello
      message.serial = 1
      try UnixSocket.writeAll(fd, message.encoded())
      let reply = try reader.readReply(to: 1)
      guard reply.kind == .methodReturn, let name = reply.body.first?.string else {
        throw DBusError(name: DBusError.authFailed, message: "Hello failed: \(DBusError(reply: reply))")
      }
      let connection = DBusConnection(fd: fd, reader: reader, uniqueName: name)
      connection.state.withLock { $0.nextSerial = 2 }
      return connection
    } catch {
      UnixSocket.close(fd)
      throw error
    }
  }

  private static func hex(_ text: String) -> String {
    text.utf8.map { String(format: "%02x", $0) }.joined()
  }

  // MARK: Before start: synchronous calls

  /// Sends a call and waits for its reply on the calling thread, discarding the signals that arrive
  /// meanwhile (what they announce is in the reply of a call made after they were sent). Only before
  /// `start`.
  /// - Throws: `DBusError`: the peer's error reply, `noReply` after `timeout`, `disconnected`.
  public func call(_ message: DBusMessage, timeout: Duration = .seconds(2)) throws(DBusError) -> DBusMessage {
    precondition(!state.withLock { $0.started }, "synchronous calls are for before start()")
    let serial = try send(message)
    try UnixSocket.setReceiveTimeout(fd, timeout)
    let reply = try reader.withLock { reader throws(DBusError) in try reader.readReply(to: serial) }
    guard reply.kind == .methodReturn else { throw DBusError(reply: reply) }
    return reply
  }

  // MARK: Running

  /// Starts the connection's reader thread: `onMessage` gets every signal and call, `onClose` runs
  /// once when the connection ends (with why). Both run on that thread.
  public func start(
    onMessage: @escaping @Sendable (DBusMessage) -> Void, onClose: @escaping @Sendable (DBusError) -> Void
  ) {
    let alreadyClosed = state.withLock { state -> Bool in
      state.started = true
      return state.closed
    }
    try? UnixSocket.setReceiveTimeout(fd, .zero)
    let thread = Thread { [self] in
      var closing = DBusError(name: DBusError.disconnected, message: "the connection was closed")
      while !alreadyClosed {
        do throws(DBusError) {
          let message = try reader.withLock { reader throws(DBusError) in try reader.readMessage() }
          if message.kind == .methodReturn || message.kind == .error, let serial = message.replySerial,
            let callback = state.withLock({ $0.pending.removeValue(forKey: serial) })
          {
            callback(message.kind == .error ? .failure(DBusError(reply: message)) : .success(message))
          } else {
            onMessage(message)
          }
        } catch {
          closing = error
          break
        }
      }
      let pending = state.withLock { state in
        state.closed = true
        defer { state.pending = [:] }
        UnixSocket.close(fd)
        return state.pending.values
      }
      for callback in pending { callback(.failure(closing)) }
      onClose(closing)
    }
    thread.name = "ReaderKit.DBusConnection"
    thread.start()
  }

  /// Sends a message (a call that expects no reply, a signal, a reply) and returns the serial it got.
  /// - Throws: `disconnected` once the connection is closed or the write fails.
  @discardableResult
  public func send(_ message: DBusMessage) throws(DBusError) -> UInt32 {
    try state.withLock { state throws(DBusError) -> UInt32 in
      try write(message, in: &state)
    }
  }

  /// Sends a call whose reply (or error, or `disconnected` if the connection ends first) goes to
  /// `reply`, on the reader thread. Returns the call's serial, for `abandon`.
  @discardableResult
  public func call(_ message: DBusMessage, reply: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void)
    -> UInt32?
  {
    let outcome = state.withLock { state -> Result<UInt32, DBusError> in
      do throws(DBusError) {
        let serial = try write(message, in: &state)
        state.pending[serial] = reply
        return .success(serial)
      } catch { return .failure(error) }
    }
    switch outcome {
    case .success(let serial): return serial
    case .failure(let error):
      reply(.failure(error))
      return nil
    }
  }

  /// Forgets a pending call (its time ran out): its reply, if it comes, is dropped. Returns whether
  /// the call was still pending.
  @discardableResult
  public func abandon(_ serial: UInt32) -> Bool {
    state.withLock { $0.pending.removeValue(forKey: serial) != nil }
  }

  /// Closes the connection; the reader thread ends, pending calls fail with `disconnected`, and the
  /// close handler runs. Idempotent.
  public func close() {
    let closeNow = state.withLock { state -> Bool in
      guard !state.closed else { return false }
      if !state.started {
        state.closed = true
        return true
      }
      UnixSocket.shutdown(fd)
      return false
    }
    if closeNow { UnixSocket.close(fd) }
  }

  private func write(_ message: DBusMessage, in state: inout State) throws(DBusError) -> UInt32 {
    guard !state.closed else { throw DBusError(name: DBusError.disconnected, message: "the connection is closed") }
    var message = message
    message.serial = state.nextSerial
    state.nextSerial = state.nextSerial == UInt32.max ? 1 : state.nextSerial + 1
    try UnixSocket.writeAll(fd, message.encoded())
    return message.serial
  }
}
