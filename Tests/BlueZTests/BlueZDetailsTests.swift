import DBus
import ReaderCore
import Testing

@testable import BlueZ

/// Reading a reader's details (DIS, BAS) between `ServicesResolved` and `didConnect`, on the machine alone.
@Suite struct BlueZDetailsTests {
  typealias Machine = BlueZCentralStateMachine
  typealias T = BlueZCentralStateMachineTests
  static let model = T.device + "/service0001/char0002"
  static let firmware = T.device + "/service0001/char0004"
  static let battery = T.device + "/service000a/char000b"

  static func characteristic(_ uuid: String, flags: [String] = ["read"]) -> BlueZInterfaces {
    ["org.bluez.GattCharacteristic1": ["UUID": .string(uuid), "Flags": .stringArray(flags)]]
  }

  /// A machine whose reader's link is up, services resolved, with DIS and BAS objects in the tree.
  static func resolved() -> (Machine, [Machine.Action]) {
    var (machine, _) = T.machine(withReader: true)
    let start = machine.handle(.connect(serialNumber: "STRM2-0001"), now: .zero)
    _ = machine.handle(.reply(T.requiredCallID(start, .connect(device: T.device)), T.ok), now: .zero)
    for (path, uuid, flags) in [
      (model, "00002A24-0000-1000-8000-00805F9B34FB", ["read"]),
      (firmware, "00002a26-0000-1000-8000-00805f9b34fb", ["read"]),
      (battery, "00002a19-0000-1000-8000-00805f9b34fb", ["read", "notify"]),
    ] {
      _ = machine.handle(
        .signal(.interfacesAdded(path: path, interfaces: characteristic(uuid, flags: flags))), now: .zero)
    }
    let actions = machine.handle(
      T.changed(["Connected": .boolean(true), "ServicesResolved": .boolean(true)]), now: .zero)
    return (machine, actions)
  }

  static func value(_ bytes: [UInt8]) -> Result<DBusMessage, DBusError> {
    .success(DBusMessage(kind: .methodReturn, serial: 9, replySerial: 1, body: [.bytes(bytes)]))
  }

  @Test func theDetailsAreReadBeforeTheConnectCompletes() throws {
    var (machine, actions) = Self.resolved()
    #expect(
      Set(T.calls(actions)) == [
        .readValue(characteristic: Self.model), .readValue(characteristic: Self.firmware),
        .readValue(characteristic: Self.battery),
      ])
    #expect(T.events(actions).isEmpty)
    let modelRead = try #require(T.callID(actions, .readValue(characteristic: Self.model)))
    let firmwareRead = try #require(T.callID(actions, .readValue(characteristic: Self.firmware)))
    let batteryRead = try #require(T.callID(actions, .readValue(characteristic: Self.battery)))
    #expect(machine.handle(.reply(modelRead, Self.value(Array("ACME-R1\0".utf8))), now: .zero).isEmpty)
    #expect(machine.handle(.reply(firmwareRead, Self.value(Array(" 1.4.2 ".utf8))), now: .zero).isEmpty)
    let done = machine.handle(.reply(batteryRead, Self.value([80])), now: .zero)
    #expect(T.calls(done) == [.startNotify(characteristic: Self.battery)])
    let information = DeviceInformation(modelNumber: "ACME-R1", firmwareRevision: "1.4.2")
    #expect(
      T.events(done) == [
        .didConnect(
          serialNumber: "STRM2-0001",
          info: ReaderInfo(deviceSoftwareVersion: "1.4.2", batteryLevel: 0.8, deviceInformation: information))
      ])
    #expect(done.contains(.disarm(.connect("STRM2-0001"))))
    #expect(machine.deviceType(of: "STRM2-0001") == .other("ACME-R1"))
  }

  @Test func aFailedOrMalformedReadLeavesThatDetailUnknown() throws {
    var (machine, actions) = Self.resolved()
    _ = machine.handle(
      .reply(
        T.requiredCallID(actions, .readValue(characteristic: Self.model)),
        .failure(DBusError(name: "org.bluez.Error.NotPermitted", message: ""))), now: .zero)
    _ = machine.handle(
      .reply(T.requiredCallID(actions, .readValue(characteristic: Self.firmware)), Self.value([])), now: .zero)
    let done = machine.handle(
      .reply(T.requiredCallID(actions, .readValue(characteristic: Self.battery)), Self.value([101])), now: .zero)
    #expect(T.events(done) == [.didConnect(serialNumber: "STRM2-0001", info: ReaderInfo())])
    #expect(machine.deviceType(of: "STRM2-0001") == .stripeM2)
  }

  @Test func batteryNotificationsOfAConnectedReaderAreReported() {
    var (machine, actions) = Self.resolved()
    for call in [Self.model, Self.firmware, Self.battery] {
      _ = machine.handle(
        .reply(T.requiredCallID(actions, .readValue(characteristic: call)), Self.value([50])), now: .zero)
    }
    let notified = machine.handle(
      .signal(
        .propertiesChanged(
          path: Self.battery, interface: "org.bluez.GattCharacteristic1", changed: ["Value": .bytes([7])],
          invalidated: [])), now: .zero)
    #expect(notified == [.emitLink(.batteryDidChange(serialNumber: "STRM2-0001", level: 0.07, isCharging: false))])
    actions = machine.handle(T.changed(["Connected": .boolean(false)]), now: .zero)
    let late = machine.handle(
      .signal(
        .propertiesChanged(
          path: Self.battery, interface: "org.bluez.GattCharacteristic1", changed: ["Value": .bytes([6])],
          invalidated: [])), now: .zero)
    #expect(late.isEmpty)
  }

  @Test func theConnectDeadlineCoversTheReads() {
    var (machine, _) = Self.resolved()
    let timeout = machine.handle(.timerFired(.connect("STRM2-0001")), now: .seconds(10))
    #expect(T.calls(timeout) == [.disconnect(device: T.device)])
    guard case .didFailToConnect(_, let error)? = T.events(timeout).first else {
      Issue.record("no failure")
      return
    }
    #expect(error.code == .bluetoothConnectTimedOut)
  }

  @Test func everyDeviceInformationStringIsReadAndTheDiscoverySerialNumberStaysTheReadersIdentity() throws {
    var (machine, _) = T.machine(withReader: true)
    let start = machine.handle(.connect(serialNumber: "STRM2-0001"), now: .zero)
    _ = machine.handle(.reply(T.requiredCallID(start, .connect(device: T.device)), T.ok), now: .zero)
    let strings: [(String, String, [UInt8])] = [
      ("2a24", "0002", Array("ACME-R1".utf8)), ("2a25", "0003", Array("A1B2C3\0\0".utf8)),
      ("2a26", "0004", Array("1.4.2".utf8)), ("2a27", "0005", Array("rev B".utf8)),
      ("2a29", "0006", Array("Acme Inc.".utf8)),
    ]
    for (uuid, number, _) in strings {
      _ = machine.handle(
        .signal(
          .interfacesAdded(
            path: T.device + "/service0001/char" + number,
            interfaces: Self.characteristic("0000\(uuid)-0000-1000-8000-00805f9b34fb"))), now: .zero)
    }
    let resolved = machine.handle(
      T.changed(["Connected": .boolean(true), "ServicesResolved": .boolean(true)]), now: .zero)
    #expect(T.calls(resolved).count == 5)
    var done: [Machine.Action] = []
    for (_, number, bytes) in strings {
      let read = try #require(T.callID(resolved, .readValue(characteristic: T.device + "/service0001/char" + number)))
      done = machine.handle(.reply(read, Self.value(bytes)), now: .zero)
    }
    let information = DeviceInformation(
      serialNumber: "A1B2C3", modelNumber: "ACME-R1", firmwareRevision: "1.4.2", hardwareRevision: "rev B",
      manufacturerName: "Acme Inc.")
    #expect(
      T.events(done) == [
        .didConnect(
          serialNumber: "STRM2-0001", info: ReaderInfo(deviceSoftwareVersion: "1.4.2", deviceInformation: information))
      ])
    #expect(machine.deviceType(of: "STRM2-0001") == .other("ACME-R1"))
  }

  @Test func junkOrAFailedReadLeavesThatStringUnknownAndTheReaderConnects() throws {
    var (machine, actions) = Self.resolved()
    _ = machine.handle(
      .reply(T.requiredCallID(actions, .readValue(characteristic: Self.model)), Self.value([0xFF, 0x41])), now: .zero)
    _ = machine.handle(
      .reply(
        T.requiredCallID(actions, .readValue(characteristic: Self.firmware)),
        Self.value(Array(String(repeating: "9", count: 65).utf8))), now: .zero)
    let done = machine.handle(
      .reply(T.requiredCallID(actions, .readValue(characteristic: Self.battery)), Self.value([50])), now: .zero)
    #expect(T.events(done) == [.didConnect(serialNumber: "STRM2-0001", info: ReaderInfo(batteryLevel: 0.5))])
    #expect(machine.deviceType(of: "STRM2-0001") == .stripeM2)
  }
}
