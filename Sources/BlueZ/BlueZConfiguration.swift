import MCUmgr
import ReaderCore

/// How the BlueZ central finds and names readers, and how long it waits.
public struct BlueZConfiguration: Sendable, Hashable {
  /// The MCUmgr SMP service UUID (SMP over Bluetooth), which readers advertise.
  public static let smpServiceUUID = "8d53dc1d-1db7-4cd3-868b-8a527460aa84"

  /// The adapter to use (`hci0`); nil: the first adapter `bluetoothd` reports.
  public var adapterName: String?
  /// The service UUIDs a reader advertises (the discovery filter; a device advertising none of them is
  /// ignored). Empty: every LE device. By default the SMP service.
  public var serviceUUIDs: [String]
  /// Serial numbers by Bluetooth address, for readers whose advertised name is not their serial number.
  /// Without an entry a reader's serial number is its `Name`, else its `Alias`, else its address.
  public var serialNumbers: [String: String]
  /// The model of a reader, by serial number; without an entry the model is the one its Device
  /// Information Service reported when it was last connected, else the one its serial number's prefix
  /// names (`CHB20…`, `STRM2…`, `WPC32…`), else `defaultDeviceType`.
  public var deviceTypes: [String: DeviceType]
  /// The model of a reader nothing else names: by default `other("unknown")`.
  public var defaultDeviceType: DeviceType
  /// How long a connect may take, from `Connect()` to `ServicesResolved` and the reader's details.
  public var connectTimeout: Duration
  /// A reader not heard for this long counts as gone: it is no longer reported while scanning.
  public var vanishAfter: Duration
  /// How often, while scanning, the readers still present are reported again (BlueZ is silent about a
  /// reader whose advertisement does not change).
  public var refreshInterval: Duration
  /// How long a D-Bus call may wait for its reply before it fails with `NoReply`.
  public var callTimeout: Duration
  /// The pause before the bus is opened again after it was lost or could not be opened.
  public var busRetryInterval: Duration
  /// How long each step of a software update over SMP may take (reader commands go over MCUmgr's SMP).
  public var imageUpgradeTimings: ImageUpgradeTimings

  /// Creates a configuration; every parameter has a default.
  public init(
    adapterName: String? = nil, serviceUUIDs: [String] = [BlueZConfiguration.smpServiceUUID],
    serialNumbers: [String: String] = [:], deviceTypes: [String: DeviceType] = [:],
    defaultDeviceType: DeviceType = .other("unknown"), connectTimeout: Duration = .seconds(10),
    vanishAfter: Duration = .seconds(5), refreshInterval: Duration = .seconds(1), callTimeout: Duration = .seconds(25),
    busRetryInterval: Duration = .seconds(2), imageUpgradeTimings: ImageUpgradeTimings = ImageUpgradeTimings()
  ) {
    self.adapterName = adapterName
    self.serviceUUIDs = serviceUUIDs.map { $0.lowercased() }
    self.serialNumbers = serialNumbers
    self.deviceTypes = deviceTypes
    self.defaultDeviceType = defaultDeviceType
    self.connectTimeout = connectTimeout
    self.vanishAfter = vanishAfter
    self.refreshInterval = refreshInterval
    self.callTimeout = callTimeout
    self.busRetryInterval = busRetryInterval
    self.imageUpgradeTimings = imageUpgradeTimings
  }

  /// The model a reader with `serialNumber` is.
  public func deviceType(forSerialNumber serialNumber: String) -> DeviceType {
    if let configured = deviceTypes[serialNumber] { return configured }
    return DeviceType.allCases.first { serialNumber.hasPrefix($0.serialPrefix) } ?? defaultDeviceType
  }
}
