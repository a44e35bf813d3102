/// The underlying fault behind a `ReaderError` or an `NFCReaderError`, kept as data so code can act
/// on it (retry on `EINTR`, show a tag's status word, tell a 404 from a 503) without parsing text.
public enum ErrorCause: Sendable, Hashable, CustomStringConvertible {
  /// A system call failed with this `errno`.
  case errno(Int32)
  /// A smart card or NFC tag answered with this ISO 7816-4 status word (SW1 SW2, e.g. `0x6A82`).
  case statusWord(UInt16)
  /// An HTTP server answered with this status code.
  case httpStatus(Int)
  /// A PC/SC call failed with this `SCARD_E_*` / `SCARD_W_*` code (e.g. `0x80100069`).
  case pcsc(UInt32)
  /// A D-Bus call failed with this error name (e.g. `org.bluez.Error.InProgress`) and message.
  case dbus(name: String, message: String)
  /// An MCUmgr SMP request failed: `rc` is the response's result code, `group` the management
  /// group that answered with a group error (nil for a plain `rc`).
  case smp(rc: Int, group: UInt16?)
  /// Another fault, described for people.
  case other(String)

  /// A short stable rendering, e.g. `errno 28`, `SW 6A82`, `HTTP 404`, `PC/SC 0x80100069`.
  public var description: String {
    switch self {
    case .errno(let value): "errno \(value)"
    case .statusWord(let word): "SW \(Self.hex(UInt64(word), width: 4))"
    case .httpStatus(let status): "HTTP \(status)"
    case .pcsc(let code): "PC/SC 0x\(Self.hex(UInt64(code), width: 8))"
    case .dbus(let name, let message): message.isEmpty ? name : "\(name): \(message)"
    case .smp(let rc, let group): group.map { "SMP group \($0) rc \(rc)" } ?? "SMP rc \(rc)"
    case .other(let text): text
    }
  }

  private static func hex(_ value: UInt64, width: Int) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }
}
