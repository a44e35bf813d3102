/// A card reader, as discovered or as connected.
///
/// Discovery reports readers with what their advertisement carries; after connecting, `locationId`
/// is set. A proximity discovery first reports a reader with only `serialNumber` set, then again
/// with its details.
public struct Reader: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The serial number, unique per device and stable across launches.
  public var serialNumber: String
  /// The model.
  public var deviceType: DeviceType
  /// A human label for the reader (e.g. "Front counter"), when one was set.
  public var label: String?
  /// The installed software version, when known.
  public var deviceSoftwareVersion: String?
  /// The battery level in `0...1`, when known.
  public var batteryLevel: Double?
  /// Whether the reader is charging, when known.
  public var isCharging: Bool?
  /// The location the reader is connected to; `nil` until connected.
  public var locationId: String?
  /// The received signal strength of its latest advertisement, in dBm (higher is nearer).
  public var signalStrength: Int?
  /// A software update the reader can install, when one is known.
  public var availableUpdate: ReaderSoftwareUpdate?
  /// Whether this reader lives in the simulator.
  public var simulated: Bool
  /// What the reader reported in its Device Information Service, read over GATT when it connected
  /// (serial number, model, firmware and hardware revisions, manufacturer); `nil` before it connected,
  /// for a reader without that service, and for simulated readers. Discovery's `serialNumber` stays the
  /// reader's identity; `deviceSoftwareVersion` and `deviceType` come from the same firmware and model
  /// values where the backend takes them from the service.
  public var deviceInformation: DeviceInformation?

  /// The battery status derived from `batteryLevel`.
  public var batteryStatus: BatteryStatus {
    batteryLevel.map(BatteryStatus.init(level:)) ?? .unknown
  }

  /// Creates a reader value.
  public init(
    serialNumber: String, deviceType: DeviceType, label: String? = nil, deviceSoftwareVersion: String? = nil,
    batteryLevel: Double? = nil, isCharging: Bool? = nil, locationId: String? = nil, signalStrength: Int? = nil,
    availableUpdate: ReaderSoftwareUpdate? = nil, simulated: Bool = false, deviceInformation: DeviceInformation? = nil
  ) {
    self.serialNumber = serialNumber
    self.deviceType = deviceType
    self.label = label
    self.deviceSoftwareVersion = deviceSoftwareVersion
    self.batteryLevel = batteryLevel
    self.isCharging = isCharging
    self.locationId = locationId
    self.signalStrength = signalStrength
    self.availableUpdate = availableUpdate
    self.simulated = simulated
    self.deviceInformation = deviceInformation
  }

  public var description: String { "\(deviceType.displayName) \(serialNumber)" }
}
