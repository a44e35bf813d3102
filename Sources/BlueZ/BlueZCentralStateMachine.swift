import DBus
import MCUmgr
import ReaderCore

/// The BlueZ central's decisions, as a pure machine: `bluetoothd`'s objects and signals, the replies to
/// its calls, timers and the terminal's commands in; D-Bus calls, `BluetoothEvent`s and timers out.
///
/// Rules it owns:
/// - The radio is on while the bus is up, `org.bluez` has an owner, the adapter exists, is `Powered`
///   and its `PowerState` (where BlueZ has it) is `on`. When it goes off every link ends: a link that
///   was up with `bluetoothDisabled`, a connect in progress with a `bluetoothDisabled` failure.
/// - Discovery runs (`SetDiscoveryFilter`, then `StartDiscovery`) while the radio is on and a scan is
///   wanted or a connect waits for a reader it does not know yet, and never while a connect is in
///   progress (scanning while connecting unsettles many controllers).
/// - A device is a reader when it is on the adapter and advertises one of the configured service
///   UUIDs; each `InterfacesAdded` or `PropertiesChanged` carrying its RSSI or manufacturer data is an
///   advertisement. Readers heard within `vanishAfter` are reported again every `refreshInterval`;
///   one not heard for longer, or removed, is no longer reported.
/// - A connect calls `Device1.Connect` (on a reader not in the object tree it first scans for it),
///   and completes when the call returned, `Connected` and `ServicesResolved` are true, within
///   `connectTimeout`; otherwise it fails and `Disconnect` cancels it.
/// - A link that ends is reported with the reason `disconnectReason(_:requested:rebootExpected:radioGoingOff:)`
///   maps from the `Disconnected` signal that preceded `Connected = false`.
package struct BlueZCentralStateMachine {
  package enum Timer: Hashable, Sendable {
    /// A connect's deadline, by serial number.
    case connect(String)
    /// The periodic report of the readers still present.
    case refresh
    /// A failed `StartDiscovery` is tried again.
    case discoveryRetry
    /// The bus is opened again.
    case busRetry
    /// A reader restarting into a new image is connected again.
    case restartRetry(String)
  }

  package enum Input: Sendable {
    /// The bus connection is up, with `bluetoothd`'s objects (nil when `org.bluez` has no owner).
    case busOpened(BlueZObjects?)
    /// Opening the bus failed.
    case busFailed
    /// The bus connection ended.
    case busLost
    /// A signal from `bluetoothd` or the bus.
    case signal(BlueZSignal)
    /// The reply to call `id`.
    case reply(UInt64, Result<DBusMessage, DBusError>)
    /// A timer fired.
    case timerFired(Timer)
    case startScan
    case stopScan
    case connect(serialNumber: String)
    case cancelConnect(serialNumber: String)
    case disconnect(serialNumber: String)
    /// The reader was asked to reboot: its next `Remote` disconnect is `rebootRequested`.
    case expectReboot(serialNumber: String)
    /// Write these bytes to the reader's SMP characteristic.
    case smpSend(serialNumber: String, bytes: [UInt8])
    /// How to read the reader's next link loss (`SMPTransport.expectLinkLoss`).
    case expectLinkLoss(serialNumber: String, SMPLinkLossExpectation?)
  }

  package enum Action: Equatable, Sendable {
    case call(UInt64, BlueZCall)
    case emit(BluetoothEvent)
    /// A reader's report over its link (battery notifications).
    case emitLink(ReaderLinkEvent)
    /// An event of a reader's SMP transport.
    case emitSMP(String, SMPTransportEvent)
    case arm(Timer, after: Duration)
    case disarm(Timer)
    /// Open the bus connection; answered by `busOpened` or `busFailed`.
    case openBus
  }

  private enum Service: Equatable {
    case noBus
    case absent
    case loading(UInt64)
    case present
  }

  private enum Discovery: Equatable {
    case idle
    case starting(UInt64)
    case running
    case stopping(UInt64)
  }

  enum Link: Equatable {
    /// Waiting to see a reader the tree does not hold, scanning for it.
    case locating
    /// `Connect` was called (`call` is its id until it returned); `wasUp` once `Connected` was true.
    case connecting(path: String, call: UInt64?, wasUp: Bool)
    /// The link is up and its services resolved; the reader's details are being read.
    case reading(path: String)
    case connected(path: String)
    /// `Disconnect` was called because the terminal asked.
    case disconnecting(path: String)

    var path: String? {
      switch self {
      case .locating: nil
      case .connecting(let path, _, _), .reading(let path), .connected(let path), .disconnecting(let path): path
      }
    }

    /// Whether the link is on its way up (connecting or reading details).
    var isOpening: Bool {
      switch self {
      case .connecting, .reading: true
      case .locating, .connected, .disconnecting: false
      }
    }
  }

  package let configuration: BlueZConfiguration
  var tree = BlueZObjectTree()
  private var service = Service.noBus
  private var discovery = Discovery.idle
  private var scanWanted = false
  private var refreshArmed = false
  var links: [String: Link] = [:]
  var serialByPath: [String: String] = [:]
  var pathBySerial: [String: String] = [:]
  var lastSeen: [String: Duration] = [:]
  private var reasons: [String: String] = [:]
  private var rebootExpected: Set<String> = []
  /// Details being read, by serial number, and the reads in flight.
  var readings: [String: Reading] = [:]
  /// The battery level characteristic notifying for each connected reader, by characteristic path.
  var batteryNotifiers: [String: String] = [:]
  /// Models learned from the Device Information Service, by serial number.
  var learnedModels: [String: DeviceType] = [:]
  /// The SMP channels of connected readers, by serial number.
  var smpLinks: [String: SMPLink] = [:]
  /// How each reader's next link loss is to be read, as its SMP link declared it.
  var expectations: [String: SMPLinkLossExpectation] = [:]
  /// Readers restarting into a new image, kept connected for the terminal while their link is won back.
  var restarting: Set<String> = []
  /// The BlueZ reason of a restart's hidden loss, reported if the SMP link stops waiting.
  var lostReasons: [String: String] = [:]
  var pending: [UInt64: BlueZCall] = [:]
  private var nextCall: UInt64 = 1
  private(set) package var isRadioOn = false

  package init(configuration: BlueZConfiguration) {
    self.configuration = configuration
  }

  /// The adapter in use, if it exists.
  package var adapterPath: String? { adapter }

  /// The adapter in use, found again only when adapters come or go (finding it scans the tree).
  private var adapter: String?

  private mutating func findAdapter() {
    if let name = configuration.adapterName {
      let path = "/org/bluez/" + name
      adapter = tree.properties(path, BlueZObjectTree.adapter) == nil ? nil : path
    } else {
      adapter = tree.adapterPaths.first
    }
  }

  /// The device path of a reader, if the tree holds it.
  package func devicePath(of serialNumber: String) -> String? { pathBySerial[serialNumber] }

  // MARK: Inputs

  package mutating func handle(_ input: Input, now: Duration) -> [Action] {
    var actions: [Action] = []
    switch input {
    case .busOpened(let objects):
      service = objects == nil ? .absent : .present
      load(objects ?? [:])
    case .busFailed:
      actions.append(.arm(.busRetry, after: configuration.busRetryInterval))
    case .busLost:
      service = .noBus
      load([:])
      actions.append(.arm(.busRetry, after: configuration.busRetryInterval))
    case .signal(let signal):
      actions += handle(signal, now: now)
    case .reply(let id, let result):
      guard let call = pending.removeValue(forKey: id) else { return [] }
      actions += handle(reply: id, call, result)
    case .timerFired(let timer):
      actions += fired(timer, now: now)
    case .startScan:
      scanWanted = true
    case .stopScan:
      scanWanted = false
    case .connect(let serial):
      actions += connect(serial)
    case .cancelConnect(let serial):
      forgetDetails(of: serial)
      restarting.remove(serial)
      if smpLinks.removeValue(forKey: serial) != nil { actions.append(.emitSMP(serial, .down)) }
      if let path = links.removeValue(forKey: serial)?.path {
        actions += [.disarm(.connect(serial)), call(.disconnect(device: path))]
      }
    case .disconnect(let serial):
      actions += disconnect(serial)
    case .expectReboot(let serial):
      rebootExpected.insert(serial)
    case .smpSend(let serial, let bytes):
      actions += smpSend(serial, bytes)
    case .expectLinkLoss(let serial, let expectation):
      actions += expectLinkLoss(serial, expectation)
    }
    return actions + settle(now: now)
  }

  private mutating func load(_ objects: BlueZObjects) {
    tree.replace(with: objects)
    findAdapter()
    readings = [:]
    batteryNotifiers = [:]
    smpLinks = [:]
    pending = [:]
    discovery = .idle
    lastSeen = [:]
    serialByPath = [:]
    pathBySerial = [:]
    for path in objects.keys.sorted() where objects[path]?[BlueZObjectTree.device] != nil { name(path) }
  }

  private mutating func handle(_ signal: BlueZSignal, now: Duration) -> [Action] {
    if case .serviceOwnerChanged(let hasOwner) = signal {
      guard hasOwner else {
        service = service == .noBus ? .noBus : .absent
        load([:])
        return []
      }
      guard service == .absent else { return [] }
      let action = call(.getManagedObjects)
      if case .call(let id, _) = action { service = .loading(id) }
      return [action]
    }
    guard service == .present else { return [] }
    switch signal {
    case .interfacesAdded(let path, let interfaces):
      tree.add(path, interfaces)
      if interfaces[BlueZObjectTree.adapter] != nil { findAdapter() }
      guard let device = interfaces[BlueZObjectTree.device] else { return [] }
      name(path)
      return deviceChanged(path, device, now: now)
    case .interfacesRemoved(let path, let interfaces):
      tree.remove(path, interfaces)
      if interfaces.contains(BlueZObjectTree.adapter) { findAdapter() }
      guard interfaces.contains(BlueZObjectTree.device) else { return [] }
      lastSeen[path] = nil
      let serial = serialByPath.removeValue(forKey: path)
      if let serial, pathBySerial[serial] == path { pathBySerial[serial] = nil }
      return serial.map { linkLost($0, path: path) } ?? []
    case .propertiesChanged(let path, let interface, let changed, let invalidated):
      guard tree.change(path, interface, changed, invalidated) else { return [] }
      if interface == BlueZObjectTree.adapter, path == adapterPath, changed["Discovering"]?.bool == false,
        discovery == .running
      {
        discovery = .idle  // Discovery stopped under us (an adapter reset): `settle` starts it again if wanted.
      }
      if interface == BlueZObjectTree.characteristic { return characteristicChanged(path, changed) }
      guard interface == BlueZObjectTree.device else { return [] }
      if changed["Name"] != nil || changed["Alias"] != nil { name(path) }
      return deviceChanged(path, changed, now: now)
    case .deviceDisconnected(let path, let reason, _):
      reasons[path] = reason
      return []
    case .serviceOwnerChanged:
      return []
    }
  }

  /// A device's properties changed (`changed` holds the new ones): an advertisement, a link's progress.
  private mutating func deviceChanged(_ path: String, _ changed: BlueZProperties, now: Duration) -> [Action] {
    guard let serial = serialByPath[path], let properties = tree.properties(path, BlueZObjectTree.device) else {
      return []
    }
    let facts = BlueZDeviceFacts(properties)
    var actions: [Action] = []
    if changed["RSSI"] != nil || changed["ManufacturerData"] != nil, isScanning, isReader(path, facts),
      let advertisement = advertisement(serial, facts)
    {
      lastSeen[path] = now
      actions.append(.emit(.advertisement(advertisement)))
    }
    switch links[serial] {
    case .locating?:
      actions += startConnecting(serial, path: path)
    case .connecting(let linkPath, let pendingCall, let wasUp)? where linkPath == path:
      if facts.connected && !wasUp {
        links[serial] = .connecting(path: path, call: pendingCall, wasUp: true)
      } else if !facts.connected && wasUp {
        return actions + linkLost(serial, path: path)
      }
      actions += completeIfReady(serial)
    case .connected(let linkPath)? where linkPath == path && !facts.connected,
      .reading(let linkPath)? where linkPath == path && !facts.connected,
      .disconnecting(let linkPath)? where linkPath == path && !facts.connected:
      actions += linkLost(serial, path: path)
    default:
      break
    }
    return actions
  }

  private mutating func handle(reply id: UInt64, _ call: BlueZCall, _ result: Result<DBusMessage, DBusError>)
    -> [Action]
  {
    switch call {
    case .getManagedObjects:
      guard service == .loading(id) else { return [] }
      guard case .success(let message) = result, let objects = BlueZSignal.managedObjects(message) else {
        service = .absent
        return []
      }
      service = .present
      load(objects)
      return []
    case .startDiscovery:
      guard discovery == .starting(id) else { return [] }
      switch result {
      case .success: discovery = .running
      case .failure(let error) where error.name == "org.bluez.Error.InProgress": discovery = .running
      case .failure:
        discovery = .idle
        return [.arm(.discoveryRetry, after: .seconds(1))]
      }
      return []
    case .stopDiscovery:
      if discovery == .stopping(id) { discovery = .idle }
      return []
    case .connect(let path):
      guard let serial = serialByPath[path], case .connecting(path, id?, let wasUp)? = links[serial] else { return [] }
      switch result {
      case .success:
        links[serial] = .connecting(path: path, call: nil, wasUp: wasUp)
        return completeIfReady(serial)
      case .failure(let error) where error.name == "org.bluez.Error.AlreadyConnected":
        links[serial] = .connecting(path: path, call: nil, wasUp: wasUp)
        return completeIfReady(serial)
      case .failure where restarting.contains(serial):
        return restartLost(serial, path: path, reason: nil, retryLater: true)
      case .failure(let error):
        links[serial] = nil
        return [
          .disarm(.connect(serial)),
          .emit(.didFailToConnect(serialNumber: serial, error: Self.connectError(error, serialNumber: serial))),
        ]
      }
    case .disconnect(let path):
      guard case .failure = result, let serial = serialByPath[path], links[serial] == .disconnecting(path: path) else {
        return []
      }
      // The reader was gone already (`NotConnected`): the link is down all the same.
      links[serial] = nil
      return [.emit(.didDisconnect(serialNumber: serial, reason: .disconnectRequested))]
    case .readValue:
      return detailRead(id, result)
    case .startNotify(let characteristic)
    where readings.values.contains { $0.reads[id]?.characteristic == characteristic }:
      return detailRead(id, result)
    case .writeCommand(let characteristic, let value):
      guard case .failure(let error) = result else { return [] }
      return smpWriteFailed(characteristic, value, error)
    case .setDiscoveryFilter, .startNotify:
      return []
    }
  }

  private mutating func fired(_ timer: Timer, now: Duration) -> [Action] {
    switch timer {
    case .busRetry:
      return service == .noBus ? [.openBus] : []
    case .discoveryRetry:
      return []  // `settle` starts discovery again if it is still wanted.
    case .restartRetry(let serial):
      return restartRetry(serial)
    case .connect(let serial):
      guard let link = links[serial], link.isOpening, let path = link.path else { return [] }
      if restarting.contains(serial) {
        return [call(.disconnect(device: path))] + restartLost(serial, path: path, reason: nil, retryLater: true)
      }
      links[serial] = nil
      forgetDetails(of: serial)
      let error = ReaderError(
        .bluetoothConnectTimedOut, "the reader did not finish connecting in time",
        context: ["serialNumber": serial, "timeout": configuration.connectTimeout.contextSeconds])
      return [call(.disconnect(device: path)), .emit(.didFailToConnect(serialNumber: serial, error: error))]
    case .refresh:
      refreshArmed = false
      return refresh(now: now)
    }
  }

  // MARK: Commands

  private mutating func connect(_ serial: String) -> [Action] {
    guard links[serial] == nil else { return [] }
    guard isRadioOn else {
      let error = ReaderError(.bluetoothDisabled, "Bluetooth is off", context: ["serialNumber": serial])
      return [.emit(.didFailToConnect(serialNumber: serial, error: error))]
    }
    guard let path = pathBySerial[serial] else {
      links[serial] = .locating
      return []
    }
    return startConnecting(serial, path: path)
  }

  mutating func startConnecting(_ serial: String, path: String) -> [Action] {
    let connect = call(.connect(device: path))
    guard case .call(let id, _) = connect else { return [] }
    links[serial] = .connecting(path: path, call: id, wasUp: false)
    reasons[path] = nil
    return [.arm(.connect(serial), after: configuration.connectTimeout), connect]
  }

  private mutating func disconnect(_ serial: String) -> [Action] {
    guard case .connected(let path)? = links[serial] else {
      forgetDetails(of: serial)
      if let path = links.removeValue(forKey: serial)?.path {
        return [.disarm(.connect(serial)), call(.disconnect(device: path))]
          + [.emit(.didDisconnect(serialNumber: serial, reason: .disconnectRequested))]
      }
      return [.emit(.didDisconnect(serialNumber: serial, reason: .disconnectRequested))]
    }
    links[serial] = .disconnecting(path: path)
    return [call(.disconnect(device: path))]
  }

  // MARK: Links

  private mutating func completeIfReady(_ serial: String) -> [Action] {
    guard case .connecting(let path, nil, _)? = links[serial],
      let properties = tree.properties(path, BlueZObjectTree.device)
    else { return [] }
    let facts = BlueZDeviceFacts(properties)
    guard facts.connected && facts.servicesResolved else { return [] }
    rebootExpected.remove(serial)
    return startReadingDetails(serial, path: path)
  }

  /// The link to `serial` on `path` ended (its device disconnected or disappeared).
  private mutating func linkLost(_ serial: String, path: String) -> [Action] {
    guard let link = links[serial], link.path == path else { return [] }
    let radioGoingOff = adapterFacts.map(\.isGoingOff) ?? true
    if !radioGoingOff && (expectations[serial] == .restart || restarting.contains(serial)) {
      let wasUp: Bool = if case .connected = link { true } else { false }
      return restartLost(serial, path: path, reason: reasons.removeValue(forKey: path), retryLater: !wasUp)
    }
    links[serial] = nil
    forgetDetails(of: serial)
    let down: [Action] = smpLinks.removeValue(forKey: serial) == nil ? [] : [.emitSMP(serial, .down)]
    let requested = link == .disconnecting(path: path)
    let mapped = Self.disconnectReason(
      reasons.removeValue(forKey: path), requested: requested, rebootExpected: rebootExpected.remove(serial) != nil,
      radioGoingOff: radioGoingOff)
    // A reboot the SMP link announced reads as `rebootRequested` whatever BlueZ says (a reset shows as
    // `Remote`, `Timeout` or nothing), unless the app disconnected or the radio went off.
    let smpReboot = expectations.removeValue(forKey: serial) == .reboot
    let reason = smpReboot && !requested && !radioGoingOff ? .rebootRequested : mapped
    switch link {
    case .connected, .disconnecting:
      return down + [.emit(.didDisconnect(serialNumber: serial, reason: reason))]
    case .connecting, .reading, .locating:
      let error = ReaderError(
        .connectionFailed, "the link dropped while connecting",
        context: ["serialNumber": serial, "reason": "\(reason)"])
      return [.disarm(.connect(serial)), .emit(.didFailToConnect(serialNumber: serial, error: error))]
    }
  }

  // MARK: Settling

  private var adapterFacts: BlueZAdapterFacts? {
    adapterPath.flatMap { tree.properties($0, BlueZObjectTree.adapter) }.map(BlueZAdapterFacts.init)
  }

  var isScanning: Bool {
    switch discovery {
    case .starting, .running: true
    case .idle, .stopping: false
    }
  }

  /// Brings the radio state, every link and discovery in line with the facts.
  private mutating func settle(now: Duration) -> [Action] {
    var actions: [Action] = []
    let radio = service == .present && adapterFacts?.isOn == true
    if radio != isRadioOn {
      isRadioOn = radio
      actions.append(.emit(.radioStateChanged(isPoweredOn: radio)))
      if !radio { actions += radioOff() }
    }
    let needed =
      radio && (scanWanted || links.values.contains(.locating))
      && !links.values.contains(where: \.isOpening)
    switch (discovery, needed, adapterPath) {
    case (.idle, true, let adapter?):
      let filter = call(.setDiscoveryFilter(adapter: adapter, uuids: configuration.serviceUUIDs))
      let start = call(.startDiscovery(adapter: adapter))
      if case .call(let id, _) = start { discovery = .starting(id) }
      actions += [filter, start]
    case (.running, false, let adapter?):
      let stop = call(.stopDiscovery(adapter: adapter))
      if case .call(let id, _) = stop { discovery = .stopping(id) }
      actions.append(stop)
    default:
      break
    }
    if isScanning && !refreshArmed {
      refreshArmed = true
      actions.append(.arm(.refresh, after: configuration.refreshInterval))
    } else if !isScanning && refreshArmed {
      refreshArmed = false
      actions.append(.disarm(.refresh))
    }
    return actions
  }

  /// The radio went off: every link ends, discovery with it.
  private mutating func radioOff() -> [Action] {
    var actions: [Action] = []
    for serial in restarting.sorted() where links[serial] == nil {
      actions += [
        .disarm(.restartRetry(serial)), .emit(.didDisconnect(serialNumber: serial, reason: .bluetoothDisabled)),
      ]
    }
    for serial in links.keys.sorted() {
      guard let link = links.removeValue(forKey: serial) else { continue }
      rebootExpected.remove(serial)
      forgetDetails(of: serial)
      expectations[serial] = nil
      if smpLinks.removeValue(forKey: serial) != nil { actions.append(.emitSMP(serial, .down)) }
      if restarting.remove(serial) != nil {
        actions += [.disarm(.connect(serial)), .emit(.didDisconnect(serialNumber: serial, reason: .bluetoothDisabled))]
        continue
      }
      switch link {
      case .connected:
        actions.append(.emit(.didDisconnect(serialNumber: serial, reason: .bluetoothDisabled)))
      case .disconnecting:
        actions.append(.emit(.didDisconnect(serialNumber: serial, reason: .disconnectRequested)))
      case .connecting, .reading, .locating:
        let error = ReaderError(.bluetoothDisabled, "Bluetooth was turned off", context: ["serialNumber": serial])
        actions += [.disarm(.connect(serial)), .emit(.didFailToConnect(serialNumber: serial, error: error))]
      }
    }
    if discovery != .idle { discovery = .idle }
    lastSeen = [:]
    restarting = []
    return actions
  }

  // MARK: Helpers

  mutating func call(_ call: BlueZCall) -> Action {
    let id = nextCall
    nextCall += 1
    pending[id] = call
    return .call(id, call)
  }

  /// Names the device at `path` (its serial number) and keeps both lookups current.
  private mutating func name(_ path: String) {
    guard let properties = tree.properties(path, BlueZObjectTree.device) else { return }
    let facts = BlueZDeviceFacts(properties)
    let serial = facts.address.flatMap { configuration.serialNumbers[$0] } ?? facts.name ?? facts.alias ?? facts.address
    if let old = serialByPath[path], old != serial, pathBySerial[old] == path { pathBySerial[old] = nil }
    serialByPath[path] = serial
    if let serial { pathBySerial[serial] = path }
  }

  func isReader(_ path: String, _ facts: BlueZDeviceFacts) -> Bool {
    guard let adapter = adapterPath, path.hasPrefix(adapter + "/") else { return false }
    return configuration.serviceUUIDs.isEmpty || facts.uuids.contains { configuration.serviceUUIDs.contains($0) }
  }

  func advertisement(_ serial: String, _ facts: BlueZDeviceFacts) -> Advertisement? {
    guard let rssi = facts.rssi else { return nil }
    return Advertisement(
      serialNumber: serial, deviceType: deviceType(of: serial), signalStrength: rssi,
      info: ReaderInfo())
  }
}
