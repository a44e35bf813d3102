import DBus
import MCUmgr
import ReaderCore

/// The SMP channel of each connected reader (MCUmgr's SMP over GATT), as `SMPTransport` specifies it:
/// ready (notifications on, the longest write known) before the terminal hears `didConnect`, every
/// notification delivered, `down` before `didDisconnect`; writes without response; and the link
/// losses the SMP link announces — a reboot (reported as `rebootRequested` whatever BlueZ says) and a
/// restart into a new image (kept from the terminal while the device is reconnected, again and again,
/// until it is back or the SMP link stops waiting).
extension BlueZCentralStateMachine {
  /// The SMP characteristic (Zephyr's "SMP transport over Bluetooth"), lowercased as BlueZ reports UUIDs.
  static let smpCharacteristicUUID = SMPGATT.characteristicUUID.lowercased()
  /// The pause before a restarting reader is connected again after an attempt failed.
  static let restartRetryDelay = Duration.seconds(1)

  /// A connected reader's SMP characteristic.
  struct SMPLink: Equatable, Sendable {
    var characteristic: String
    var maximumWriteLength: Int
  }

  /// The longest write the reader's SMP link takes now, or nil while it is not ready.
  package func maximumWriteLength(of serial: String) -> Int? {
    guard case .connected? = links[serial] else { return nil }
    return smpLinks[serial]?.maximumWriteLength
  }

  /// One write without response to the reader's SMP characteristic; dropped while it is not ready.
  mutating func smpSend(_ serial: String, _ bytes: [UInt8]) -> [Action] {
    guard case .connected? = links[serial], let smp = smpLinks[serial] else { return [] }
    return [call(.writeCommand(characteristic: smp.characteristic, value: bytes))]
  }

  /// A write to a reader's SMP characteristic failed: its SMP link hears of it with BlueZ's error, so
  /// the request it carried fails at once with the D-Bus error's name rather than timing out.
  mutating func smpWriteFailed(_ characteristic: String, _ value: [UInt8], _ error: DBusError) -> [Action] {
    guard let serial = smpLinks.first(where: { $0.value.characteristic == characteristic })?.key else { return [] }
    return [.emitSMP(serial, .sendFailed(value, .dbus(name: error.name, message: error.message)))]
  }

  /// The SMP link says how to read the reader's next link loss; clearing it while a restart waits for
  /// the reader means it stopped waiting: the loss it hid is reported now.
  mutating func expectLinkLoss(_ serial: String, _ expectation: SMPLinkLossExpectation?) -> [Action] {
    expectations[serial] = expectation
    guard expectation == nil, restarting.contains(serial) else { return [] }
    guard links[serial].map({ if case .connected = $0 { false } else { true } }) ?? true else {
      restarting.remove(serial)
      return []
    }
    restarting.remove(serial)
    var actions: [Action] = [.disarm(.connect(serial)), .disarm(.restartRetry(serial))]
    if let path = links.removeValue(forKey: serial)?.path { actions.append(call(.disconnect(device: path))) }
    forgetDetails(of: serial)
    let reason = Self.disconnectReason(
      lostReasons.removeValue(forKey: serial), requested: false, rebootExpected: false, radioGoingOff: false)
    return actions + [.emit(.didDisconnect(serialNumber: serial, reason: reason))]
  }

  /// The link of a reader expected to restart went down (or an attempt to win it back failed): connect
  /// to the same device again, now or after a pause.
  mutating func restartLost(_ serial: String, path: String, reason: String?, retryLater: Bool) -> [Action] {
    restarting.insert(serial)
    if let reason { lostReasons[serial] = reason }
    links[serial] = nil
    forgetDetails(of: serial)
    var actions: [Action] = [.disarm(.connect(serial))]
    if let smp = smpLinks.removeValue(forKey: serial) {
      _ = smp
      actions.append(.emitSMP(serial, .down))
    }
    guard !retryLater else { return actions + [.arm(.restartRetry(serial), after: Self.restartRetryDelay)] }
    return actions + startConnecting(serial, path: path)
  }

  /// A restart's pause is over: try the device again.
  mutating func restartRetry(_ serial: String) -> [Action] {
    guard restarting.contains(serial), links[serial] == nil, let path = pathBySerial[serial] else { return [] }
    return startConnecting(serial, path: path)
  }
}
