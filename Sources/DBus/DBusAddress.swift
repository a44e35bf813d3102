/// Where a bus listens: a Unix socket path, or a name in Linux's abstract socket namespace.
///
/// Parsed from a D-Bus address string (`unix:path=/run/dbus/system_bus_socket`,
/// `unix:abstract=/tmp/dbus-x,guid=…`; several separated by `;`, values %-escaped), as
/// `DBUS_SYSTEM_BUS_ADDRESS` holds one.
public enum DBusAddress: Sendable, Hashable, CustomStringConvertible {
  /// A socket file.
  case unixPath(String)
  /// A socket in the abstract namespace (Linux).
  case unixAbstract(String)

  /// The system bus's well-known socket, used when `DBUS_SYSTEM_BUS_ADDRESS` is not set.
  public static let defaultSystemBus = DBusAddress.unixPath("/var/run/dbus/system_bus_socket")

  public var description: String {
    switch self {
    case .unixPath(let path): "unix:path=\(path)"
    case .unixAbstract(let name): "unix:abstract=\(name)"
    }
  }

  /// The addresses in `text` this client can use (Unix sockets), in order; others are skipped.
  public static func parse(_ text: String) -> [DBusAddress] {
    text.split(separator: ";").compactMap { entry -> DBusAddress? in
      guard let colon = entry.firstIndex(of: ":"), entry[..<colon] == "unix" else { return nil }
      var keys: [String: String] = [:]
      for pair in entry[entry.index(after: colon)...].split(separator: ",") {
        guard let equals = pair.firstIndex(of: "="), let value = unescape(pair[pair.index(after: equals)...]) else {
          continue
        }
        keys[String(pair[..<equals])] = value
      }
      if let path = keys["path"], !path.isEmpty { return .unixPath(path) }
      if let name = keys["abstract"], !name.isEmpty { return .unixAbstract(name) }
      return nil
    }
  }

  /// The system bus's addresses: `environment["DBUS_SYSTEM_BUS_ADDRESS"]` when set, else the default.
  public static func systemBus(environment: [String: String]) -> [DBusAddress] {
    guard let text = environment["DBUS_SYSTEM_BUS_ADDRESS"] else { return [defaultSystemBus] }
    return parse(text)
  }

  private static func unescape(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
        return nil
      }
      bytes.append(high << 4 | low)
    }
    return String(validating: bytes, as: UTF8.self)
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
