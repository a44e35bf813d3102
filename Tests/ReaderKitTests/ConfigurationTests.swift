import ReaderKit
import Testing

private nonisolated final class QuietDelegate: MobileReaderDelegate {}

/// The builders refuse what cannot work, naming the field and the rejected value.
@Suite struct ConfigurationTests {
  @Test func connectionConfigurationHasTheDocumentedDefaults() throws {
    let config = try BluetoothConnectionConfiguration.Builder(delegate: QuietDelegate(), locationId: "tml_1").build()
    #expect(config.locationId == "tml_1")
    #expect(config.autoReconnectOnUnexpectedDisconnect)
    #expect(config.reconnectPolicy == .default)
    #expect(config.reconnectPolicy.deadline == .seconds(60))
    #expect(config.connectTimeout == .seconds(15))
    let manual = try BluetoothConnectionConfiguration.Builder(delegate: QuietDelegate(), locationId: "tml_1")
      .setAutoReconnectOnUnexpectedDisconnect(false).setConnectTimeout(.seconds(5)).build()
    #expect(!manual.autoReconnectOnUnexpectedDisconnect)
    #expect(manual.connectTimeout == .seconds(5))
  }

  @Test(arguments: ["", " ", "\t\n"])
  func connectionConfigurationWithoutALocationIsInvalid(locationId: String) {
    #expect {
      try BluetoothConnectionConfiguration.Builder(delegate: QuietDelegate(), locationId: locationId).build()
    } throws: { error in
      let error = error as? ReaderError
      return error?.code == .invalidConfiguration && error?.context["field"] == "locationId"
    }
  }

  @Test(arguments: [
    (ReconnectPolicy(deadline: .zero), "reconnectPolicy.deadline", "0"),
    (ReconnectPolicy(attemptTimeout: .seconds(-1)), "reconnectPolicy.attemptTimeout", "-1"),
    (ReconnectPolicy(initialDelay: .milliseconds(-500)), "reconnectPolicy.initialDelay", "-0.5"),
    (ReconnectPolicy(initialDelay: .seconds(4), maximumDelay: .seconds(2)), "reconnectPolicy.maximumDelay", "2"),
    (ReconnectPolicy(maximumDelay: .seconds(-3)), "reconnectPolicy.maximumDelay", "-3"),
  ])
  func reconnectPolicyThatCannotWorkIsInvalid(policy: ReconnectPolicy, field: String, value: String) {
    #expect {
      try BluetoothConnectionConfiguration.Builder(delegate: QuietDelegate(), locationId: "tml_1")
        .setReconnectPolicy(policy).build()
    } throws: { error in
      let error = error as? ReaderError
      return error?.code == .invalidConfiguration && error?.context["field"] == field
        && error?.context["value"] == value
    }
  }

  @Test(arguments: [Duration.zero, .seconds(-1)])
  func nonPositiveConnectTimeoutIsInvalid(timeout: Duration) {
    #expect {
      try BluetoothConnectionConfiguration.Builder(delegate: QuietDelegate(), locationId: "tml_1")
        .setConnectTimeout(timeout).build()
    } throws: { error in
      let error = error as? ReaderError
      return error?.code == .invalidConfiguration && error?.context["field"] == "connectTimeout"
    }
  }

  @Test func scanAndProximityConfigurationsCarryTheirSettings() throws {
    let scan = try BluetoothScanDiscoveryConfiguration.Builder().setTimeout(.milliseconds(2500)).setSimulated(true)
      .build()
    #expect(scan.method == .bluetoothScan(timeout: .milliseconds(2500)))
    #expect(scan.timeLimit == .milliseconds(2500))
    #expect(scan.timeout == 3, "Stripe's whole seconds count a fraction as a second")
    #expect(scan.simulated)
    #expect(try BluetoothScanDiscoveryConfiguration.Builder().build().method == .bluetoothScan(timeout: nil))
    let proximity = try BluetoothProximityDiscoveryConfiguration.Builder().setSimulated(true).build()
    #expect(proximity.method == .bluetoothProximity)
    #expect(proximity.simulated)
  }

  @Test(arguments: [
    (Duration.microseconds(500), Int64(1)), (.nanoseconds(100), 1), (.milliseconds(1), 1), (.microseconds(1500), 2),
    (.milliseconds(100), 100), (.seconds(86_400), 86_400_000),
  ])
  func aPositiveScanTimeoutCountsWholeMillisecondsAndNeverMeansNoLimit(timeout: Duration, milliseconds: Int64) throws {
    let scan = try BluetoothScanDiscoveryConfiguration.Builder().setTimeout(timeout).build()
    #expect(scan.method == .bluetoothScan(timeout: .milliseconds(milliseconds)), "\(timeout)")
  }

  @Test func theScanTimeoutTakesStripesWholeSecondsAsAUInt() throws {
    // As Stripe's apps write it: an integer literal, and a `UInt` variable.
    let literal = try BluetoothScanDiscoveryConfigurationBuilder().setTimeout(30).build()
    let seconds: UInt = 45
    let variable = try BluetoothScanDiscoveryConfigurationBuilder().setSimulated(true).setTimeout(seconds).build()
    #expect(literal.timeout == 30)
    #expect(literal.method == .bluetoothScan(timeout: .seconds(30)))
    #expect(variable.timeout == 45)
    #expect(variable.timeLimit == .seconds(45))
    let none = try BluetoothScanDiscoveryConfigurationBuilder().setTimeout(0).build()
    #expect(none.timeout == 0)
    #expect(none.timeLimit == nil)
    #expect(none.method == .bluetoothScan(timeout: nil))
  }
}
