/// A model of Bluetooth card reader, with what it can do.
public enum DeviceType: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
  /// BBPOS Chipper 2X BT: the only model that supports proximity discovery; no 24-hour reboot.
  case chipper2X
  /// Stripe Reader M2: reboots itself after 24 hours of operation.
  case stripeM2
  /// BBPOS WisePad 3: reboots itself after 24 hours of operation.
  case wisePad3

  /// Whether `BluetoothProximityDiscoveryConfiguration` finds this model.
  public var supportsProximityDiscovery: Bool { self == .chipper2X }

  /// Whether the reader reboots itself (`DisconnectReason.securityReboot`) after 24 hours of operation.
  public var hasSecurityReboot: Bool { self != .chipper2X }

  /// The prefix of this model's serial numbers, as printed on the device label.
  public var serialPrefix: String {
    switch self {
    case .chipper2X: "CHB20"
    case .stripeM2: "STRM2"
    case .wisePad3: "WPC32"
    }
  }

  /// The model's marketing name.
  public var displayName: String {
    switch self {
    case .chipper2X: "Chipper 2X BT"
    case .stripeM2: "Stripe Reader M2"
    case .wisePad3: "WisePad 3"
    }
  }

  public var description: String { rawValue }
}
