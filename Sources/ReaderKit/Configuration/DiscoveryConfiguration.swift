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
  /// How long the scan runs; `nil` means no limit. When it passes the discovery completes successfully
  /// if any reader was found, with `bluetoothScanTimedOut` otherwise. The scan's timer counts whole
  /// milliseconds: a positive limit is rounded to the nearest one, and one below half a millisecond is
  /// a millisecond (never no limit).
  public let timeLimit: Duration?
  public let simulated: Bool

  /// The limit in whole seconds, as Stripe's `timeout` (a fraction of a second counts as a second);
  /// 0 means no limit.
  public var timeout: UInt {
    guard let timeLimit else { return 0 }
    return UInt((timeLimit / .seconds(1)).rounded(.up))
  }

  public var method: DiscoveryMethod {
    .bluetoothScan(timeout: timeLimit.map { .milliseconds(max(1, Int64(($0 / .milliseconds(1)).rounded()))) })
  }

  /// Builds a validated `BluetoothScanDiscoveryConfiguration`.
  ///
  /// ```swift
  /// let config = try BluetoothScanDiscoveryConfigurationBuilder().setTimeout(30).setSimulated(true).build()
  /// let quick = try BluetoothScanDiscoveryConfigurationBuilder().setTimeout(.milliseconds(2500)).build()
  /// ```
  public struct Builder: Sendable {
    private var timeLimit = Duration.zero
    private var simulated = false
    /// Creates a builder with no timeout, real readers.
    public init() {}
    /// Sets the timeout in whole seconds (0: none), as Stripe's `setTimeout(_:)`.
    public func setTimeout(_ seconds: UInt) -> Builder { setTimeout(.seconds(seconds)) }
    /// Sets the timeout to any duration (`.zero`: none).
    public func setTimeout(_ timeout: Duration) -> Builder { var copy = self; copy.timeLimit = timeout; return copy }
    /// Sets whether to discover simulated readers.
    public func setSimulated(_ simulated: Bool) -> Builder { var copy = self; copy.simulated = simulated; return copy }
    /// Validates and builds.
    /// - Throws: `invalidConfiguration` (`field: timeout`, `value` in seconds) for a negative timeout or
    ///   one over a day (86,400 seconds).
    public func build() throws(ReaderError) -> BluetoothScanDiscoveryConfiguration {
      guard timeLimit >= .zero, timeLimit <= .seconds(24 * 3600) else {
        throw ReaderError(
          .invalidConfiguration, "the scan timeout must be between 0 and 86400 seconds",
          context: [
            "field": "timeout", "value": timeLimit.contextSeconds,
          ])
      }
      return BluetoothScanDiscoveryConfiguration(timeLimit: timeLimit == .zero ? nil : timeLimit, simulated: simulated)
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
