/// One discovery, scan or proximity, from start to finish.
///
/// The driver forwards advertisements and ticks; the machine keeps the table of sightings and says
/// when to report, flash a reader's LEDs and finish. Reporting rule (scan): every `updateInterval`
/// the table is pruned of readers silent for `stalenessWindow`, sorted by signal strength (strongest
/// first, ties by serial number), and reported only if the list differs from the last report in
/// membership, order or details; a change in signal strength alone that keeps the order is not
/// reported. So a burst of advertisements yields at most one update per interval.
package struct DiscoveryStateMachine {
  package enum Timer: Hashable, Sendable {
    case tick
    case timeout
    case proximityDetails
  }

  package enum Action: Equatable, Sendable {
    case startScan
    case stopScan
    case arm(Timer, after: Duration)
    case disarm(Timer)
    case report([Reader])
    case flashLEDs(serialNumber: String)
    /// The discovery ended: `nil` is success.
    case finish(ReaderError?)
  }

  private struct Sighting: Equatable {
    var advertisement: Advertisement
    var lastSeen: Duration
  }

  /// Proximity's progress with the reader it picked.
  private enum Pick: Equatable {
    /// No reader picked yet.
    case searching
    /// Reported with its serial number only; details are due.
    case announced(String)
    /// Reported with its details.
    case detailed(String)

    var serialNumber: String? {
      switch self {
      case .searching: nil
      case .announced(let serial), .detailed(let serial): serial
      }
    }
  }

  private struct Running {
    var sightings: [String: Sighting] = [:]
    var lastReport: [Reader]? = nil
    var foundAny = false
    var pick = Pick.searching
  }

  /// The phases of a discovery.
  private enum State {
    /// Not started.
    case idle
    /// Scanning.
    case running(Running)
    /// Ended; late input is ignored.
    case finished
  }

  private var state = State.idle
  package let method: DiscoveryMethod
  package let tuning: DiscoveryTuning
  package let simulated: Bool

  package init(method: DiscoveryMethod, tuning: DiscoveryTuning = DiscoveryTuning(), simulated: Bool) {
    self.method = method
    self.tuning = tuning
    self.simulated = simulated
  }

  package var isRunning: Bool {
    if case .running = state { return true }
    return false
  }

  /// The readers of the latest report.
  package var discoveredReaders: [Reader] {
    if case .running(let running) = state { return running.lastReport ?? [] }
    return []
  }

  /// Whether `serialNumber` is currently advertising (heard within the staleness window).
  package func isFresh(_ serialNumber: String, now: Duration) -> Bool {
    guard case .running(let running) = state, let sighting = running.sightings[serialNumber] else { return false }
    return now - sighting.lastSeen < tuning.stalenessWindow
  }

  package mutating func start(radioOn: Bool) -> [Action] {
    guard case .idle = state else { return [] }
    guard radioOn else {
      state = .finished
      return [.finish(ReaderError(.bluetoothDisabled, "Bluetooth is off; turn it on to discover readers"))]
    }
    state = .running(Running())
    var actions: [Action] = [.startScan, .arm(.tick, after: tuning.updateInterval)]
    if case .bluetoothScan(let timeout?) = method, timeout > .zero { actions.append(.arm(.timeout, after: timeout)) }
    return actions
  }

  package mutating func advertisement(_ advertisement: Advertisement, now: Duration) {
    guard case .running(var running) = state else { return }
    if case .bluetoothProximity = method, !advertisement.deviceType.supportsProximityDiscovery { return }
    running.sightings[advertisement.serialNumber] = Sighting(advertisement: advertisement, lastSeen: now)
    state = .running(running)
  }

  package mutating func timerFired(_ timer: Timer, now: Duration) -> [Action] {
    guard case .running(var running) = state else { return [] }
    switch timer {
    case .tick:
      running.sightings = running.sightings.filter { now - $0.value.lastSeen < tuning.stalenessWindow }
      var actions: [Action]
      switch method {
      case .bluetoothScan:
        actions = report(sortedReaders(running), into: &running)
      case .bluetoothProximity:
        actions = proximityTick(&running)
      }
      state = .running(running)
      return actions + [.arm(.tick, after: tuning.updateInterval)]
    case .proximityDetails:
      guard case .announced(let serial) = running.pick, let sighting = running.sightings[serial] else { return [] }
      running.pick = .detailed(serial)
      // Not through `report(_:into:)`: the second report is promised even when the advertisement
      // carries no details, which would make it look unchanged once signal strength is ignored.
      let readers = [reader(from: sighting.advertisement, detailed: true)]
      running.lastReport = readers
      state = .running(running)
      return [.report(readers)]
    case .timeout:
      guard case .bluetoothScan(let timeout?) = method else { return [] }
      // A reader first heard since the last tick still counts: report the final list, then end.
      running.sightings = running.sightings.filter { now - $0.value.lastSeen < tuning.stalenessWindow }
      let finalReport = report(sortedReaders(running), into: &running)
      state = .running(running)
      let error =
        running.foundAny
        ? nil
        : ReaderError(
          .bluetoothScanTimedOut, "no reader was found before the scan timed out",
          context: ["timeout": timeout.formattedSeconds])
      return finalReport + finish(error)
    }
  }

  /// Ends the discovery because it was cancelled (`canceled`), a reader is being connected (`nil`),
  /// or the radio went off.
  package mutating func finish(_ error: ReaderError?) -> [Action] {
    guard case .running = state else { return [] }
    state = .finished
    return [.disarm(.tick), .disarm(.timeout), .disarm(.proximityDetails), .stopScan, .finish(error)]
  }

  // MARK: Helpers

  private func sortedReaders(_ running: Running) -> [Reader] {
    running.sightings.values
      .sorted {
        $0.advertisement.signalStrength != $1.advertisement.signalStrength
          ? $0.advertisement.signalStrength > $1.advertisement.signalStrength
          : $0.advertisement.serialNumber < $1.advertisement.serialNumber
      }
      .map { reader(from: $0.advertisement, detailed: true) }
  }

  private func proximityTick(_ running: inout Running) -> [Action] {
    var actions: [Action] = []
    if let serial = running.pick.serialNumber {
      guard running.sightings[serial] == nil else { return [] }  // Sticks with its pick while it advertises.
      // The pick went away: pick again now, so the app sees the new nearest reader without a gap.
      running.pick = .searching
      actions.append(.disarm(.proximityDetails))
    }
    let nearest = running.sightings.values
      .filter { $0.advertisement.signalStrength >= tuning.proximityThreshold }
      .max {
        $0.advertisement.signalStrength != $1.advertisement.signalStrength
          ? $0.advertisement.signalStrength < $1.advertisement.signalStrength
          : $0.advertisement.serialNumber > $1.advertisement.serialNumber
      }
    guard let nearest else { return actions + report([], into: &running) }
    let serial = nearest.advertisement.serialNumber
    running.pick = .announced(serial)
    return actions + report([reader(from: nearest.advertisement, detailed: false)], into: &running) + [
      .flashLEDs(serialNumber: serial), .arm(.proximityDetails, after: tuning.proximityDetailDelay),
    ]
  }

  private func report(_ readers: [Reader], into running: inout Running) -> [Action] {
    func comparable(_ list: [Reader]) -> [Reader] {
      list.map {
        var r = $0; r.signalStrength = nil; return r
      }
    }
    if let last = running.lastReport, comparable(last) == comparable(readers) { return [] }
    if running.lastReport == nil && readers.isEmpty { return [] }
    running.lastReport = readers
    running.foundAny = running.foundAny || !readers.isEmpty
    return [.report(readers)]
  }

  private func reader(from advertisement: Advertisement, detailed: Bool) -> Reader {
    var reader = Reader(
      serialNumber: advertisement.serialNumber, deviceType: advertisement.deviceType, simulated: simulated)
    if detailed {
      reader.apply(advertisement.info)
      reader.signalStrength = advertisement.signalStrength
    }
    return reader
  }
}
