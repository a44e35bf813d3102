/// A D-Bus error: a peer's error reply, or a fault of the connection itself under the standard
/// `org.freedesktop.DBus.Error.*` name that libdbus would give it.
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The error's name, e.g. `org.bluez.Error.InProgress`.
  public var name: String
  /// The explanation that came with it.
  public var message: String
  /// The `errno` behind a connection fault, when there is one.
  public var errno: Int32?

  /// Creates an error.
  public init(name: String, message: String, errno: Int32? = nil) {
    self.name = name
    self.message = message
    self.errno = errno
  }

  /// No bus listens at the address (the socket is missing or refuses connections).
  public static let noServer = "org.freedesktop.DBus.Error.NoServer"
  /// The bus refused to authenticate this process.
  public static let authFailed = "org.freedesktop.DBus.Error.AuthFailed"
  /// The connection is closed or broke.
  public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
  /// No reply came within the call's time.
  public static let noReply = "org.freedesktop.DBus.Error.NoReply"
  /// The bus's security policy does not let this process send the message (to `org.bluez`, say).
  public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
  /// The named service is not on the bus.
  public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
  /// The object or method does not exist.
  public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
  /// The peer broke the wire protocol (a malformed message or an oversized one).
  public static let invalidMessage = "org.freedesktop.DBus.Error.InconsistentMessage"

  /// The error carried by an error reply.
  public init(reply: DBusMessage) {
    self.init(name: reply.errorName ?? "org.freedesktop.DBus.Error.Failed", message: reply.errorMessage)
  }

  public var description: String { message.isEmpty ? name : "\(name): \(message)" }
}
