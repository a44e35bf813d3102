import MCUmgr
import ReaderCore
import Testing

/// A Bluetooth radio over `FakeSMPDevice`s that honours the `SMPTransport` contract exactly as a real
/// backend must (the reference for the BlueZ one): readiness before `didConnect`, `.down` before
/// `didDisconnect`, the `.reboot` expectation read as `rebootRequested`, the `.restart` expectation
/// hiding the loss and reconnecting until the device is back or the expectation is withdrawn — then
/// reporting the hidden loss. Events go out as work items of the clock, never from inside a call.
final class FakeSMPCentral: BluetoothCentral, SMPTransportProvider, @unchecked Sendable {
  final class Transport: SMPTransport, @unchecked Sendable {
    let serialNumber: String
    weak var central: FakeSMPCentral?
    var handler: (@Sendable (SMPTransportEvent) -> Void)?
    var expectation: SMPLinkLossExpectation?
    /// The reason of a loss kept from the terminal while the device restarts.
    var hiddenLoss: DisconnectReason?
    var writeLength: Int?
    /// Every write, in order (for tests).
    private(set) var writes: [[UInt8]] = []

    init(serialNumber: String, central: FakeSMPCentral) {
      self.serialNumber = serialNumber
      self.central = central
    }

    func setEventHandler(_ handler: @escaping @Sendable (SMPTransportEvent) -> Void) { self.handler = handler }
    var maximumWriteLength: Int? { writeLength }

    func send(_ bytes: [UInt8]) {
      // A real link refuses such a write: the write is lost, and the test that caused it fails.
      guard bytes.count <= (writeLength ?? .max) else {
        Issue.record("a write of \(bytes.count) bytes, longer than the link takes (\(writeLength ?? 0))")
        return
      }
      guard writeLength != nil, let central, let device = central.devices[serialNumber] else { return }
      writes.append(bytes)
      central.clock.schedule(after: .microseconds(200)) { device.receive(bytes) }
    }

    func expectLinkLoss(_ expectation: SMPLinkLossExpectation?) {
      self.expectation = expectation
      guard expectation == nil, let reason = hiddenLoss, let central else { return }
      // The SMP link stopped waiting: the loss it hid is reported now.
      hiddenLoss = nil
      central.clock.execute { central.report(.didDisconnect(serialNumber: self.serialNumber, reason: reason)) }
    }
  }

  let clock: VirtualClock
  private(set) var devices: [String: FakeSMPDevice] = [:]
  private var transports: [String: Transport] = [:]
  /// The write length of every link (ATT MTU − 3).
  var writeLength = 244
  private var handler: (@Sendable (BluetoothEvent) -> Void)?
  private var scanning = false
  private var advertising: ScheduledWork?
  /// Every event reported to the terminal, with its time.
  private(set) var reported: [(time: Duration, event: BluetoothEvent)] = []
  /// Devices connected (or being reconnected behind the terminal's back).
  private var linked: Set<String> = []

  init(clock: VirtualClock) { self.clock = clock }

  func add(_ device: FakeSMPDevice) {
    devices[device.serialNumber] = device
    device.onNotify = { [unowned self, serial = device.serialNumber] bytes in
      guard linked.contains(serial), transports[serial]?.writeLength != nil else { return }
      transports[serial]?.handler?(.received(bytes))
    }
    device.onDrop = { [unowned self, serial = device.serialNumber] drop in
      linkLost(serial, reason: drop == .reset ? .poweredOff : .bluetoothSignalLost)
    }
  }

  func transport(_ serialNumber: String) -> Transport? { transports[serialNumber] }

  // MARK: SMPTransportProvider

  func smpTransport(forSerialNumber serialNumber: String) -> (any SMPTransport)? {
    guard devices[serialNumber] != nil else { return nil }
    if let existing = transports[serialNumber] { return existing }
    let transport = Transport(serialNumber: serialNumber, central: self)
    if linked.contains(serialNumber) { transport.writeLength = writeLength }
    transports[serialNumber] = transport
    return transport
  }

  // MARK: BluetoothCentral

  func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) { self.handler = handler }
  var isPoweredOn: Bool { true }

  func startScan() {
    scanning = true
    advertise()
  }

  func stopScan() {
    scanning = false
    if let advertising { clock.cancel(advertising) }
    advertising = nil
  }

  func connect(serialNumber: String) {
    clock.schedule(after: .milliseconds(150)) { [self] in
      guard let device = devices[serialNumber], device.isUp else {
        return report(
          .didFailToConnect(serialNumber: serialNumber, error: ReaderError(.connectionFailed, "not reachable")))
      }
      linkUp(serialNumber)
      report(.didConnect(serialNumber: serialNumber, info: ReaderInfo(deviceSoftwareVersion: device.runningVersion)))
    }
  }

  func cancelConnect(serialNumber: String) {
    clock.execute { [self] in
      guard linked.contains(serialNumber) else { return }
      linkDown(serialNumber)
    }
  }

  func disconnect(serialNumber: String) {
    clock.schedule(after: .milliseconds(50)) { [self] in
      guard linked.contains(serialNumber) else { return }
      linkDown(serialNumber)
      report(.didDisconnect(serialNumber: serialNumber, reason: .disconnectRequested))
    }
  }

  // MARK: Links

  private func advertise() {
    guard scanning else { return }
    for (serial, device) in devices.sorted(by: { $0.key < $1.key }) where device.isUp && !linked.contains(serial) {
      report(
        .advertisement(
          Advertisement(
            serialNumber: serial, deviceType: .stripeM2, signalStrength: -50,
            info: ReaderInfo(deviceSoftwareVersion: device.runningVersion))))
    }
    advertising = clock.schedule(after: .milliseconds(200)) { [self] in advertise() }
  }

  private func linkUp(_ serial: String) {
    linked.insert(serial)
    guard let transport = transports[serial] else { return }
    transport.writeLength = writeLength
    transport.handler?(.ready(maximumWriteLength: writeLength))
  }

  private func linkDown(_ serial: String) {
    linked.remove(serial)
    devices[serial]?.linkClosed()
    guard let transport = transports[serial], transport.writeLength != nil else { return }
    transport.writeLength = nil
    transport.handler?(.down)
  }

  /// The device ended the link (reset or out of range): `.down` first, then what the expectation says.
  private func linkLost(_ serial: String, reason: DisconnectReason) {
    guard linked.contains(serial) else { return }
    linkDown(serial)
    let transport = transports[serial]
    switch transport?.expectation {
    case .reboot?:
      transport?.expectation = nil
      report(.didDisconnect(serialNumber: serial, reason: .rebootRequested))
    case .restart?:
      transport?.hiddenLoss = reason
      reconnect(serial)
    case nil:
      report(.didDisconnect(serialNumber: serial, reason: reason))
    }
  }

  /// Reconnects behind the terminal's back while the restart expectation stands.
  private func reconnect(_ serial: String) {
    clock.schedule(after: .milliseconds(500)) { [self] in
      guard let transport = transports[serial], transport.expectation == .restart, transport.hiddenLoss != nil else {
        return
      }
      guard devices[serial]?.isUp == true else { return reconnect(serial) }
      transport.hiddenLoss = nil
      linkUp(serial)
    }
  }

  private func report(_ event: BluetoothEvent) {
    reported.append((clock.elapsed, event))
    handler?(event)
  }
}
