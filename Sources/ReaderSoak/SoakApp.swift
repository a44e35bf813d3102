import ReaderKit
import ReaderSimulator

/// The point-of-sale app of one launch on a station: it reconnects to its saved reader at launch, keeps
/// a reader connected (discovering and connecting again after a final disconnect, switching a reader on
/// when it finds it off, as a person would), installs optional updates now and then, and carries out
/// the merchant's commands the fault schedule gives it.
///
/// Every decision is drawn from its seed and everything runs on the clock, so a run replays exactly.
/// Once its process is dead it ignores everything: a killed app neither hears nor acts.
nonisolated final class SoakApp: DiscoveryDelegate, MobileReaderDelegate, @unchecked Sendable {
  // Confined to the thread that drives the clock.
  let terminal: Terminal
  let process: SoakProcess
  private unowned let station: SoakStation
  private var random: SeededRandom

  /// The index, in the station's readers, of the reader the merchant wants.
  var target: Int
  /// The reconnect at launch is under way.
  private(set) var launching = false
  /// The automatic-reconnection setting of the connect under way (or of the last one).
  private(set) var pendingAutoReconnect = true
  /// The run is winding down: the app takes no new initiative.
  var winding = false

  private var seeking = false
  private var scan: Cancelable?
  private var connectHandle: Cancelable?
  private var reconnectHandle: Cancelable?
  private var installHandle: Cancelable?
  private var retry: ScheduledWork?
  private var switching = false
  /// How many completions each command handed to the terminal has had, by command number.
  private var completions: [Int] = []

  init(station: SoakStation, process: SoakProcess, terminal: Terminal, target: Int, seed: UInt64) {
    self.station = station
    self.process = process
    self.terminal = terminal
    self.target = target
    self.random = SeededRandom(seed: seed)
  }

  private var clock: VirtualClock { station.clock }
  private var alive: Bool { process.isAlive }
  private var targetSerial: String { station.serials[target] }

  /// Commands whose completion never ran, and commands whose completion ran more than once.
  var unbalancedCompletions: (missing: [Int], repeated: [Int]) {
    (completions.indices.filter { completions[$0] == 0 }, completions.indices.filter { completions[$0] > 1 })
  }

  // MARK: The app's own routine

  /// The app starts: it reconnects to the reader saved by its last run, if any.
  func launch() {
    launching = true
    pendingAutoReconnect = random.nextUnit() < 0.9
    let handle = counted { [self] (result: Result<Reader?, ReaderError>) in
      guard alive else { return }
      launching = false
      connectHandle = nil
      switch result {
      case .success(let reader?):
        if let index = station.serials.firstIndex(of: reader.serialNumber) { target = index }
      case .success(nil): seekSoon(.seconds(1))
      case .failure: seekSoon(seconds(5, 120))
      }
    }
    connectHandle = terminal.reconnectToSavedReader(
      delegate: self, autoReconnectOnUnexpectedDisconnect: pendingAutoReconnect, timeout: .seconds(30),
      completion: handle)
  }

  private func seekSoon(_ delay: Duration) {
    guard alive, !winding else { return }
    if let retry { clock.cancel(retry) }
    retry = clock.schedule(after: delay) { [self] in
      retry = nil
      seek()
    }
  }

  /// Discovers, then connects the reader the merchant wants once it is heard.
  private func seek() {
    guard alive, !winding, !seeking, !launching, connectHandle == nil,
      [.notConnected, .discovering].contains(terminal.connectionStatus)
    else { return }
    guard
      let configuration = try? BluetoothScanDiscoveryConfiguration.Builder().setTimeout(20).setSimulated(true).build()
    else { return }
    station.switchOnIfOff(target)
    seeking = true
    scan = terminal.discoverReaders(
      configuration, delegate: self,
      completion: counted { [self] (_: ReaderError?) in
        guard alive else { return }
        scan = nil
        guard seeking, connectHandle == nil else { return }
        seeking = false
        seekSoon(seconds(30, 300))
      })
  }

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    guard alive, seeking, connectHandle == nil, let reader = readers.first(where: { $0.serialNumber == targetSerial })
    else { return }
    pendingAutoReconnect = random.nextUnit() < 0.9
    guard
      let configuration = try? BluetoothConnectionConfiguration.Builder(delegate: self, locationId: station.location)
        .setAutoReconnectOnUnexpectedDisconnect(pendingAutoReconnect).build()
    else { return }
    connectHandle = terminal.connectReader(
      reader, connectionConfig: configuration,
      completion: counted { [self] (result: Result<Reader, ReaderError>) in
        guard alive else { return }
        connectHandle = nil
        seeking = false
        if case .failure = result { seekSoon(seconds(10, 120)) }
      })
  }

  // MARK: MobileReaderDelegate

  func reader(_ reader: Reader, didDisconnect reason: DisconnectReason) {
    guard alive else { return }
    reconnectHandle = nil
    installHandle = nil
    seekSoon(switching ? .seconds(1) : seconds(10, 300))
    switching = false
  }

  func reader(_ reader: Reader, didStartReconnect cancelable: Cancelable, disconnectReason: DisconnectReason) {
    guard alive else { return }
    reconnectHandle = cancelable
  }

  func readerDidSucceedReconnect(_ reader: Reader) {
    guard alive else { return }
    reconnectHandle = nil
  }

  func readerDidFailReconnect(_ reader: Reader) {
    guard alive else { return }
    reconnectHandle = nil
  }

  func reader(_ reader: Reader, didReportAvailableUpdate update: ReaderSoftwareUpdate) {
    guard alive, !winding, random.nextUnit() < 0.5 else { return }
    // The merchant installs it later, between two sales.
    clock.schedule(after: seconds(60, 3 * 3600)) { [self] in
      guard alive, !winding, terminal.connectionStatus == .connected else { return }
      installUpdate()
    }
  }

  func reader(_ reader: Reader, didStartInstallingUpdate update: ReaderSoftwareUpdate, cancelable: Cancelable?) {
    guard alive else { return }
    installHandle = cancelable
  }

  func reader(_ reader: Reader, didFinishInstallingUpdate update: ReaderSoftwareUpdate?, error: (any Error)?) {
    guard alive else { return }
    installHandle = nil
    guard (error as? ReaderError)?.code == .readerSoftwareUpdateFailedBatteryLow else { return }
    // "Charge it": the merchant puts the reader on its charger a little later.
    let serial = reader.serialNumber
    clock.schedule(after: seconds(60, 600)) { [station] in station.putOnCharger(serial) }
  }

  // MARK: The merchant's commands

  /// Carries out a command of the fault schedule.
  func command(_ action: SoakAction) {
    guard alive else { return }
    switch action.kind {
    case .reboot: terminal.rebootReader(completion: counted { (_: ReaderError?) in })
    case .disconnect: terminal.disconnectReader(completion: counted { (_: ReaderError?) in })
    case .installUpdate: installUpdate()
    case .cancelInstall: installHandle?.cancel()
    case .cancelReconnect: reconnectHandle?.cancel()
    case .cancelConnect: connectHandle?.cancel()
    case .switchReader:
      let next = (action.target ?? target) % station.serials.count
      guard next != target else { return }
      target = next
      switch terminal.connectionStatus {
      case .connected:
        switching = true
        terminal.disconnectReader(completion: counted { (_: ReaderError?) in })
      case .reconnecting:
        switching = true
        reconnectHandle?.cancel()
      case .connecting, .discovering, .notConnected:
        break  // The next search looks for the new reader.
      }
    default:
      break
    }
  }

  private func installUpdate() {
    terminal.installAvailableUpdate(completion: counted { (_: ReaderError?) in })
  }

  // MARK: Helpers

  /// A completion that counts its calls, so a lost or repeated completion shows.
  private func counted<T>(_ body: @escaping @Sendable (T) -> Void) -> @Sendable (T) -> Void {
    let id = completions.count
    completions.append(0)
    return { [self] value in
      completions[id] += 1
      body(value)
    }
  }

  private func seconds(_ low: Int64, _ high: Int64) -> Duration {
    SoakFault.between(.seconds(low), .seconds(high), &random)
  }
}
