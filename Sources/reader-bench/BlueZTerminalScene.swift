#if canImport(BlueZ)
  import BlueZ
  import DBus
  import Foundation
  import ReaderKit

  /// BlueZ's `PropertiesChanged` messages decoded, run through `BlueZCentralStateMachine` and handed as
  /// advertisements to a scanning `Terminal` on a `VirtualClock`, up to its delegate's
  /// `didUpdateDiscoveredReaders`: the whole path of an advertisement on Linux but the socket. Message `i`
  /// arrives at `i` ms; each 100 ms of them is one work item on the clock, as the bus's reader thread
  /// hands over what it read.
  nonisolated final class BlueZTerminalScene: BluetoothCentral, ReaderLink, DiscoveryDelegate, @unchecked Sendable {
    // Only touched on the thread that drives the virtual clock.
    private let clock = VirtualClock()
    private var machine = BlueZCentralStateMachine(configuration: BlueZConfiguration())
    private var handler: @Sendable (BluetoothEvent) -> Void = { _ in }
    private let frames: [[UInt8]]
    private var terminal: Terminal?
    private var discovery: Cancelable?
    private(set) var advertisements = 0
    private(set) var updates = 0
    private(set) var listed = 0

    init(frames: [[UInt8]], objects: BlueZObjects) {
      self.frames = frames
      _ = machine.handle(.busOpened(objects), now: .zero)
      let terminal = Terminal(
        central: self, scheduler: clock, store: InMemoryReaderStore(), tuning: DiscoveryTuning(), seed: 19)
      self.terminal = terminal
      let scan = try! BluetoothScanDiscoveryConfiguration.Builder().build()
      discovery = terminal.discoverReaders(scan, delegate: self) { _ in }
      clock.runUntilIdle()
      var start = 0
      while start < frames.count {
        let batch = start..<min(start + 100, frames.count)
        clock.schedule(after: .milliseconds(Int64(start))) { [self] in deliver(batch) }
        start = batch.upperBound
      }
    }

    /// The timed part: the clock runs through every message.
    func run() {
      clock.advance(by: .milliseconds(Int64(frames.count) + 1_000))
    }

    /// Stops the scan and checks that every message became an advertisement the terminal listed.
    func finish(readers: Int) {
      precondition(advertisements == frames.count, "every RSSI change is an advertisement")
      precondition(updates > 0 && listed == readers, "the terminal lists every reader")
      discovery?.cancel()
      clock.runUntilIdle()
      terminal = nil
    }

    private func deliver(_ range: Range<Int>) {
      for index in range {
        guard let message = try? DBusMessage.decode(frames[index]), let signal = BlueZSignal(message) else { continue }
        emit(machine.handle(.signal(signal), now: clock.elapsed))
      }
    }

    private func emit(_ actions: [BlueZCentralStateMachine.Action]) {
      for case .emit(let event) in actions {
        if case .advertisement = event { advertisements += 1 }
        handler(event)
      }
    }

    func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
      updates += 1
      listed = readers.count
    }

    // BluetoothCentral: the scan starts at once (BlueZ's StartDiscovery answered).
    func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) { self.handler = handler }
    var isPoweredOn: Bool { machine.isRadioOn }
    func startScan() {
      for case .call(let id, .startDiscovery) in machine.handle(.startScan, now: clock.elapsed) {
        _ = machine.handle(
          .reply(id, .success(DBusMessage(kind: .methodReturn, serial: 1, replySerial: 1))), now: clock.elapsed)
      }
    }
    func stopScan() { _ = machine.handle(.stopScan, now: clock.elapsed) }
    func connect(serialNumber: String) {}
    func cancelConnect(serialNumber: String) {}
    func disconnect(serialNumber: String) {}
    // ReaderLink: nothing to command while scanning.
    func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {}
    func flashLEDs(serialNumber: String) {}
    func reboot(serialNumber: String) {}
    func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?) {}
    func cancelUpdate(serialNumber: String) {}
  }
#endif
