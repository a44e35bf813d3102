/// How to connect to a Bluetooth reader; build one with `Builder`.
///
/// ```swift
/// let config = try BluetoothConnectionConfiguration.Builder(delegate: self, locationId: "tml_123").build()
/// // or, with the name Stripe's SDK uses:
/// let same = try BluetoothConnectionConfigurationBuilder(delegate: self, locationId: "tml_123").build()
/// ```
public struct BluetoothConnectionConfiguration: Sendable {
  /// Receives the reader's events (disconnects, reconnection, battery) for this connection.
  public let delegate: any MobileReaderDelegate
  /// The validated values, as the terminal's state machine takes them.
  let settings: ConnectionSettings

  /// The location the reader is registered to; never empty.
  public var locationId: String { settings.locationId }
  /// Whether the terminal reconnects by itself after an unexpected disconnect. True by default.
  public var autoReconnectOnUnexpectedDisconnect: Bool { settings.autoReconnect }
  /// The retry schedule and deadline of automatic reconnection.
  public var reconnectPolicy: ReconnectPolicy { settings.policy }
  /// How long the first connection may take. 15 seconds by default.
  public var connectTimeout: Duration { settings.connectTimeout }
  /// The update this connection sees instead of the catalog's, in testing.
  public var testReaderUpdate: TestReaderUpdate? { settings.testUpdate }

  /// Builds a validated `BluetoothConnectionConfiguration`.
  public struct Builder: Sendable {
    private let delegate: any MobileReaderDelegate
    private var locationId: String
    private var autoReconnect = true
    private var policy = ReconnectPolicy.default
    private var connectTimeout = ConnectionSettings.defaultConnectTimeout
    private var testUpdate: TestReaderUpdate?

    /// Starts a configuration for `locationId`, reporting to `delegate`.
    public init(delegate: any MobileReaderDelegate, locationId: String) {
      self.delegate = delegate
      self.locationId = locationId
    }
    /// Sets whether to reconnect automatically after an unexpected disconnect (default true).
    public func setAutoReconnectOnUnexpectedDisconnect(_ value: Bool) -> Builder {
      var copy = self
      copy.autoReconnect = value
      return copy
    }
    /// Sets the reconnection schedule (default `ReconnectPolicy.default`: 60 s deadline).
    public func setReconnectPolicy(_ policy: ReconnectPolicy) -> Builder {
      var copy = self
      copy.policy = policy
      return copy
    }
    /// Sets the first connection's timeout (default 15 s).
    public func setConnectTimeout(_ timeout: Duration) -> Builder {
      var copy = self
      copy.connectTimeout = timeout
      return copy
    }
    /// Picks the software update this connection sees instead of the catalog's, for testing the
    /// update flows on demand (Stripe's `setTestReaderUpdate`); nil (the default) for the catalog's.
    public func setTestReaderUpdate(_ update: TestReaderUpdate?) -> Builder {
      var copy = self
      copy.testUpdate = update
      return copy
    }
    /// Sets the location the reader is connected to.
    public func setLocationId(_ locationId: String) -> Builder {
      var copy = self
      copy.locationId = locationId
      return copy
    }
    /// Validates and builds.
    /// - Throws: `invalidConfiguration` with `field` `locationId` (empty or blank),
    ///   `reconnectPolicy.deadline` or `reconnectPolicy.attemptTimeout` (not positive),
    ///   `reconnectPolicy.initialDelay` (negative), `reconnectPolicy.maximumDelay` (below the initial
    ///   delay) or `connectTimeout` (not positive); `value` is the rejected duration.
    public func build() throws(ReaderError) -> BluetoothConnectionConfiguration {
      let settings = try ConnectionSettings(
        locationId: locationId, autoReconnect: autoReconnect, policy: policy, connectTimeout: connectTimeout,
        testUpdate: testUpdate)
      return BluetoothConnectionConfiguration(delegate: delegate, settings: settings)
    }
  }
}

/// `BluetoothConnectionConfiguration.Builder` under the name Stripe's iOS SDK gives it.
public typealias BluetoothConnectionConfigurationBuilder = BluetoothConnectionConfiguration.Builder
