/// How to connect to a Bluetooth reader; build one with `Builder`.
///
/// ```swift
/// let config = try BluetoothConnectionConfiguration.Builder(delegate: self, locationId: "tml_123").build()
/// ```
public struct BluetoothConnectionConfiguration: Sendable {
  /// Receives the reader's events (disconnects, reconnection, battery) for this connection.
  public let delegate: any MobileReaderDelegate
  /// The location the reader is registered to; never empty.
  public let locationId: String
  /// Whether the terminal reconnects by itself after an unexpected disconnect. True by default.
  public let autoReconnectOnUnexpectedDisconnect: Bool
  /// The retry schedule and deadline of automatic reconnection.
  public let reconnectPolicy: ReconnectPolicy
  /// How long the first connection may take. 15 seconds by default.
  public let connectTimeout: Duration

  /// Builds a validated `BluetoothConnectionConfiguration`.
  public struct Builder: Sendable {
    private let delegate: any MobileReaderDelegate
    private let locationId: String
    private var autoReconnect = true
    private var policy = ReconnectPolicy.default
    private var connectTimeout = Duration.seconds(15)

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
    /// Validates and builds.
    /// - Throws: `invalidConfiguration` with `field` `locationId` (empty or blank),
    ///   `reconnectPolicy` (non-positive deadline or attempt timeout) or `connectTimeout`.
    public func build() throws(ReaderError) -> BluetoothConnectionConfiguration {
      guard !locationId.allSatisfy(\.isWhitespace) else {
        throw ReaderError(
          .invalidConfiguration, "a location id is required to connect a reader", context: ["field": "locationId"])
      }
      guard policy.deadline > .zero, policy.attemptTimeout > .zero, policy.initialDelay >= .zero else {
        throw ReaderError(
          .invalidConfiguration, "the reconnect deadline and attempt timeout must be positive",
          context: ["field": "reconnectPolicy", "value": policy.deadline.formattedSeconds])
      }
      guard connectTimeout > .zero else {
        throw ReaderError(
          .invalidConfiguration, "the connect timeout must be positive",
          context: ["field": "connectTimeout", "value": connectTimeout.formattedSeconds])
      }
      return BluetoothConnectionConfiguration(
        delegate: delegate, locationId: locationId, autoReconnectOnUnexpectedDisconnect: autoReconnect,
        reconnectPolicy: policy, connectTimeout: connectTimeout)
    }
  }
}
