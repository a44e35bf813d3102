import DBus
import ReaderCore
import Testing

@testable import BlueZ

/// The machine driven directly: `bluetoothd`'s objects and signals in, calls and events out, no bus.
@Suite struct BlueZCentralStateMachineTests {
  typealias Machine = BlueZCentralStateMachine
  static let adapter = "/org/bluez/hci0"
  static let device = "/org/bluez/hci0/dev_C0_00_00_00_00_01"
  static let smp = BlueZConfiguration.smpServiceUUID

  static func adapterProperties(powered: Bool = true, state: String = "on") -> BlueZProperties {
    ["Powered": .boolean(powered), "PowerState": .string(state), "Discovering": .boolean(false)]
  }

  static func deviceProperties(name: String? = "STRM2-0001", rssi: Int16? = -50, uuids: [String] = [smp])
    -> BlueZProperties
  {
    var properties: BlueZProperties = [
      "Address": .string("C0:00:00:00:00:01"), "Alias": .string("C0-00-00-00-00-01"),
      "UUIDs": .stringArray(uuids), "Connected": .boolean(false), "ServicesResolved": .boolean(false),
    ]
    if let name { properties["Name"] = .string(name) }
    if let rssi { properties["RSSI"] = .int16(rssi) }
    return properties
  }

  /// A machine with the bus open, an adapter on, and optionally one reader in the tree.
  static func machine(withReader: Bool = false, configuration: BlueZConfiguration = BlueZConfiguration())
    -> (Machine, [Machine.Action])
  {
    var machine = Machine(configuration: configuration)
    var objects: BlueZObjects = [adapter: ["org.bluez.Adapter1": adapterProperties()]]
    if withReader { objects[device] = ["org.bluez.Device1": deviceProperties()] }
    let actions = machine.handle(.busOpened(objects), now: .zero)
    return (machine, actions)
  }

  static func events(_ actions: [Machine.Action]) -> [BluetoothEvent] {
    actions.compactMap { if case .emit(let event) = $0 { event } else { nil } }
  }

  static func calls(_ actions: [Machine.Action]) -> [BlueZCall] {
    actions.compactMap { if case .call(_, let call) = $0 { call } else { nil } }
  }

  static func callID(_ actions: [Machine.Action], _ wanted: BlueZCall) -> UInt64? {
    actions.lazy.compactMap { if case .call(let id, let call) = $0, call == wanted { id } else { nil } }.first
  }

  static let ok = Result<DBusMessage, DBusError>.success(DBusMessage(kind: .methodReturn, serial: 1, replySerial: 1))

  static func changed(_ properties: BlueZProperties, path: String = device) -> Machine.Input {
    .signal(.propertiesChanged(path: path, interface: "org.bluez.Device1", changed: properties, invalidated: []))
  }

  /// Starts a scan and answers its `StartDiscovery`.
  static func scanning(_ machine: inout Machine) -> [Machine.Action] {
    let actions = machine.handle(.startScan, now: .zero)
    let start = callID(actions, .startDiscovery(adapter: adapter))!
    return actions + machine.handle(.reply(start, ok), now: .zero)
  }

  @Test func aPoweredAdapterIsARadioThatIsOn() {
    let (machine, actions) = Self.machine()
    #expect(machine.isRadioOn)
    #expect(Self.events(actions) == [.radioStateChanged(isPoweredOn: true)])
  }

  @Test func rfkillOrPowerOffTurnsTheRadioOff() {
    var (machine, _) = Self.machine()
    let blocked = machine.handle(
      .signal(
        .propertiesChanged(
          path: Self.adapter, interface: "org.bluez.Adapter1",
          changed: ["PowerState": .string("off-blocked")], invalidated: [])), now: .seconds(1))
    #expect(Self.events(blocked) == [.radioStateChanged(isPoweredOn: false)])
    let on = machine.handle(
      .signal(
        .propertiesChanged(
          path: Self.adapter, interface: "org.bluez.Adapter1", changed: ["PowerState": .string("on")],
          invalidated: [])), now: .seconds(2))
    #expect(Self.events(on) == [.radioStateChanged(isPoweredOn: true)])
  }

  @Test func aScanSetsTheFilterThenStartsDiscoveryAndStopsIt() {
    var (machine, _) = Self.machine()
    let start = machine.handle(.startScan, now: .zero)
    #expect(
      Self.calls(start) == [
        .setDiscoveryFilter(adapter: Self.adapter, uuids: [Self.smp]), .startDiscovery(adapter: Self.adapter),
      ])
    let id = Self.callID(start, .startDiscovery(adapter: Self.adapter))!
    _ = machine.handle(.reply(id, Self.ok), now: .zero)
    #expect(Self.calls(machine.handle(.stopScan, now: .zero)) == [.stopDiscovery(adapter: Self.adapter)])
  }

  @Test func theDiscoveryFilterAsksForLEServiceUUIDsAndDuplicateData() throws {
    let message = BlueZCall.setDiscoveryFilter(adapter: Self.adapter, uuids: [Self.smp]).message
    let filter = try #require(message.body.first?.dictionary)
    #expect(filter["Transport"]?.string == "le")
    #expect(filter["UUIDs"]?.stringArray == [Self.smp])
    #expect(filter["DuplicateData"]?.bool == true)
  }

  @Test func rssiChangesWhileScanningAreAdvertisementsNamedByTheDevicesName() {
    var (machine, _) = Self.machine(withReader: true)
    _ = Self.scanning(&machine)
    let actions = machine.handle(Self.changed(["RSSI": .int16(-40)]), now: .seconds(1))
    #expect(
      Self.events(actions) == [
        .advertisement(
          Advertisement(serialNumber: "STRM2-0001", deviceType: .stripeM2, signalStrength: -40, info: ReaderInfo()))
      ])
  }

  @Test func aManufacturerDataChangeAloneIsAnAdvertisementWithTheLastRSSI() {
    var (machine, _) = Self.machine(withReader: true)
    _ = Self.scanning(&machine)
    _ = machine.handle(Self.changed(["RSSI": .int16(-44)]), now: .seconds(1))
    let data = DBusValue.array(
      .dictEntry(key: .uint16, value: .variant), [.dictEntry(.uint16(0x0059), .variant(.bytes([1, 2, 3])))])
    let actions = machine.handle(Self.changed(["ManufacturerData": data]), now: .seconds(2))
    #expect(
      Self.events(actions) == [
        .advertisement(
          Advertisement(serialNumber: "STRM2-0001", deviceType: .stripeM2, signalStrength: -44, info: ReaderInfo()))
      ])
    // A change of anything else (the alias, say) is not an advertisement.
    #expect(Self.events(machine.handle(Self.changed(["Alias": .string("x")]), now: .seconds(3))).isEmpty)
  }

  @Test func aReaderLeftConnectedWithoutALinkOfOursIsReportedOnEachRefreshWhileScanning() {
    var machine = Machine(configuration: BlueZConfiguration())
    var left = Self.deviceProperties(rssi: nil)
    left["Connected"] = .boolean(true)
    left["ServicesResolved"] = .boolean(true)
    _ = machine.handle(
      .busOpened([
        Self.adapter: ["org.bluez.Adapter1": Self.adapterProperties()], Self.device: ["org.bluez.Device1": left],
      ]), now: .zero)
    _ = Self.scanning(&machine)
    let refresh = machine.handle(.timerFired(.refresh), now: .seconds(1))
    #expect(
      Self.events(refresh) == [
        .advertisement(
          Advertisement(serialNumber: "STRM2-0001", deviceType: .stripeM2, signalStrength: -127, info: ReaderInfo()))
      ])
    // Once it is ours (connecting takes the link over), it is not listed.
    let stop = machine.handle(.stopScan, now: .seconds(1))
    _ = machine.handle(.reply(Self.callID(stop, .stopDiscovery(adapter: Self.adapter))!, Self.ok), now: .seconds(1))
    let connect = machine.handle(.connect(serialNumber: "STRM2-0001"), now: .seconds(1))
    let id = Self.callID(connect, .connect(device: Self.device))!
    let taken = machine.handle(
      .reply(id, .failure(DBusError(name: "org.bluez.Error.AlreadyConnected", message: ""))), now: .seconds(1))
    #expect(Self.events(taken) == [.didConnect(serialNumber: "STRM2-0001", info: ReaderInfo())])
    _ = Self.scanning(&machine)
    #expect(Self.events(machine.handle(.timerFired(.refresh), now: .seconds(2))).isEmpty)
  }

  @Test func devicesWithoutTheServiceOrOutsideAScanAreNotReported() {
    var (machine, _) = Self.machine(withReader: true)
    #expect(Self.events(machine.handle(Self.changed(["RSSI": .int16(-40)]), now: .zero)).isEmpty)
    _ = Self.scanning(&machine)
    let other = "/org/bluez/hci0/dev_C0_00_00_00_00_02"
    _ = machine.handle(
      .signal(.interfacesAdded(path: other, interfaces: ["org.bluez.Device1": Self.deviceProperties(uuids: [])])),
      now: .zero)
    #expect(Self.events(machine.handle(Self.changed(["RSSI": .int16(-41)], path: other), now: .zero)).isEmpty)
  }

  @Test func theSerialNumberIsTheMappingThenNameThenAliasThenAddress() {
    let mapped = BlueZConfiguration(serialNumbers: ["C0:00:00:00:00:01": "WPC32-9"])
    var (machine, _) = Self.machine(withReader: true, configuration: mapped)
    #expect(machine.devicePath(of: "WPC32-9") == Self.device)
    (machine, _) = Self.machine()
    _ = machine.handle(
      .signal(.interfacesAdded(path: Self.device, interfaces: ["org.bluez.Device1": Self.deviceProperties(name: nil)])),
      now: .zero)
    #expect(machine.devicePath(of: "C0-00-00-00-00-01") == Self.device)
  }

  @Test func readersStillPresentAreReportedAgainAndVanishAfterTheirWindow() {
    var (machine, _) = Self.machine(withReader: true)
    _ = Self.scanning(&machine)
    _ = machine.handle(Self.changed(["RSSI": .int16(-40)]), now: .seconds(0))
    let refreshed = machine.handle(.timerFired(.refresh), now: .seconds(4))
    #expect(Self.events(refreshed).count == 1)
    #expect(refreshed.contains(.arm(.refresh, after: .seconds(1))))
    let vanished = machine.handle(.timerFired(.refresh), now: .seconds(6))
    #expect(Self.events(vanished).isEmpty)
  }

  @Test func connectCallsConnectAndCompletesWhenServicesAreResolved() {
    var (machine, _) = Self.machine(withReader: true)
    let start = machine.handle(.connect(serialNumber: "STRM2-0001"), now: .zero)
    #expect(start.contains(.arm(.connect("STRM2-0001"), after: .seconds(10))))
    let id = Self.callID(start, .connect(device: Self.device))!
    #expect(Self.events(machine.handle(.reply(id, Self.ok), now: .zero)).isEmpty)
    #expect(Self.events(machine.handle(Self.changed(["Connected": .boolean(true)]), now: .zero)).isEmpty)
    let done = machine.handle(Self.changed(["ServicesResolved": .boolean(true)]), now: .zero)
    #expect(Self.events(done) == [.didConnect(serialNumber: "STRM2-0001", info: ReaderInfo())])
    #expect(done.contains(.disarm(.connect("STRM2-0001"))))
  }

  @Test func scanningStopsWhileAConnectIsInProgress() {
    var (machine, _) = Self.machine(withReader: true)
    _ = Self.scanning(&machine)
    let connect = machine.handle(.connect(serialNumber: "STRM2-0001"), now: .zero)
    #expect(Self.calls(connect) == [.connect(device: Self.device), .stopDiscovery(adapter: Self.adapter)])
  }

  @Test func aConnectThatNeverResolvesTimesOutAndIsCancelled() {
    var (machine, _) = Self.machine(withReader: true)
    _ = machine.handle(.connect(serialNumber: "STRM2-0001"), now: .zero)
    let timeout = machine.handle(.timerFired(.connect("STRM2-0001")), now: .seconds(10))
    #expect(Self.calls(timeout) == [.disconnect(device: Self.device)])
    guard case .didFailToConnect(_, let error)? = Self.events(timeout).first else {
      Issue.record("no failure")
      return
    }
    #expect(error.code == .bluetoothConnectTimedOut)
  }

  @Test(arguments: [
    ("org.bluez.Error.Failed", ReaderError.Code.connectionFailed),
    ("org.bluez.Error.InProgress", .connectionFailed),
    ("org.bluez.Error.NotReady", .bluetoothDisabled),
    (DBusError.noReply, .bluetoothConnectTimedOut),
  ])
  func connectErrorsMapToReaderErrorsWithTheDBusNameAsCause(_ name: String, _ code: ReaderError.Code) {
    var (machine, _) = Self.machine(withReader: true)
    let start = machine.handle(.connect(serialNumber: "STRM2-0001"), now: .zero)
    let id = Self.callID(start, .connect(device: Self.device))!
    let failed = machine.handle(.reply(id, .failure(DBusError(name: name, message: "m"))), now: .zero)
    guard case .didFailToConnect(_, let error)? = Self.events(failed).first else {
      Issue.record("no failure")
      return
    }
    #expect(error.code == code)
    #expect(error.cause == .dbus(name: name, message: "m"))
  }

  @Test func alreadyConnectedIsNotAFailure() {
    var (machine, _) = Self.machine(withReader: true)
    let start = machine.handle(.connect(serialNumber: "STRM2-0001"), now: .zero)
    let id = Self.callID(start, .connect(device: Self.device))!
    _ = machine.handle(Self.changed(["Connected": .boolean(true), "ServicesResolved": .boolean(true)]), now: .zero)
    let reply = machine.handle(
      .reply(id, .failure(DBusError(name: "org.bluez.Error.AlreadyConnected", message: ""))), now: .zero)
    #expect(Self.events(reply) == [.didConnect(serialNumber: "STRM2-0001", info: ReaderInfo())])
  }

  static func connected() -> Machine {
    var (machine, _) = Self.machine(withReader: true)
    let start = machine.handle(.connect(serialNumber: "STRM2-0001"), now: .zero)
    _ = machine.handle(.reply(Self.callID(start, .connect(device: Self.device))!, Self.ok), now: .zero)
    _ = machine.handle(Self.changed(["Connected": .boolean(true), "ServicesResolved": .boolean(true)]), now: .zero)
    return machine
  }

  @Test(arguments: [
    ("org.bluez.Reason.Timeout", DisconnectReason.bluetoothSignalLost),
    ("org.bluez.Reason.Remote", .poweredOff),
    ("org.bluez.Reason.Authentication", .peerRemovedPairingInformation),
    ("org.bluez.Reason.Local", .unknown),
    ("org.bluez.Reason.Unknown", .unknown),
  ])
  func eachDisconnectedReasonMapsToStripesReason(_ reason: String, _ expected: DisconnectReason) {
    var machine = Self.connected()
    _ = machine.handle(.signal(.deviceDisconnected(path: Self.device, reason: reason, message: "")), now: .zero)
    let down = machine.handle(Self.changed(["Connected": .boolean(false)]), now: .zero)
    #expect(Self.events(down) == [.didDisconnect(serialNumber: "STRM2-0001", reason: expected)])
  }

  @Test func aRemoteDisconnectAfterARebootRequestIsTheReboot() {
    var machine = Self.connected()
    _ = machine.handle(.expectReboot(serialNumber: "STRM2-0001"), now: .zero)
    _ = machine.handle(
      .signal(.deviceDisconnected(path: Self.device, reason: "org.bluez.Reason.Remote", message: "")), now: .zero)
    let down = machine.handle(Self.changed(["Connected": .boolean(false)]), now: .zero)
    #expect(Self.events(down) == [.didDisconnect(serialNumber: "STRM2-0001", reason: .rebootRequested)])
  }

  @Test func ourOwnDisconnectIsDisconnectRequested() {
    var machine = Self.connected()
    let request = machine.handle(.disconnect(serialNumber: "STRM2-0001"), now: .zero)
    #expect(Self.calls(request) == [.disconnect(device: Self.device)])
    _ = machine.handle(
      .signal(.deviceDisconnected(path: Self.device, reason: "org.bluez.Reason.Local", message: "")), now: .zero)
    let down = machine.handle(Self.changed(["Connected": .boolean(false)]), now: .zero)
    #expect(Self.events(down) == [.didDisconnect(serialNumber: "STRM2-0001", reason: .disconnectRequested)])
  }

  @Test func theAdapterGoingOffEndsLinksWithBluetoothDisabled() {
    var machine = Self.connected()
    let off = machine.handle(
      .signal(
        .propertiesChanged(
          path: Self.adapter, interface: "org.bluez.Adapter1", changed: ["Powered": .boolean(false)], invalidated: [])),
      now: .zero)
    #expect(
      Self.events(off) == [
        .radioStateChanged(isPoweredOn: false), .didDisconnect(serialNumber: "STRM2-0001", reason: .bluetoothDisabled),
      ])
    // The device's own `Connected = false` that follows is absorbed.
    #expect(Self.events(machine.handle(Self.changed(["Connected": .boolean(false)]), now: .zero)).isEmpty)
  }

  @Test func bluetoothdLeavingTurnsTheRadioOffAndItsReturnReloadsTheObjects() throws {
    var machine = Self.connected()
    let gone = machine.handle(.signal(.serviceOwnerChanged(hasOwner: false)), now: .zero)
    #expect(
      Self.events(gone) == [
        .radioStateChanged(isPoweredOn: false), .didDisconnect(serialNumber: "STRM2-0001", reason: .bluetoothDisabled),
      ])
    let back = machine.handle(.signal(.serviceOwnerChanged(hasOwner: true)), now: .seconds(1))
    let id = try #require(Self.callID(back, .getManagedObjects))
    var reply = DBusMessage(kind: .methodReturn, serial: 2, replySerial: 1)
    reply.body = [
      .array(
        .dictEntry(
          key: .objectPath,
          value: .array(.dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant))))),
        [
          .dictEntry(
            .objectPath(Self.adapter),
            .array(
              .dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant))),
              [.dictEntry(.string("org.bluez.Adapter1"), .stringVariantDictionary(Self.adapterProperties()))]))
        ])
    ]
    let loaded = machine.handle(.reply(id, .success(reply)), now: .seconds(1))
    #expect(Self.events(loaded) == [.radioStateChanged(isPoweredOn: true)])
  }

  @Test func aLostBusIsOpenedAgainAfterTheRetryInterval() {
    var (machine, _) = Self.machine()
    let lost = machine.handle(.busLost, now: .zero)
    #expect(lost.contains(.arm(.busRetry, after: .seconds(2))))
    #expect(Self.events(lost) == [.radioStateChanged(isPoweredOn: false)])
    #expect(machine.handle(.timerFired(.busRetry), now: .seconds(2)) == [.openBus])
  }

  @Test func aConnectToAReaderNotInTheTreeScansForItThenConnects() {
    var (machine, _) = Self.machine()
    let locate = machine.handle(.connect(serialNumber: "STRM2-0001"), now: .zero)
    #expect(Self.calls(locate).contains(.startDiscovery(adapter: Self.adapter)))
    let found = machine.handle(
      .signal(.interfacesAdded(path: Self.device, interfaces: ["org.bluez.Device1": Self.deviceProperties()])),
      now: .seconds(1))
    #expect(Self.calls(found).contains(.connect(device: Self.device)))
  }

  @Test func lateRepliesAndUnknownSignalsAreAbsorbed() {
    var (machine, _) = Self.machine(withReader: true)
    #expect(machine.handle(.reply(999, Self.ok), now: .zero).isEmpty)
    #expect(Self.events(machine.handle(Self.changed(["Connected": .boolean(false)]), now: .zero)).isEmpty)
    #expect(machine.handle(.timerFired(.connect("nobody")), now: .zero).isEmpty)
  }
}
