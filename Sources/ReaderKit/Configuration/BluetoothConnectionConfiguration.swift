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
    ///   `reconnectPolicy.deadline` or `reconnectPolicy.attemptTimeout` (not positive),
    ///   `reconnectPolicy.initialDelay` (negative), `reconnectPolicy.maximumDelay` (below the initial
    ///   delay) or `connectTimeout` (not positive); `value` is the rejected duration.
    public func build() throws(ReaderError) -> BluetoothConnectionConfiguration {
      guard !locationId.allSatisfy(\.isWhitespace) else {
        throw ReaderError(
          .invalidConfiguration, "a location id is required to connect a reader", context: ["field": "locationId"])
      }
      let policyRules: [(name: String, value: Duration, valid: Bool, rule: String)] = [
        ("deadline", policy.deadline, policy.deadline > .zero, "must be positive"),
        ("attemptTimeout", policy.attemptTimeout, policy.attemptTimeout > .zero, "must be positive"),
        ("initialDelay", policy.initialDelay, policy.initialDelay >= .zero, "must not be negative"),
        (
          "maximumDelay", policy.maximumDelay, policy.maximumDelay >= policy.initialDelay,
          "must not be less than the initial delay"
        ),
      ]
      if let broken = policyRules.first(where: { !$0.valid }) {
        throw ReaderError(
          .invalidConfiguration, "the reconnect policy's \(broken.name) \(broken.rule)",
          context: ["field": "reconnectPolicy.\(broken.name)", "value": broken.value.formattedSeconds])
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
