/// What a reader's Bluetooth advertisement tells a scanning host.
public struct Advertisement: Sendable, Hashable {
  /// The advertising reader's serial number.
  public var serialNumber: String
  /// The reader's model.
  public var deviceType: DeviceType
  /// Received signal strength in dBm; higher (less negative) is nearer.
  public var signalStrength: Int
  /// The reader's details as far as the advertisement carries them.
  public var info: ReaderInfo

  /// Creates an advertisement.
  public init(serialNumber: String, deviceType: DeviceType, signalStrength: Int, info: ReaderInfo) {
    self.serialNumber = serialNumber
    self.deviceType = deviceType
    self.signalStrength = signalStrength
    self.info = info
  }
}

/// A reader's details as reported by the reader itself.
public struct ReaderInfo: Sendable, Hashable {
  /// The installed software version.
  public var deviceSoftwareVersion: String?
  /// The battery level in `0...1`.
  public var batteryLevel: Double?
  /// Whether the reader is on external power.
  public var isCharging: Bool?
  /// The label the merchant gave the reader.
  public var label: String?
  /// What the reader reported in its Device Information Service, when the backend read it (see
  /// `Reader.deviceInformation`).
  public var deviceInformation: DeviceInformation? {
    get { deviceInformationStorage?.value }
    set { deviceInformationStorage = newValue.map(DeviceInformationStorage.init) }
  }

  /// `deviceInformation`, held apart: five optional strings inline would make every advertisement, which
  /// carries a `ReaderInfo`, twice as large to move (by `memcpy`) at every step of its delivery, for a value
  /// only a real reader's connection fills in.
  private var deviceInformationStorage: DeviceInformationStorage?

  /// Whether both hold no device information, or the same box of it (so the same value): one comparison of
  /// references, for the copies of one value that repeated advertisements carry.
  package func sharesDeviceInformation(with other: ReaderInfo) -> Bool {
    deviceInformationStorage === other.deviceInformationStorage
  }

  private final class DeviceInformationStorage: Sendable, Hashable {
    let value: DeviceInformation
    init(_ value: DeviceInformation) { self.value = value }
    static func == (lhs: DeviceInformationStorage, rhs: DeviceInformationStorage) -> Bool { lhs.value == rhs.value }
    func hash(into hasher: inout Hasher) { hasher.combine(value) }
  }

  /// Creates a details value.
  public init(
    deviceSoftwareVersion: String? = nil, batteryLevel: Double? = nil, isCharging: Bool? = nil, label: String? = nil,
    deviceInformation: DeviceInformation? = nil
  ) {
    self.deviceSoftwareVersion = deviceSoftwareVersion
    self.batteryLevel = batteryLevel
    self.isCharging = isCharging
    self.label = label
    self.deviceInformation = deviceInformation
  }
}

/// Something a `BluetoothCentral` reports, always on the terminal's scheduler.
public enum BluetoothEvent: Sendable, Hashable {
  /// The host's Bluetooth radio was turned on or off.
  case radioStateChanged(isPoweredOn: Bool)
  /// A reader advertised while a scan was running.
  case advertisement(Advertisement)
  /// A connection requested with `connect(serialNumber:)` completed.
  case didConnect(serialNumber: String, info: ReaderInfo)
  /// A connection requested with `connect(serialNumber:)` failed.
  case didFailToConnect(serialNumber: String, error: ReaderError)
  /// The link to a connected reader ended, for `reason`.
  case didDisconnect(serialNumber: String, reason: DisconnectReason)
}

/// The host's Bluetooth radio as the terminal needs it: its state, scanning, and opening and closing
/// links. Commands to a reader once it is reachable go through `ReaderLink`.
///
/// Implementations deliver every `BluetoothEvent` on the `Scheduler` given to the terminal, one at a
/// time, and never call the handler re-entrantly from inside a command. Commands are fire-and-forget:
/// their results arrive as events. The simulator (`SimulatedBluetoothCentral`) and real backends
/// (BlueZ over D-Bus, CoreBluetooth) plug in here.
public protocol BluetoothCentral: AnyObject, Sendable {
  /// Installs the receiver of events. Called once, before any command.
  func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void)
  /// Whether the host's Bluetooth radio is on right now.
  var isPoweredOn: Bool { get }
  /// Starts reporting advertisements.
  func startScan()
  /// Stops reporting advertisements.
  func stopScan()
  /// Opens a link to the reader; answered by `didConnect` or `didFailToConnect`.
  func connect(serialNumber: String)
  /// Abandons a connection attempt, or lets go of a link that is up without waiting for the reader
  /// (as CoreBluetooth's `cancelPeripheralConnection` does); no event follows.
  func cancelConnect(serialNumber: String)
  /// Closes the link; answered by `didDisconnect(reason: .disconnectRequested)`.
  func disconnect(serialNumber: String)
}

/// A `BluetoothCentral` that serves simulated and real readers side by side (as `Terminal.shared`
/// does): the terminal says, each time it starts a scan, which kind it looks for.
public protocol ReaderKindRouting: BluetoothCentral {
  /// Starts reporting advertisements of simulated readers, or of real ones.
  func startScan(simulated: Bool)
}
