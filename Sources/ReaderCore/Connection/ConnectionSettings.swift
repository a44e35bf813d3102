/// The pure part of a connection configuration: what the connection state machine needs to know.
package struct ConnectionSettings: Equatable, Sendable {
  /// The location the reader is connected to; never blank.
  package var locationId: String
  /// Whether an unexpected disconnect starts automatic reconnection.
  package var autoReconnect: Bool
  /// The reconnection schedule.
  package var policy: ReconnectPolicy
  /// How long the first connection may take.
  package var connectTimeout: Duration
  /// The update a connection sees in testing instead of the catalog's.
  package var testUpdate: TestReaderUpdate? = nil
  /// Whether a link that comes up is prepared (software update checked, required update installed)
  /// before the reader counts as connected; the terminal sets it when it can check for updates.
  package var preparesReader = false

  /// The default first-connection timeout.
  package static let defaultConnectTimeout = Duration.seconds(15)

  /// Validated settings.
  /// - Throws: `invalidConfiguration` with `field` `locationId` (empty or blank),
  ///   `reconnectPolicy.deadline` or `reconnectPolicy.attemptTimeout` (not positive),
  ///   `reconnectPolicy.initialDelay` (negative), `reconnectPolicy.maximumDelay` (below the initial
  ///   delay) or `connectTimeout` (not positive); `value` is the rejected duration.
  package init(
    locationId: String, autoReconnect: Bool = true, policy: ReconnectPolicy = .default,
    connectTimeout: Duration = defaultConnectTimeout, testUpdate: TestReaderUpdate? = nil
  ) throws(ReaderError) {
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
        context: ["field": "reconnectPolicy.\(broken.name)", "value": broken.value.contextSeconds])
    }
    guard connectTimeout > .zero else {
      throw ReaderError(
        .invalidConfiguration, "the connect timeout must be positive",
        context: ["field": "connectTimeout", "value": connectTimeout.contextSeconds])
    }
    self.locationId = locationId
    self.autoReconnect = autoReconnect
    self.policy = policy
    self.connectTimeout = connectTimeout
    self.testUpdate = testUpdate
  }

  /// Settings taken as given, unvalidated: for machines built directly in tests, never for a
  /// connection an app asks for.
  package init(unchecked locationId: String, autoReconnect: Bool, policy: ReconnectPolicy, connectTimeout: Duration) {
    self.locationId = locationId
    self.autoReconnect = autoReconnect
    self.policy = policy
    self.connectTimeout = connectTimeout
  }
}
