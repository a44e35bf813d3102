import Foundation
import ReaderCore

/// Sits between a terminal and its transports — any `BluetoothCentral` and `ReaderLink`, real or
/// simulated — and writes down every command the terminal gives them and every event they report,
/// with its time, as `TransportRecord` lines: a field run becomes a file that `ReplayingTransport`
/// plays back on a `VirtualClock`.
///
/// The terminal sees the radio's state as the events report it: `isPoweredOn` is the wrapped radio's
/// at creation, then follows the `radioStateChanged` events passed on, so that a replay, which knows
/// only the events, answers it the same way at every instant.
///
/// ```swift
/// let recorder = RecordingTransport(central: central, link: central, scheduler: clock, origin: clock.elapsed) {
///   line in file.write(line + "\n")
/// }
/// let terminal = Terminal(central: recorder, readerLink: recorder, scheduler: clock)
/// ```
public final class RecordingTransport: BluetoothCentral, ReaderLink, Sendable {
  private struct State {
    var handler: (@Sendable (BluetoothEvent) -> Void)?
    var linkHandler: (@Sendable (ReaderLinkEvent) -> Void)?
    var isPoweredOn: Bool
  }

  private let central: any BluetoothCentral
  private let link: any ReaderLink
  private let scheduler: any Scheduler
  private let origin: Duration
  private let write: @Sendable (String) -> Void
  private let state: Locked<State>

  /// Records what passes between a terminal and `central` and `link`.
  /// - Parameters:
  ///   - scheduler: the terminal's scheduler; times are its `elapsed` less `origin`.
  ///   - origin: the scheduler's time at the start of the recording.
  ///   - write: receives each line (without a newline), on the scheduler, in order.
  public init(
    central: any BluetoothCentral, link: any ReaderLink, scheduler: any Scheduler, origin: Duration,
    write: @escaping @Sendable (String) -> Void
  ) {
    self.central = central
    self.link = link
    self.scheduler = scheduler
    self.origin = origin
    self.write = write
    self.state = Locked(State(isPoweredOn: central.isPoweredOn))
  }

  /// The radio's state when recording started, for the header.
  public var initialPowerState: Bool { central.isPoweredOn }

  private var now: Duration { scheduler.elapsed - origin }

  private func record(_ command: TransportCommand) {
    write(TransportRecord.command(at: now, command).line)
  }

  // MARK: BluetoothCentral

  public func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) {
    state.withLock { $0.handler = handler }
    central.setEventHandler { [self] event in
      write(TransportRecord.event(at: now, .central(event)).line)
      let handler = state.withLock { state -> (@Sendable (BluetoothEvent) -> Void)? in
        if case .radioStateChanged(let on) = event { state.isPoweredOn = on }
        return state.handler
      }
      handler?(event)
    }
  }

  public var isPoweredOn: Bool { state.withLock { $0.isPoweredOn } }

  public func startScan() {
    record(.startScan)
    central.startScan()
  }

  public func stopScan() {
    record(.stopScan)
    central.stopScan()
  }

  public func connect(serialNumber: String) {
    record(.connect(serialNumber: serialNumber))
    central.connect(serialNumber: serialNumber)
  }

  public func cancelConnect(serialNumber: String) {
    record(.cancelConnect(serialNumber: serialNumber))
    central.cancelConnect(serialNumber: serialNumber)
  }

  public func disconnect(serialNumber: String) {
    record(.disconnect(serialNumber: serialNumber))
    central.disconnect(serialNumber: serialNumber)
  }

  // MARK: ReaderLink

  public func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {
    state.withLock { $0.linkHandler = handler }
    link.setLinkEventHandler { [self] event in
      write(TransportRecord.event(at: now, .link(event)).line)
      state.withLock { $0.linkHandler }?(event)
    }
  }

  public func flashLEDs(serialNumber: String) {
    record(.flashLEDs(serialNumber: serialNumber))
    link.flashLEDs(serialNumber: serialNumber)
  }

  public func reboot(serialNumber: String) {
    record(.reboot(serialNumber: serialNumber))
    link.reboot(serialNumber: serialNumber)
  }

  public func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?) {
    record(
      .installUpdate(
        serialNumber: serialNumber, update: update, imageSize: image?.count,
        imageSHA256: image.map { SHA256Checksum.compute($0) }))
    link.installUpdate(serialNumber: serialNumber, update: update, image: image)
  }

  public func cancelUpdate(serialNumber: String) {
    record(.cancelUpdate(serialNumber: serialNumber))
    link.cancelUpdate(serialNumber: serialNumber)
  }
}
