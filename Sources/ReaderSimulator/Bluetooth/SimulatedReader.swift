import Foundation
import ReaderCore

/// A reader in the simulated world: what it is, where it is, and what state it is in.
public struct SimulatedReader: Sendable, Hashable {
  /// The serial number it advertises.
  public var serialNumber: String
  /// The model.
  public var deviceType: DeviceType
  // What every advertisement reads comes first, side by side (stored properties are laid out in order): with
  // thousands of readers, each advertisement reaches a reader that is not in the cache.
  /// What its advertisements and connection report of it: kept up to date as its fields change, rather than
  /// built at every advertisement.
  private(set) var info: ReaderInfo
  /// Whether the reader is switched on.
  public var isPoweredOn: Bool
  /// Whether the reader is within Bluetooth range of the host.
  public var isInRange: Bool
  /// The installed software version.
  public var softwareVersion: String { didSet { info = Self.info(of: self) } }
  /// The merchant's label, if any.
  public var label: String? { didSet { info = Self.info(of: self) } }
  /// Distance from the host in metres; the advertised signal strength follows from it.
  public var distance: Double
  /// Battery level in `0...1`.
  public var batteryLevel: Double { didSet { info = Self.info(of: self) } }
  /// Whether the reader is on external power (charging readers never power down when idle).
  public var isCharging: Bool { didSet { info = Self.info(of: self) } }
  /// How long a reboot takes before the reader advertises again.
  public var rebootDuration: Duration
  /// The time from a connect request to the link being up.
  public var connectLatency: Duration

  /// Creates a simulated reader; the defaults describe a charged, switched-on reader one metre away.
  public init(
    serialNumber: String, deviceType: DeviceType, softwareVersion: String = "2.01.00.17", label: String? = nil,
    distance: Double = 1, batteryLevel: Double = 0.8, isCharging: Bool = false, isPoweredOn: Bool = true,
    isInRange: Bool = true, rebootDuration: Duration = .seconds(12), connectLatency: Duration = .milliseconds(1500)
  ) {
    self.serialNumber = serialNumber
    self.deviceType = deviceType
    self.softwareVersion = softwareVersion
    self.label = label
    self.distance = distance
    self.batteryLevel = batteryLevel
    self.isCharging = isCharging
    self.isPoweredOn = isPoweredOn
    self.isInRange = isInRange
    self.rebootDuration = rebootDuration
    self.connectLatency = connectLatency
    info = ReaderInfo()
    info = Self.info(of: self)
  }

  /// The mean received signal strength at `distance`, in dBm (log-distance path loss, -45 dBm at 1 m).
  public var meanSignalStrength: Int {
    Int((-45 - 25 * log10(max(distance, 0.05))).rounded())
  }

  private static func info(of reader: SimulatedReader) -> ReaderInfo {
    ReaderInfo(
      deviceSoftwareVersion: reader.softwareVersion, batteryLevel: reader.batteryLevel, isCharging: reader.isCharging,
      label: reader.label)
  }
}
