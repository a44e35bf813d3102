import Foundation
import ReaderCore
import ReaderSimulator

/// Simulated readers on the built-in simulator and real readers on a platform backend, behind one
/// radio and one reader link: what `Terminal.shared` runs on where a backend exists.
///
/// A reader is simulated when the simulated world holds its serial number; its commands go to the
/// world, everything else to the backend. A scan goes to the side the terminal asks for
/// (`startScan(simulated:)`), and only that side's advertisements and radio state reach the terminal
/// (a simulated discovery never lists a real reader, and the backend's radio being off does not end it);
/// link events come from whichever side holds the reader.
final class RoutingBluetoothCentral: ReaderKindRouting, ReaderLink, Sendable {
  private struct State {
    /// The side the terminal works with now: the last scan's or connect's.
    var simulatedActive = true
    /// The side scanning, if one is.
    var scanning: Bool?
    var handler: (@Sendable (BluetoothEvent) -> Void)?
  }

  private let world: SimulatedBluetoothCentral
  private let real: any BluetoothCentral
  private let realLink: any ReaderLink
  private let state = Locked(State())

  init(world: SimulatedBluetoothCentral, real: any BluetoothCentral, realLink: any ReaderLink) {
    self.world = world
    self.real = real
    self.realLink = realLink
  }

  private func isSimulated(_ serialNumber: String) -> Bool { world.reader(serialNumber) != nil }

  func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) {
    state.withLock { $0.handler = handler }
    world.setEventHandler { [self] event in forward(event, fromSimulator: true) }
    real.setEventHandler { [self] event in forward(event, fromSimulator: false) }
  }

  private func forward(_ event: BluetoothEvent, fromSimulator: Bool) {
    let handler = state.withLock { state -> (@Sendable (BluetoothEvent) -> Void)? in
      switch event {
      case .advertisement: state.scanning == fromSimulator ? state.handler : nil
      case .radioStateChanged: state.simulatedActive == fromSimulator ? state.handler : nil
      case .didConnect, .didFailToConnect, .didDisconnect: state.handler
      }
    }
    handler?(event)
  }

  var isPoweredOn: Bool {
    state.withLock { $0.simulatedActive } ? world.isPoweredOn : real.isPoweredOn
  }

  func startScan(simulated: Bool) {
    let previous = state.withLock { state -> Bool? in
      defer {
        state.simulatedActive = simulated
        state.scanning = simulated
      }
      return state.scanning
    }
    if let previous, previous != simulated { side(previous).stopScan() }
    side(simulated).startScan()
  }

  func startScan() { startScan(simulated: state.withLock { $0.simulatedActive }) }

  func stopScan() {
    guard let scanning = state.withLock({ $0.scanning.take() }) else { return }
    side(scanning).stopScan()
  }

  func connect(serialNumber: String) {
    let simulated = isSimulated(serialNumber)
    state.withLock { $0.simulatedActive = simulated }
    side(simulated).connect(serialNumber: serialNumber)
  }

  func cancelConnect(serialNumber: String) { side(isSimulated(serialNumber)).cancelConnect(serialNumber: serialNumber) }
  func disconnect(serialNumber: String) { side(isSimulated(serialNumber)).disconnect(serialNumber: serialNumber) }

  private func side(_ simulated: Bool) -> any BluetoothCentral { simulated ? world : real }
  private func link(_ serialNumber: String) -> any ReaderLink { isSimulated(serialNumber) ? world : realLink }

  // MARK: ReaderLink

  func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {
    world.setLinkEventHandler(handler)
    realLink.setLinkEventHandler(handler)
  }

  func flashLEDs(serialNumber: String) { link(serialNumber).flashLEDs(serialNumber: serialNumber) }
  func reboot(serialNumber: String) { link(serialNumber).reboot(serialNumber: serialNumber) }
  func cancelUpdate(serialNumber: String) { link(serialNumber).cancelUpdate(serialNumber: serialNumber) }

  func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?) {
    link(serialNumber).installUpdate(serialNumber: serialNumber, update: update, image: image)
  }
}
