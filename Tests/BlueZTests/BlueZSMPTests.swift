import DBus
import MCUmgr
import ReaderCore
import Testing

@testable import BlueZ

/// A reader's SMP transport on the machine alone: readiness, notifications, writes, and the link losses
/// the SMP link announces (reboot, restart into a new image).
@Suite struct BlueZSMPTests {
  typealias Machine = BlueZCentralStateMachine
  typealias T = BlueZCentralStateMachineTests
  static let smp = T.device + "/service0020/char0021"
  static let serial = "STRM2-0001"

  static func smpInterfaces() -> BlueZInterfaces {
    [
      "org.bluez.GattCharacteristic1": [
        "UUID": .string("DA2E7828-FBCE-4E01-AE9E-261174997C48"),
        "Flags": .stringArray(["write-without-response", "notify"]), "MTU": .uint16(247),
      ]
    ]
  }

  /// Connects until the link is up and services resolved, and answers the SMP `StartNotify`.
  static func connect(_ machine: inout Machine, first: Bool = true) -> [Machine.Action] {
    let start = machine.handle(.connect(serialNumber: serial), now: .zero)
    return resolve(&machine, start, first: first)
  }

  static func resolve(_ machine: inout Machine, _ start: [Machine.Action], first: Bool = true) -> [Machine.Action] {
    var actions = machine.handle(.reply(T.requiredCallID(start, .connect(device: T.device)), T.ok), now: .zero)
    if first {
      actions += machine.handle(.signal(.interfacesAdded(path: smp, interfaces: smpInterfaces())), now: .zero)
    }
    let resolved = machine.handle(
      T.changed(["Connected": .boolean(true), "ServicesResolved": .boolean(true)]), now: .zero)
    actions += resolved
    guard let notify = T.callID(resolved, .startNotify(characteristic: smp)) else { return actions }
    return actions + machine.handle(.reply(notify, T.ok), now: .zero)
  }

  static func connected() -> Machine {
    var (machine, _) = T.machine(withReader: true)
    _ = connect(&machine)
    return machine
  }

  static func smpEvents(_ actions: [Machine.Action]) -> [SMPTransportEvent] {
    actions.compactMap { if case .emitSMP(serial, let event) = $0 { event } else { nil } }
  }

  static func drop(_ machine: inout Machine, reason: String) -> [Machine.Action] {
    _ = machine.handle(.signal(.deviceDisconnected(path: T.device, reason: reason, message: "")), now: .zero)
    return machine.handle(T.changed(["Connected": .boolean(false), "ServicesResolved": .boolean(false)]), now: .zero)
  }

  @Test func theTransportIsReadyWithTheMTULessThreeBeforeTheTerminalHearsDidConnect() {
    var (machine, _) = T.machine(withReader: true)
    let actions = Self.connect(&machine)
    let ready = actions.firstIndex(of: .emitSMP(Self.serial, .ready(maximumWriteLength: 244)))
    let connected = actions.firstIndex { if case .emit(.didConnect) = $0 { true } else { false } }
    #expect(ready != nil && connected != nil && ready! < connected!)
    #expect(machine.maximumWriteLength(of: Self.serial) == 244)
  }

  @Test func anSMPCharacteristicThatRefusesNotificationsFailsTheConnectWithBlueZsError() throws {
    var (machine, _) = T.machine(withReader: true)
    let start = machine.handle(.connect(serialNumber: Self.serial), now: .zero)
    _ = machine.handle(.reply(T.callID(start, .connect(device: T.device))!, T.ok), now: .zero)
    _ = machine.handle(.signal(.interfacesAdded(path: Self.smp, interfaces: Self.smpInterfaces())), now: .zero)
    let resolved = machine.handle(
      T.changed(["Connected": .boolean(true), "ServicesResolved": .boolean(true)]), now: .zero)
    let notify = try #require(T.callID(resolved, .startNotify(characteristic: Self.smp)))
    let refused = machine.handle(
      .reply(notify, .failure(DBusError(name: "org.bluez.Error.NotPermitted", message: "Write not permitted"))),
      now: .zero)
    #expect(T.calls(refused) == [.disconnect(device: T.device)])
    guard case .didFailToConnect(_, let error)? = T.events(refused).first else {
      Issue.record("no failure: \(refused)")
      return
    }
    #expect(error.code == .connectionFailed)
    #expect(error.cause == .dbus(name: "org.bluez.Error.NotPermitted", message: "Write not permitted"))
    #expect(Self.smpEvents(refused).isEmpty && machine.maximumWriteLength(of: Self.serial) == nil)
    // The device's own Connected = false that follows is no second event.
    #expect(T.events(machine.handle(T.changed(["Connected": .boolean(false)]), now: .zero)).isEmpty)
  }

  @Test func notificationsAreReceivedAndSendsAreWritesWithoutResponse() {
    var machine = Self.connected()
    let notified = machine.handle(
      .signal(
        .propertiesChanged(
          path: Self.smp, interface: "org.bluez.GattCharacteristic1", changed: ["Value": .bytes([1, 2, 3])],
          invalidated: [])), now: .zero)
    #expect(Self.smpEvents(notified) == [.received([1, 2, 3])])
    let sent = machine.handle(.smpSend(serialNumber: Self.serial, bytes: [9, 8]), now: .zero)
    #expect(T.calls(sent) == [.writeCommand(characteristic: Self.smp, value: [9, 8])])
    let message = BlueZCall.writeCommand(characteristic: Self.smp, value: [9, 8]).message
    #expect(message.member == "WriteValue" && message.body.last?.dictionary?["type"]?.string == "command")
  }

  @Test(arguments: [
    "org.bluez.Error.Failed", "org.bluez.Error.NotPermitted", "org.bluez.Error.InProgress",
    "org.bluez.Error.NotConnected",
  ])
  func aWriteBlueZRefusesIsReportedToTheTransportWithItsBytesAndTheDBusError(_ name: String) throws {
    var machine = Self.connected()
    let sent = machine.handle(.smpSend(serialNumber: Self.serial, bytes: [9, 8]), now: .zero)
    let write = try #require(T.callID(sent, .writeCommand(characteristic: Self.smp, value: [9, 8])))
    let failed = machine.handle(.reply(write, .failure(DBusError(name: name, message: "Operation failed"))), now: .zero)
    #expect(Self.smpEvents(failed) == [.sendFailed([9, 8], .dbus(name: name, message: "Operation failed"))])
    #expect(T.events(failed).isEmpty, "the link stands")
    #expect(machine.maximumWriteLength(of: Self.serial) == 244)
    let next = machine.handle(.smpSend(serialNumber: Self.serial, bytes: [7]), now: .zero)
    let written = try #require(T.callID(next, .writeCommand(characteristic: Self.smp, value: [7])))
    #expect(
      Self.smpEvents(machine.handle(.reply(written, T.ok), now: .zero)).isEmpty, "a write that succeeds is silent")
  }

  @Test func aLostLinkIsDownForTheTransportBeforeTheTerminalHearsIt() {
    var machine = Self.connected()
    let lost = Self.drop(&machine, reason: "org.bluez.Reason.Timeout")
    #expect(lost.compactMap { if case .emitSMP = $0 { 0 } else if case .emit = $0 { 1 } else { nil } } == [0, 1])
    #expect(Self.smpEvents(lost) == [.down])
    #expect(machine.maximumWriteLength(of: Self.serial) == nil)
    #expect(T.calls(machine.handle(.smpSend(serialNumber: Self.serial, bytes: [1]), now: .zero)).isEmpty)
  }

  @Test(arguments: ["org.bluez.Reason.Timeout", "org.bluez.Reason.Remote", "org.bluez.Reason.Unknown"])
  func anExpectedRebootIsRebootRequestedWhateverBlueZSays(_ reason: String) {
    var machine = Self.connected()
    _ = machine.handle(.expectLinkLoss(serialNumber: Self.serial, .reboot), now: .zero)
    let lost = Self.drop(&machine, reason: reason)
    #expect(T.events(lost) == [.didDisconnect(serialNumber: Self.serial, reason: .rebootRequested)])
  }

  @Test func aRestartIsKeptFromTheTerminalWhileTheSameDeviceIsConnectedAgain() {
    var machine = Self.connected()
    _ = machine.handle(.expectLinkLoss(serialNumber: Self.serial, .restart), now: .zero)
    let lost = Self.drop(&machine, reason: "org.bluez.Reason.Remote")
    #expect(T.events(lost).isEmpty)
    #expect(Self.smpEvents(lost) == [.down])
    #expect(T.calls(lost) == [.connect(device: T.device)])
    let back = Self.resolve(&machine, lost, first: false)
    #expect(T.events(back).isEmpty)
    #expect(Self.smpEvents(back) == [.ready(maximumWriteLength: 244)])
    _ = machine.handle(.expectLinkLoss(serialNumber: Self.serial, nil), now: .zero)
    let later = Self.drop(&machine, reason: "org.bluez.Reason.Timeout")
    #expect(T.events(later) == [.didDisconnect(serialNumber: Self.serial, reason: .bluetoothSignalLost)])
  }

  @Test func aRestartThatFailsToConnectIsTriedAgainAfterAPause() {
    var machine = Self.connected()
    _ = machine.handle(.expectLinkLoss(serialNumber: Self.serial, .restart), now: .zero)
    let lost = Self.drop(&machine, reason: "org.bluez.Reason.Remote")
    let id = T.requiredCallID(lost, .connect(device: T.device))
    let failed = machine.handle(
      .reply(id, .failure(DBusError(name: "org.bluez.Error.Failed", message: ""))), now: .zero)
    #expect(T.events(failed).isEmpty)
    #expect(failed.contains(.arm(.restartRetry(Self.serial), after: .seconds(1))))
    let retry = machine.handle(.timerFired(.restartRetry(Self.serial)), now: .seconds(1))
    #expect(T.calls(retry) == [.connect(device: T.device)])
  }

  @Test func whenTheSMPLinkStopsWaitingTheHiddenLossIsReportedWithItsReason() {
    var machine = Self.connected()
    _ = machine.handle(.expectLinkLoss(serialNumber: Self.serial, .restart), now: .zero)
    _ = Self.drop(&machine, reason: "org.bluez.Reason.Remote")
    let cleared = machine.handle(.expectLinkLoss(serialNumber: Self.serial, nil), now: .seconds(30))
    #expect(T.events(cleared) == [.didDisconnect(serialNumber: Self.serial, reason: .poweredOff)])
    #expect(T.calls(cleared) == [.disconnect(device: T.device)])
  }

  @Test func theRadioGoingOffDuringARestartIsReportedAtOnce() {
    var machine = Self.connected()
    _ = machine.handle(.expectLinkLoss(serialNumber: Self.serial, .restart), now: .zero)
    _ = Self.drop(&machine, reason: "org.bluez.Reason.Remote")
    let off = machine.handle(
      .signal(
        .propertiesChanged(
          path: T.adapter, interface: "org.bluez.Adapter1", changed: ["Powered": .boolean(false)], invalidated: [])),
      now: .zero)
    #expect(
      T.events(off) == [
        .radioStateChanged(isPoweredOn: false), .didDisconnect(serialNumber: Self.serial, reason: .bluetoothDisabled),
      ])
  }
}
