/// What a `SimulatedBluetoothCentral` knows about one reader at this instant, read in one go: the ground
/// truth that soak runs and tests hold the terminal's claims against.
public struct SimulatedReaderTruth: Sendable, Hashable {
  /// Whether the host holds a link to the reader.
  public var isLinked: Bool
  /// Whether the host has asked to connect to the reader and neither the link nor a cancel has come:
  /// a request that never times out (as in Core Bluetooth) and completes whenever the reader is reachable.
  public var isConnectPending: Bool
  /// Whether the host could reach the reader: the host's radio and the reader are on, the reader is in
  /// range and not rebooting.
  public var isReachable: Bool
  /// Whether the reader is restarting (a requested reboot or its security reboot).
  public var isRebooting: Bool
  /// Whether the reader is switched on.
  public var isPoweredOn: Bool
  /// The software version the reader runs.
  public var softwareVersion: String
  /// How far the reader's current install has got, in `0...1`; `nil` while it installs nothing.
  public var installProgress: Double?

  /// Creates a reading; the world makes these.
  public init(
    isLinked: Bool, isReachable: Bool, isRebooting: Bool, isPoweredOn: Bool, softwareVersion: String,
    installProgress: Double?, isConnectPending: Bool = false
  ) {
    self.isLinked = isLinked
    self.isConnectPending = isConnectPending
    self.isReachable = isReachable
    self.isRebooting = isRebooting
    self.isPoweredOn = isPoweredOn
    self.softwareVersion = softwareVersion
    self.installProgress = installProgress
  }
}
