/// A model of Bluetooth card reader, with what it can do.
///
/// Three models are known by name; any other reader — a real reader on BlueZ, named by its Device
/// Information Service model number or a configured mapping — is `other(name)`. Its `rawValue` (in
/// JSON, update manifests and the saved reader) is `model:<name>`, so that a misspelt known model is
/// still refused rather than taken for an unknown one: an update manifest targets such a reader with
/// `"deviceType": "model:ACME-R1"`.
public enum DeviceType: Sendable, Hashable, Codable, CaseIterable, RawRepresentable, CustomStringConvertible {
  /// BBPOS Chipper 2X BT: the only model that supports proximity discovery; no 24-hour reboot.
  case chipper2X
  /// Stripe Reader M2: reboots itself after 24 hours of operation.
  case stripeM2
  /// BBPOS WisePad 3: reboots itself after 24 hours of operation.
  case wisePad3
  /// A model ReaderKit does not know, by its name (a DIS model number such as `ACME-R1`): no proximity
  /// discovery, no 24-hour reboot, no serial-number prefix.
  case other(String)

  /// The prefix of an unknown model's raw value.
  public static let otherPrefix = "model:"

  /// The known models (an unknown model is not enumerable).
  public static let allCases: [DeviceType] = [.chipper2X, .stripeM2, .wisePad3]

  /// A known model by its name (`chipper2X`), or `model:<name>` for another; nil for anything else.
  public init?(rawValue: String) {
    switch rawValue {
    case "chipper2X": self = .chipper2X
    case "stripeM2": self = .stripeM2
    case "wisePad3": self = .wisePad3
    default:
      guard rawValue.hasPrefix(Self.otherPrefix) else { return nil }
      let name = String(rawValue.dropFirst(Self.otherPrefix.count))
      guard !name.allSatisfy(\.isWhitespace) else { return nil }
      self = .other(name)
    }
  }

  /// The model a reader reports (a DIS model number): a known model when the name is one of theirs
  /// (raw or marketing name), else `other(name)`.
  public init(modelName: String) {
    let known = Self.allCases.first { $0.rawValue == modelName || $0.displayName == modelName }
    self = known ?? .other(modelName)
  }

  public var rawValue: String {
    switch self {
    case .chipper2X: "chipper2X"
    case .stripeM2: "stripeM2"
    case .wisePad3: "wisePad3"
    case .other(let name): Self.otherPrefix + name
    }
  }

  /// Whether both are the same model: the same case, and the same name for another model (as their raw
  /// values compare). Written out because a `RawRepresentable` type would otherwise compare, and hash, by its
  /// raw value, a string made for each comparison.
  public static func == (lhs: DeviceType, rhs: DeviceType) -> Bool {
    switch (lhs, rhs) {
    case (.chipper2X, .chipper2X), (.stripeM2, .stripeM2), (.wisePad3, .wisePad3): true
    case (.other(let left), .other(let right)): left == right
    default: false
    }
  }

  public func hash(into hasher: inout Hasher) {
    switch self {
    case .chipper2X: hasher.combine(0 as UInt8)
    case .stripeM2: hasher.combine(1 as UInt8)
    case .wisePad3: hasher.combine(2 as UInt8)
    case .other(let name):
      hasher.combine(3 as UInt8)
      hasher.combine(name)
    }
  }

  /// Whether `BluetoothProximityDiscoveryConfiguration` finds this model.
  public var supportsProximityDiscovery: Bool { self == .chipper2X }

  /// Whether the reader reboots itself (`DisconnectReason.securityReboot`) after 24 hours of operation.
  public var hasSecurityReboot: Bool { self == .stripeM2 || self == .wisePad3 }

  /// The prefix of this model's serial numbers, as printed on the device label (empty for another model).
  public var serialPrefix: String {
    switch self {
    case .chipper2X: "CHB20"
    case .stripeM2: "STRM2"
    case .wisePad3: "WPC32"
    case .other: ""
    }
  }

  /// The model's marketing name (its own name for another model).
  public var displayName: String {
    switch self {
    case .chipper2X: "Chipper 2X BT"
    case .stripeM2: "Stripe Reader M2"
    case .wisePad3: "WisePad 3"
    case .other(let name): name
    }
  }

  public var description: String { rawValue }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    guard let value = DeviceType(rawValue: text) else {
      throw DecodingError.dataCorruptedError(
        in: container, debugDescription: "'\(text)' is not a reader model (nor model:<name>)")
    }
    self = value
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(rawValue)
  }
}
