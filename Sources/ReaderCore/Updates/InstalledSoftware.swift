/// What an update catalog is asked about: one reader, where it is, and the software it runs.
public struct InstalledSoftware: Sendable, Hashable {
  /// The reader's model.
  public var deviceType: DeviceType
  /// The reader's serial number.
  public var serialNumber: String
  /// The location the reader is connected to.
  public var locationId: String
  /// The version the reader runs.
  public var version: SoftwareVersion

  /// Describes a reader's installed software.
  public init(deviceType: DeviceType, serialNumber: String, locationId: String, version: SoftwareVersion) {
    self.deviceType = deviceType
    self.serialNumber = serialNumber
    self.locationId = locationId
    self.version = version
  }
}
