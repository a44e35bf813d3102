import ReaderCore
import ReaderKit
import ReaderSimulator

/// Connects to the nearest reader a scan lists, and scans again a minute after every final disconnect
/// or failed connect: an app whose every action follows from what the terminal reports.
nonisolated final class NearestReaderConnector: DiscoveryDelegate {
  private let claimed = Locked(false)
  private let terminal: Terminal
  private let clock: VirtualClock
  private let scanConfiguration: BluetoothScanDiscoveryConfiguration
  private let connectionConfiguration: BluetoothConnectionConfiguration
  let delegate = ReaderRecorder()

  init(terminal: Terminal, clock: VirtualClock, locationId: String) throws {
    self.terminal = terminal
    self.clock = clock
    scanConfiguration = try BluetoothScanDiscoveryConfiguration.Builder().setTimeout(20).setSimulated(true).build()
    connectionConfiguration = try BluetoothConnectionConfiguration.Builder(delegate: delegate, locationId: locationId)
      .build()
    terminal.addEventObserver { [self] event in
      if case .didDisconnect = event.kind { clock.schedule(after: .seconds(60)) { [self] in scan() } }
    }
  }

  func scan() {
    claimed.withLock { $0 = false }
    terminal.discoverReaders(scanConfiguration, delegate: self) { [self] _ in
      if !claimed.withLock({ $0 }) { clock.schedule(after: .seconds(60)) { [self] in self.scan() } }
    }
  }

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    guard let nearest = readers.first,
      claimed.withLock({ claimed in
        defer { claimed = true }
        return !claimed
      })
    else { return }
    terminal.connectReader(nearest, connectionConfig: connectionConfiguration) { [self] result in
      if case .failure = result { clock.schedule(after: .seconds(60)) { [self] in scan() } }
    }
  }

  /// The app's run on `terminal`: scans and connects, reboots the reader half an hour in; `drive`
  /// moves the clock. Returns the terminal's event log and the delegate's calls.
  static func transcript(
    _ terminal: Terminal, clock: VirtualClock, locationId: String, drive: () -> Void
  ) throws -> String {
    let log = EventLog(terminal)
    let connector = try NearestReaderConnector(terminal: terminal, clock: clock, locationId: locationId)
    connector.scan()
    clock.schedule(after: .seconds(1800)) { terminal.rebootReader { _ in } }
    drive()
    return ([log.rendered(), "-- delegate"] + connector.delegate.calls.map(\.description)).joined(separator: "\n")
  }
}
