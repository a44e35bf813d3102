import DBus
import ReaderCore

/// A reader's details over standard GATT, read once its services are resolved and before the
/// connect completes: the Device Information Service's strings (serial number, model number, firmware
/// and hardware revisions, manufacturer), reported as the reader's `DeviceInformation`, its firmware
/// revision as the software version and its model number as the model; the battery level from the
/// Battery Service (whose notifications then report the battery while the link is up). A reader that
/// exposes none of them connects all the same, its details unknown; a read that fails, or a string
/// that is not valid (see `DeviceInformation.text`), leaves that detail unknown.
extension BlueZCentralStateMachine {
  /// A detail and the characteristic that holds it.
  enum Detail: Equatable, Sendable {
    /// DIS Model Number String (0x2A24).
    case model
    /// DIS Serial Number String (0x2A25).
    case serialNumber
    /// DIS Firmware Revision String (0x2A26).
    case firmwareRevision
    /// DIS Hardware Revision String (0x2A27).
    case hardwareRevision
    /// DIS Manufacturer Name String (0x2A29).
    case manufacturerName
    /// BAS Battery Level (0x2A19), a percentage.
    case batteryLevel
    /// The SMP characteristic, whose notifications are switched on (`StartNotify`), not read.
    case smp

    static let byUUID: [String: Detail] = [
      "00002a24-0000-1000-8000-00805f9b34fb": .model,
      "00002a25-0000-1000-8000-00805f9b34fb": .serialNumber,
      "00002a26-0000-1000-8000-00805f9b34fb": .firmwareRevision,
      "00002a27-0000-1000-8000-00805f9b34fb": .hardwareRevision,
      "00002a29-0000-1000-8000-00805f9b34fb": .manufacturerName,
      "00002a19-0000-1000-8000-00805f9b34fb": .batteryLevel,
      BlueZCentralStateMachine.smpCharacteristicUUID: .smp,
    ]
  }

  /// The details of one reader being read.
  struct Reading: Sendable {
    var path: String
    var reads: [UInt64: (detail: Detail, characteristic: String)]
    var info = ReaderInfo()
    var dis = DeviceInformation()
    var batteryNotifier: String?
    /// The SMP characteristic and the longest write it takes, once its notifications are on.
    var smp: (characteristic: String, maximumWriteLength: Int)?
  }

  /// The model of a reader: the configured one, else the one its DIS reported, else the configuration's rule.
  func deviceType(of serial: String) -> DeviceType {
    configuration.deviceTypes[serial] ?? learnedModels[serial] ?? configuration.deviceType(forSerialNumber: serial)
  }

  /// Services are resolved: read the details the reader has, or complete the connect if it has none.
  mutating func startReadingDetails(_ serial: String, path: String) -> [Action] {
    var reading = Reading(path: path, reads: [:])
    var actions: [Action] = []
    for characteristic in tree.characteristics(of: path) {
      guard let detail = Detail.byUUID[characteristic.uuid] else { continue }
      let read = call(
        detail == .smp
          ? .startNotify(characteristic: characteristic.path) : .readValue(characteristic: characteristic.path))
      guard case .call(let id, _) = read else { continue }
      reading.reads[id] = (detail, characteristic.path)
      actions.append(read)
      let flags = tree.properties(characteristic.path, BlueZObjectTree.characteristic)?["Flags"]?.stringArray ?? []
      if detail == .batteryLevel && flags.contains("notify") { reading.batteryNotifier = characteristic.path }
    }
    guard !actions.isEmpty else { return finishReading(serial, reading) }
    links[serial] = .reading(path: path)
    readings[serial] = reading
    return actions
  }

  /// A detail's read answered (or failed: the detail stays unknown).
  mutating func detailRead(_ id: UInt64, _ result: Result<DBusMessage, DBusError>) -> [Action] {
    guard let serial = readings.first(where: { $0.value.reads[id] != nil })?.key,
      var reading = readings.removeValue(forKey: serial),
      let (detail, characteristic) = reading.reads.removeValue(forKey: id)
    else { return [] }
    if detail == .smp, case .failure(let error) = result {
      return smpRefused(serial, path: reading.path, error)
    }
    if detail == .smp, case .success = result {
      let mtu = tree.properties(characteristic, BlueZObjectTree.characteristic)?["MTU"]?.int ?? 23
      reading.smp = (characteristic, max(20, min(mtu, 517) - 3))
    } else if case .success(let reply) = result, let bytes = reply.body.first?.byteArray {
      let text = DeviceInformation.text(bytes)
      switch detail {
      case .model: reading.dis.modelNumber = text
      case .serialNumber: reading.dis.serialNumber = text
      case .firmwareRevision: reading.dis.firmwareRevision = text
      case .hardwareRevision: reading.dis.hardwareRevision = text
      case .manufacturerName: reading.dis.manufacturerName = text
      case .batteryLevel: reading.info.batteryLevel = Self.batteryLevel(bytes)
      case .smp: break
      }
    }
    guard reading.reads.isEmpty else {
      readings[serial] = reading
      return []
    }
    return finishReading(serial, reading)
  }

  /// The SMP characteristic refused its notifications (`StartNotify` failed: a reader whose
  /// characteristic needs an authenticated link and has no bond with this host answers
  /// `NotPermitted`, `NotAuthorized` or `AuthenticationFailed`). Without them no command reaches the
  /// reader, so the connect fails with BlueZ's error as its cause and the link is closed; during a
  /// hidden restart the device is tried again as after any failed reconnection.
  private mutating func smpRefused(_ serial: String, path: String, _ error: DBusError) -> [Action] {
    if restarting.contains(serial) {
      return [call(.disconnect(device: path))] + restartLost(serial, path: path, reason: nil, retryLater: true)
    }
    links[serial] = nil
    forgetDetails(of: serial)
    let failure = ReaderError(
      .connectionFailed, "the reader's SMP characteristic refused notifications (\(error.name))",
      context: ["serialNumber": serial], cause: .dbus(name: error.name, message: error.message))
    return [
      .disarm(.connect(serial)), call(.disconnect(device: path)),
      .emit(.didFailToConnect(serialNumber: serial, error: failure)),
    ]
  }

  /// Every detail is in: the link is up. The SMP transport is ready first; the terminal hears
  /// `didConnect` then, unless this was the reader's restart into a new image, which it never saw.
  private mutating func finishReading(_ serial: String, _ reading: Reading) -> [Action] {
    links[serial] = .connected(path: reading.path)
    var reading = reading
    if let model = reading.dis.modelNumber { learnedModels[serial] = DeviceType(modelName: model) }
    reading.info.deviceSoftwareVersion = reading.dis.firmwareRevision
    reading.info.deviceInformation = reading.dis.isEmpty ? nil : reading.dis
    var actions: [Action] = [.disarm(.connect(serial))]
    if let notifier = reading.batteryNotifier {
      batteryNotifiers[notifier] = serial
      actions.append(call(.startNotify(characteristic: notifier)))
    }
    if let smp = reading.smp {
      smpLinks[serial] = SMPLink(characteristic: smp.characteristic, maximumWriteLength: smp.maximumWriteLength)
      actions.append(.emitSMP(serial, .ready(maximumWriteLength: smp.maximumWriteLength)))
    }
    if restarting.remove(serial) != nil { return actions }
    return actions + [.emit(.didConnect(serialNumber: serial, info: reading.info))]
  }

  /// A characteristic's value changed: a battery notification from a connected reader is reported.
  mutating func characteristicChanged(_ path: String, _ changed: BlueZProperties) -> [Action] {
    if let serial = smpLinks.first(where: { $0.value.characteristic == path })?.key, case .connected? = links[serial],
      let bytes = changed["Value"]?.byteArray
    {
      return [.emitSMP(serial, .received(bytes))]
    }
    guard let serial = batteryNotifiers[path], case .connected? = links[serial],
      let bytes = changed["Value"]?.byteArray, let level = Self.batteryLevel(bytes)
    else { return [] }
    return [.emitLink(.batteryDidChange(serialNumber: serial, level: level, isCharging: false))]
  }

  /// Forgets what was being read or notified for a reader whose link ended.
  mutating func forgetDetails(of serial: String) {
    readings[serial] = nil
    for (path, owner) in batteryNotifiers where owner == serial { batteryNotifiers[path] = nil }
  }

  /// A Battery Level value in `0...1`; nil for an empty value or one above 100 %.
  static func batteryLevel(_ bytes: [UInt8]) -> Double? {
    guard let percent = bytes.first, percent <= 100 else { return nil }
    return Double(percent) / 100
  }
}
