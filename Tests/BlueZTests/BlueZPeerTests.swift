import BlueZ
import DBus
import Foundation
import MCUmgr
import ReaderKit
import Testing

/// The whole Bluetooth lifecycle of a `Terminal` over `BlueZCentral`, against the D-Bus peer: a private
/// bus and a mock `bluetoothd` with readers.
@Suite(.timeLimit(.minutes(1)), .enabled(if: BlueZPeer.enabled, BlueZPeer.skipNote))
struct BlueZPeerTests {
  static let first = "C0:00:00:00:00:01"
  static let second = "C0:00:00:00:00:02"
  static func path(_ address: String) -> String {
    "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_")
  }

  static func isDisconnect(_ reason: DisconnectReason) -> @Sendable (TerminalEvent.Kind) -> Bool {
    { if case .didDisconnect(_, reason) = $0 { true } else { false } }
  }

  @Test func discoveryReportsReadersByRSSIAndDropsTheOnesThatVanish() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    try peer.addReader(address: Self.first, name: "STRM2-0001", rssi: -70)
    let removed = try peer.addReader(address: Self.second, name: "WPC32-0002", rssi: -50)
    let readers = try await run.discover(["STRM2-0001", "WPC32-0002"])
    #expect(readers.map(\.serialNumber) == ["WPC32-0002", "STRM2-0001"])
    #expect(readers.first?.deviceType == .wisePad3)
    // The filter BlueZ was given: LE, the SMP service, DuplicateData set explicitly.
    let filter = try #require(try peer.call("DiscoveryFilter", [.string("hci0")]).body.first?.dictionary)
    #expect(filter["Transport"]?.string == "le")
    #expect(filter["UUIDs"]?.stringArray == [BlueZConfiguration.smpServiceUUID])
    #expect(filter["DuplicateData"]?.bool == true)
    // RSSI updates reorder the list.
    try peer.call("SetRSSI", [.objectPath(Self.path(Self.first)), .int16(-30)])
    try await run.wait(for: "the reordered list") { event in
      guard case .didUpdateDiscoveredReaders(let readers) = event else { return false }
      return readers.map(\.serialNumber) == ["STRM2-0001", "WPC32-0002"] && readers.first?.signalStrength ?? -99 > -40
    }
    // One reader stops advertising (not heard within its window), the other is removed by BlueZ.
    try peer.call("Advertise", [.objectPath(Self.path(Self.first)), .uint32(0)])
    try peer.call("RemoveReader", [.objectPath(removed)])
    try await run.wait(for: "an empty list") { event in
      if case .didUpdateDiscoveredReaders(let readers) = event { readers.isEmpty } else { false }
    }
  }

  @Test func connectStopsScanningThenConnectsUntilServicesAreResolved() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    try peer.addReader(address: Self.first, name: "STRM2-0001")
    _ = try await run.connect("STRM2-0001")
    #expect(run.terminal.connectedReader?.serialNumber == "STRM2-0001")
    #expect(try peer.calls(Self.path(Self.first)) == ["Connect"])
    #expect(try peer.calls("/org/bluez/hci0") == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
    #expect(try peer.property(Self.path(Self.first), "org.bluez.Device1", "ServicesResolved")?.bool == true)
  }

  @Test func aConnectThatNeverResolvesTimesOutAndIsCancelled() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    let device = try peer.addReader(address: Self.first, name: "STRM2-0001")
    try peer.call("SetConnectMode", [.objectPath(device), .string("never-resolve")])
    let reader = try #require(try await run.discover(["STRM2-0001"]).first)
    let configuration = try BluetoothConnectionConfiguration.Builder(delegate: Delegate(), locationId: "tml_1").build()
    run.terminal.connectReader(reader, connectionConfig: configuration) { (_: Result<Reader, ReaderError>) in }
    let failed = try await run.wait(for: "didFailToConnect") { if case .didFailToConnect = $0 { true } else { false } }
    guard case .didFailToConnect(_, let error) = failed else { return }
    #expect(error.code == .bluetoothConnectTimedOut)
    #expect(try peer.calls(device) == ["Connect", "Disconnect"])
  }

  /// `Device1.Connect` failing: each D-Bus error reaches the app as a `ReaderError` whose cause is the
  /// D-Bus error's name (`AlreadyConnected` is no failure: see the launch reconnect with the link left up).
  @Test(arguments: [
    ("org.bluez.Error.Failed", ReaderError.Code.connectionFailed, "org.bluez.Error.Failed"),
    ("org.bluez.Error.InProgress", .connectionFailed, "org.bluez.Error.InProgress"),
    ("org.bluez.Error.NotReady", .bluetoothDisabled, "org.bluez.Error.NotReady"),
    ("no-reply:1200", .bluetoothConnectTimedOut, DBusError.noReply),
  ])
  func aFailedConnectCarriesTheDBusErrorAsItsCause(_ failure: String, _ code: ReaderError.Code, _ name: String)
    async throws
  {
    let peer = try await BlueZPeer.start()
    var configuration = TerminalRun.configuration
    configuration.callTimeout = .milliseconds(500)
    let run = try TerminalRun(peer: peer, configuration: configuration)
    defer { run.stop() }
    let device = try peer.addReader(address: Self.first, name: "STRM2-0001")
    try peer.call("FailNextConnect", [.objectPath(device), .string(failure)])
    let reader = try #require(try await run.discover(["STRM2-0001"]).first)
    let configured = try BluetoothConnectionConfiguration.Builder(delegate: Delegate(), locationId: "tml_1").build()
    let outcome = Recorder<Result<Reader, ReaderError>>()
    run.terminal.connectReader(reader, connectionConfig: configured) { outcome.append($0) }
    let failed = try await run.wait(for: "didFailToConnect") { if case .didFailToConnect = $0 { true } else { false } }
    guard case .didFailToConnect(_, let error) = failed else { return }
    #expect(error.code == code)
    guard case .dbus(let causeName, _)? = error.cause else {
      Issue.record("no D-Bus cause: \(error)")
      return
    }
    #expect(causeName == name)
    guard case .failure(let completed) = try await run.outcome(of: outcome) else {
      Issue.record("the connect succeeded")
      return
    }
    #expect(completed.code == code)
    #expect(run.terminal.connectionStatus == .notConnected)
  }

  @Test(arguments: [
    ("org.bluez.Reason.Remote", DisconnectReason.poweredOff),
    ("org.bluez.Reason.Authentication", .peerRemovedPairingInformation),
    ("org.bluez.Reason.Timeout", .bluetoothSignalLost),
  ])
  func eachWayALinkEndsReachesTheAppWithStripesReason(_ bluezReason: String, _ expected: DisconnectReason) async throws
  {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    try peer.addReader(address: Self.first, name: "STRM2-0001")
    _ = try await run.connect("STRM2-0001", autoReconnect: false)
    try peer.call("DropLink", [.objectPath(Self.path(Self.first)), .string(bluezReason)])
    try await run.wait(for: "didDisconnect(\(expected))", Self.isDisconnect(expected))
  }

  @Test func ourOwnDisconnectIsDisconnectRequested() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    try peer.addReader(address: Self.first, name: "STRM2-0001")
    _ = try await run.connect("STRM2-0001")
    run.terminal.disconnectReader { _ in }
    try await run.wait(for: "didDisconnect(disconnectRequested)", Self.isDisconnect(.disconnectRequested))
    #expect(try peer.property(Self.path(Self.first), "org.bluez.Device1", "Connected")?.bool == false)
  }

  @Test func aLinkLostToTimeoutIsWonBackWithStripesCallbackSequence() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    try peer.addReader(address: Self.first, name: "STRM2-0001")
    _ = try await run.connect("STRM2-0001")
    let before = run.events.count
    try peer.call("DropLink", [.objectPath(Self.path(Self.first)), .string("org.bluez.Reason.Timeout")])
    try await run.wait(for: "readerDidSucceedReconnect") {
      if case .readerDidSucceedReconnect = $0 { true } else { false }
    }
    let sequence = run.events[before...].compactMap { event -> String? in
      switch event {
      case .didStartReconnect(_, let reason): "didStartReconnect(\(reason))"
      case .readerDidSucceedReconnect: "readerDidSucceedReconnect"
      case .readerDidFailReconnect: "readerDidFailReconnect"
      case .didDisconnect(_, let reason): "didDisconnect(\(reason))"
      case .didChangeConnectionStatus(let status): "status(\(status))"
      default: nil
      }
    }
    #expect(
      sequence == [
        "status(reconnecting)", "didStartReconnect(bluetoothSignalLost)", "status(connected)",
        "readerDidSucceedReconnect",
      ])
    #expect(try peer.calls(Self.path(Self.first)) == ["Connect", "Connect"])
  }

  @Test func theAdapterOffAndOnAgainDropsAndWinsBackTheReader() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    try peer.addReader(address: Self.first, name: "STRM2-0001")
    _ = try await run.connect("STRM2-0001")
    try peer.call("SetAdapterPower", [.string("hci0"), .boolean(false), .string("off-blocked")])
    try await run.wait(for: "didStartReconnect(bluetoothDisabled)") { event in
      if case .didStartReconnect(_, .bluetoothDisabled) = event { true } else { false }
    }
    #expect(run.central.isPoweredOn == false)
    try peer.call("SetAdapterPower", [.string("hci0"), .boolean(true), .string("on")])
    try await run.wait(for: "readerDidSucceedReconnect") {
      if case .readerDidSucceedReconnect = $0 { true } else { false }
    }
    #expect(run.terminal.connectedReader?.serialNumber == "STRM2-0001")
  }

  @Test func bluetoothdGoingAwayAndComingBackIsSurvived() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    try peer.addReader(address: Self.first, name: "STRM2-0001")
    _ = try await run.connect("STRM2-0001")
    peer.stopBluetoothd()
    try await run.wait(for: "didStartReconnect(bluetoothDisabled)") { event in
      if case .didStartReconnect(_, .bluetoothDisabled) = event { true } else { false }
    }
    try await peer.startBluetoothd()
    try peer.call("AddAdapter", [.string("hci0"), .boolean(true)])
    try peer.addReader(address: Self.first, name: "STRM2-0001")
    try await run.wait(for: "readerDidSucceedReconnect") {
      if case .readerDidSucceedReconnect = $0 { true } else { false }
    }
  }

  @Test func theSystemBusRestartingIsSurvivedAndTheReaderWonBack() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    try peer.addReader(address: Self.first, name: "STRM2-0001")
    _ = try await run.connect("STRM2-0001")
    let mark = run.events.count
    try await peer.restartBus()
    try await run.wait(for: "didStartReconnect(bluetoothDisabled)", after: mark) { event in
      if case .didStartReconnect(_, .bluetoothDisabled) = event { true } else { false }
    }
    try peer.addReader(address: Self.first, name: "STRM2-0001")
    try await run.wait(for: "readerDidSucceedReconnect", after: mark) {
      if case .readerDidSucceedReconnect = $0 { true } else { false }
    }
    #expect(run.terminal.connectedReader?.serialNumber == "STRM2-0001")
    #expect(try peer.calls(Self.path(Self.first)) == ["Connect"])
  }

  @Test func detailsComeFromDeviceInformationAndBatteryServicesAndTheModelIsLearned() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    let device = try peer.addReader(
      address: Self.first, name: "R-0001",
      options: ["model": .string("ACME-R1"), "firmware": .string("1.4.2"), "battery": .byte(80)])
    let discovered = try await run.connect("R-0001")
    #expect(discovered.deviceType == .other("unknown"))
    let reader = try #require(run.terminal.connectedReader)
    #expect(reader.deviceSoftwareVersion == "1.4.2")
    #expect(reader.batteryLevel == 0.8)
    #expect(reader.deviceType == .other("unknown"))
    // Battery notifications reach the app, and a low level its warning.
    try peer.call("SetBattery", [.objectPath(device), .byte(4)])
    try await run.wait(for: "readerDidReportLowBatteryWarning") {
      if case .readerDidReportLowBatteryWarning = $0 { true } else { false }
    }
    #expect(run.terminal.connectedReader?.batteryLevel == 0.04)
    // Once connected, the reader is known by the model its DIS reported.
    run.terminal.disconnectReader { _ in }
    try await run.wait(for: "didDisconnect", Self.isDisconnect(.disconnectRequested))
    let again = try #require(try await run.discover(["R-0001"]).first)
    #expect(again.deviceType == .other("ACME-R1"))
  }

  @Test func aReaderWithoutDeviceInformationOrBatteryConnectsWithItsDetailsUnknown() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    try peer.addReader(address: Self.first, name: "STRM2-0001", options: ["gatt": .boolean(false)])
    _ = try await run.connect("STRM2-0001")
    let reader = try #require(run.terminal.connectedReader)
    #expect(reader.deviceSoftwareVersion == nil && reader.batteryLevel == nil)
    #expect(reader.deviceInformation == nil)
  }

  @Test func theSMPTransportCarriesWritesAndNotificationsAndARestartIsKeptFromTheTerminal() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    let device = try peer.addReader(address: Self.first, name: "STRM2-0001")
    _ = try await run.connect("STRM2-0001")
    let transport = try #require(run.central.smpTransport(forSerialNumber: "STRM2-0001"))
    #expect(run.central.smpTransport(forSerialNumber: "STRM2-0001") === transport)
    let events = Recorder<SMPTransportEvent>()
    transport.setEventHandler { events.append($0) }
    #expect(transport.maximumWriteLength == 244)
    // An OS group echo (write, SMP v1, sequence 7, {"d": "hi"}) is answered by the reader's SMP device.
    let echoRequest: [UInt8] = [0x0A, 0x00, 0x00, 0x06, 0x00, 0x00, 0x07, 0x00, 0xA1, 0x61, 0x64, 0x62, 0x68, 0x69]
    run.scheduler.execute { transport.send(echoRequest) }
    let echo = await events.first(scheduler: run.scheduler) { if case .received = $0 { true } else { false } }
    #expect(echo == .received([0x0B, 0x00, 0x00, 0x06, 0x00, 0x00, 0x07, 0x00, 0xA1, 0x61, 0x72, 0x62, 0x68, 0x69]))
    let writes = try peer.call("SMPWrites", [.objectPath(device)]).body.first?.elements?.compactMap(\.byteArray)
    #expect(writes == [echoRequest])
    // A restart into a new image: the transport goes down and comes back; the terminal sees nothing.
    let mark = run.events.count
    run.scheduler.execute { transport.expectLinkLoss(.restart) }
    try peer.call("DropLink", [.objectPath(device), .string("org.bluez.Reason.Remote")])
    let back = await events.first(after: 1, scheduler: run.scheduler) { if case .ready = $0 { true } else { false } }
    #expect(back == .ready(maximumWriteLength: 244))
    #expect(events.values.dropFirst().first == .down)
    run.scheduler.execute { transport.expectLinkLoss(nil) }
    #expect(run.terminal.connectedReader?.serialNumber == "STRM2-0001")
    #expect(!run.events[mark...].contains { if case .didDisconnect = $0 { true } else { false } })
    #expect(try peer.calls(device) == ["Connect", "Connect"])
  }

  /// A terminal created right after `open` reads the radio's state from `isPoweredOn`: it must be known
  /// by then, or a terminal would take a powered adapter for an off one.
  @Test func openReturnsWithTheRadioStateKnown() async throws {
    let peer = try await BlueZPeer.start()
    defer { peer.stop() }
    for _ in 0..<5 {
      let central = try BlueZCentral.open(
        configuration: TerminalRun.configuration, scheduler: LiveScheduler(), environment: peer.environment,
        sha256: { SHA256Checksum.compute($0) })
      #expect(central.isPoweredOn)
      central.close()
    }
  }

  @Test func openingSaysWhichPartIsMissing() async throws {
    let scheduler = LiveScheduler()
    let noBus = try #require(throws: ReaderError.self) {
      try BlueZCentral.open(
        scheduler: scheduler, environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bus"],
        sha256: { SHA256Checksum.compute($0) })
    }
    #expect(noBus.code == .bluetoothUnsupported && noBus.context["missing"] == "bus")
    let peer = try await BlueZPeer.start(adapter: false)
    defer { peer.stop() }
    let noAdapter = try #require(throws: ReaderError.self) {
      try BlueZCentral.open(scheduler: scheduler, environment: peer.environment, sha256: { SHA256Checksum.compute($0) })
    }
    #expect(noAdapter.context["missing"] == "adapter")
    peer.stopBluetoothd()
    let started = ContinuousClock.now
    let noBluetoothd = try #require(throws: ReaderError.self) {
      try BlueZCentral.open(scheduler: scheduler, environment: peer.environment, sha256: { SHA256Checksum.compute($0) })
    }
    #expect(noBluetoothd.context["missing"] == "bluetoothd")
    #expect(ContinuousClock.now - started < .seconds(1))
  }

  @Test func aBusThatDeniesThisProcessBluetoothdSaysSoWithTheDBusError() async throws {
    let peer = try await BlueZPeer.start(deniedInterface: "org.freedesktop.DBus.ObjectManager")
    defer { peer.stop() }
    let denied = try #require(throws: ReaderError.self) {
      try BlueZCentral.open(
        scheduler: LiveScheduler(), environment: peer.environment, sha256: { SHA256Checksum.compute($0) })
    }
    #expect(denied.code == .bluetoothUnsupported && denied.context["missing"] == "permission")
    guard case .dbus(let name, _)? = denied.cause else {
      Issue.record("no D-Bus cause: \(denied)")
      return
    }
    #expect(name == DBusError.accessDenied)
    #expect(denied.message.contains("bluetooth group"))
  }
}
