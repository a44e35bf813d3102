/// Why a reader disconnected.
public enum DisconnectReason: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
  /// The cause is not known.
  case unknown
  /// The app called `disconnectReader()`.
  case disconnectRequested
  /// The app called `rebootReader()`.
  case rebootRequested
  /// The reader rebooted itself after 24 hours of operation (M2, WisePad 3).
  case securityReboot
  /// The reader powered itself down after a long idle period on battery.
  case idlePowerDown
  /// The reader's battery reached the critical level and it shut down.
  case criticalBatteryLevel
  /// The reader was switched off.
  case poweredOff
  /// The host's Bluetooth radio was turned off.
  case bluetoothDisabled
  /// The reader moved out of Bluetooth range.
  case outOfRange

  /// Whether the app asked for this disconnect. After `disconnectRequested` no reconnection follows;
  /// after `rebootRequested` the reader comes back and automatic reconnection wins it back.
  public var isRequested: Bool { self == .disconnectRequested || self == .rebootRequested }

  public var description: String { rawValue }
}
