/// Why a reader disconnected, with the Stripe Terminal SDK's case names and meanings (iOS 5.x
/// `DisconnectReason`, declared in its order).
public enum DisconnectReason: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
  /// The cause is not known.
  case unknown
  /// The app called `disconnectReader()`.
  case disconnectRequested
  /// The app called `rebootReader()`.
  case rebootRequested
  /// The reader rebooted itself after 24 hours of operation (M2, WisePad 3).
  case securityReboot
  /// The reader's battery reached the critical level and it shut down.
  case criticallyLowBattery
  /// The reader was switched off.
  case poweredOff
  /// The host's Bluetooth radio was turned off.
  case bluetoothDisabled
  /// The reader powered itself down after a long idle period on battery.
  case idlePowerDown
  /// A USB reader's cable was pulled. ReaderKit's Bluetooth backends never report it; it exists so
  /// that code written for the anchor SDK's enum compiles and a `switch` stays exhaustive.
  case usbDisconnected
  /// The Bluetooth signal was lost: the reader moved out of range, or interference broke the link.
  case bluetoothSignalLost
  /// The reader no longer recognises the host's pairing (its bond was removed, or authentication
  /// failed); the user must forget the reader in the system's Bluetooth settings and pair again.
  case peerRemovedPairingInformation

  /// Whether the app asked for this disconnect. After `disconnectRequested` no reconnection follows;
  /// after `rebootRequested` the reader comes back and automatic reconnection wins it back.
  public var isRequested: Bool { self == .disconnectRequested || self == .rebootRequested }

  public var description: String { rawValue }
}
