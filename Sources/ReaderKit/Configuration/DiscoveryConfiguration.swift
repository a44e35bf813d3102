@_exported import ReaderCore

/// What a discovery looks for; build one with a configuration's `Builder`.
public protocol DiscoveryConfiguration: Sendable {
  /// How readers are found.
  var method: DiscoveryMethod { get }
  /// Whether to discover simulated readers (readers report `simulated == true`).
  var simulated: Bool { get }
}

/// A continuous Bluetooth scan: every nearby reader, nearest first, updated as they come and go.
public struct BluetoothScanDiscoveryConfiguration: DiscoveryConfiguration, Hashable {
  /// Seconds after which the scan stops; 0 means no limit. When it fires the discovery completes
  /// successfully if any reader was found, with `bluetoothScanTimedOut` otherwise. The scan's timer
  /// counts whole milliseconds: a positive timeout is rounded to the nearest one, and one below half a
  /// millisecond is a millisecond (never no limit).
  public let timeout: Double
  public let simulated: Bool
  public var method: DiscoveryMethod {
    .bluetoothScan(timeout: timeout > 0 ? .milliseconds(max(1, Int64((timeout * 1000).rounded()))) : nil)
  }

  /// Builds a validated `BluetoothScanDiscoveryConfiguration`.
  ///
  /// ```swift
  /// let config = try BluetoothScanDiscoveryConfiguration.Builder().setTimeout(30).setSimulated(true).build()
  /// ```
  public struct Builder: Sendable {
    private var timeout: Double = 0
    private var simulated = false
    /// Creates a builder with no timeout, real readers.
    public init() {}
    /// Sets the timeout in seconds (0: none).
    public func setTimeout(_ seconds: Double) -> Builder { var copy = self; copy.timeout = seconds; return copy }
    /// Sets whether to discover simulated readers.
    public func setSimulated(_ simulated: Bool) -> Builder { var copy = self; copy.simulated = simulated; return copy }
    /// Validates and builds.
    /// - Throws: `invalidConfiguration` (`field: timeout`) for a negative, infinite or NaN timeout.
    public func build() throws(ReaderError) -> BluetoothScanDiscoveryConfiguration {
      guard timeout.isFinite, timeout >= 0, timeout <= 24 * 3600 else {
        throw ReaderError(
          .invalidConfiguration, "the scan timeout must be between 0 and 86400 seconds",
          context: ["field": "timeout", "value": "\(timeout)"])
      }
      return BluetoothScanDiscoveryConfiguration(timeout: timeout, simulated: simulated)
    }
  }
}

/// Proximity discovery: the single nearest Chipper 2X, reported twice (serial number first, then
/// details). Other models are ignored. It has no timeout; cancel it or connect to end it.
public struct BluetoothProximityDiscoveryConfiguration: DiscoveryConfiguration, Hashable {
  public let simulated: Bool
  public var method: DiscoveryMethod { .bluetoothProximity }

  /// Builds a `BluetoothProximityDiscoveryConfiguration`.
  public struct Builder: Sendable {
    private var simulated = false
    /// Creates a builder for real readers.
    public init() {}
    /// Sets whether to discover simulated readers.
    public func setSimulated(_ simulated: Bool) -> Builder { var copy = self; copy.simulated = simulated; return copy }
    /// Builds; never fails today, but throws for symmetry with the other builders.
    public func build() throws(ReaderError) -> BluetoothProximityDiscoveryConfiguration {
      BluetoothProximityDiscoveryConfiguration(simulated: simulated)
    }
  }
}

/// `BluetoothScanDiscoveryConfiguration.Builder` under the name Stripe's iOS SDK gives it.
public typealias BluetoothScanDiscoveryConfigurationBuilder = BluetoothScanDiscoveryConfiguration.Builder

/// `BluetoothProximityDiscoveryConfiguration.Builder` under the name Stripe's iOS SDK gives it.
public typealias BluetoothProximityDiscoveryConfigurationBuilder = BluetoothProximityDiscoveryConfiguration.Builder
