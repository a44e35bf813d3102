import ReaderKit
import ReaderSimulator

/// A soak that checks the simulated world's ground truth: several stations (a phone running the app,
/// a few Bluetooth readers, NFC tags, a disk) on one virtual clock, with faults of every kind aimed at
/// every state, and after every event and every instant the library's claims held against the world
/// (`SimulatedBluetoothCentral.truth(_:)`, `SimulatedNFCRadio`, the disk) — never the event log against
/// itself.
///
/// The rules (`SoakViolation.Invariant`), and the bound each is held to:
/// - `link`: the terminal says connected only while the world's link to that reader is up — by the end
///   of the instant in which the link dropped (no simulated time may pass).
/// - `orphanLink`: a link, or a connect request, the world holds is one the terminal is connecting,
///   reconnecting or connected with — within 10 s (the reply timeout after which the terminal lets go of a link).
/// - `reconnect`: a reader lost for a reason that the documented rules follow with reconnection (not the
///   app's disconnect, a critical battery, an idle power-down, automatic reconnection turned off, a
///   reconnection the app cancelled or a required update that failed), and reachable for 16 s within
///   its 60-second deadline, is connected or being reconnected; a reconnection without a link ends by
///   its deadline (+1 s); none starts with automatic reconnection off.
/// - `launch`: at launch the saved reader, reachable for 8 s within the 30-second search, is connected.
/// - `version`: every version reported (`didConnect`, a reconnection, an install's success,
///   `connectedReader` at the end of every instant) is the one the world's reader runs; a success
///   reported while the terminal keeps the old version is a violation.
/// - `progress`, `install`: progress stays in 0...1, never goes back, never runs ahead of the reader's,
///   reaches 1 on success; one start and one finish per install, none left open past its time.
/// - `store`: the saved reader on disk is always readable, and is the last one whose save was
///   acknowledged or one connected since (a save cut short by a kill or a power loss).
/// - `nfcDelivery`, `nfcRound`, `nfcMessage`, `nfcTimeLimit`: nothing reaches a session's delegate after
///   its invalidation; detections only while the radio polls for that session; the radio never polls
///   for an ended session (end of the instant); messages are those of tags in the field; no session
///   outlives the time limit it began with.
/// - `completion`: every command of the live app completes exactly once.
///
/// ```swift
/// let report = GroundTruthSoak.run(SoakConfiguration(seed: 7, days: 30, faultsPerHour: 4))
/// print(report.rendered)
/// if let first = report.violations.first, let shrunk = GroundTruthSoak.shrink(report.configuration, failing: first) {
///   print(shrunk.faults)   // a short schedule that still breaks the same rule
/// }
/// ```
///
/// The same configuration always gives the same run (the same event-log digest); see `SoakReport`.
public enum GroundTruthSoak {
  /// The fault schedule a configuration draws (before `keep` applies).
  public static func schedule(for configuration: SoakConfiguration) -> [SoakFault] {
    SoakFault.schedule(
      seed: configuration.seed, stations: max(1, configuration.stations),
      readers: max(1, configuration.readersPerStation), tags: SoakCatalog.tags.count, over: configuration.faultSpan,
      perHour: configuration.faultsPerHour)
  }

  /// Runs the soak and reports what it saw.
  public static func run(_ configuration: SoakConfiguration) -> SoakReport {
    SoakRun(configuration).run()
  }
}

/// One run: the clock, the stations, the fault schedule and the loop that checks after every instant.
final class SoakRun: @unchecked Sendable {
  // Confined to the thread that runs it.
  let configuration: SoakConfiguration
  let clock = VirtualClock()
  let violations = SoakViolations()
  let log: SoakLog
  private var stations: [SoakStation] = []
  private var faults: [SoakFault] = []
  /// Aimed faults that are due and wait for their state, per station, in the order they became due.
  private var waiting: [[SoakFault]] = []
  private var lastStates: [(bluetooth: SoakState, nfc: SoakState)] = []
  private var perState: [SoakAction.Kind: [SoakState: Int]] = [:]
  private var struck = 0
  private var aimedHits = 0
  private var sameInstant = 0
  private var instants = 0

  init(_ configuration: SoakConfiguration) {
    self.configuration = configuration
    log = SoakLog(keepsLines: configuration.keepsLog)
  }

  func run() -> SoakReport {
    let wall = ContinuousClock()
    let started = wall.now
    let count = max(1, configuration.stations)
    let days = Int(configuration.days.rounded(.up))
    for index in 0..<count {
      let seed = configuration.seed &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(index + 1) &* 0xD6E8_FEB8_6659_FD93
      stations.append(
        SoakStation(
          index: index, clock: clock, seed: seed, readers: max(1, configuration.readersPerStation), days: days,
          log: log,
          violations: violations, sabotage: configuration.sabotage))
    }
    waiting = Array(repeating: [], count: count)
    faults = GroundTruthSoak.schedule(for: configuration).filter { configuration.keep?.contains($0.id) ?? true }
    log.onRunaway = { [self] in
      violations.record(
        clock.elapsed, -1, .wallTime, "more than \(SoakLog.runawayLimit) events at one instant: every app is stopped")
      for station in stations { station.halt() }
    }
    for station in stations { station.launch() }
    lastStates = stations.map { ($0.bluetoothState, $0.nfcState) }
    for fault in faults {
      clock.schedule(after: fault.time) { [self] in due(fault) }
    }
    let span = configuration.faultSpan
    clock.schedule(after: span) { [self] in
      for station in stations { station.windDown() }
    }
    let end = configuration.stopAt ?? span + configuration.settle
    var stoppedEarly = false
    var active = Array(repeating: true, count: count)
    while let next = clock.nextDeadline, next <= end {
      clock.advance(to: next)
      // A clock that does not move would hand back the same deadline for ever: the run stops instead.
      guard clock.elapsed >= next else {
        violations.record(clock.elapsed, -1, .clock, "driven to \(next), the clock stayed at \(clock.elapsed)")
        stoppedEarly = true
        break
      }
      instants += 1
      for (index, station) in stations.enumerated() { active[index] = station.instant(next) }
      releaseWaiting(next, active: active)
      if configuration.stopsAtFirstViolation && violations.count > 0 {
        stoppedEarly = true
        break
      }
      if instants & 1023 == 0, let limit = configuration.wallClockLimit, wall.now - started > limit {
        violations.record(next, -1, .wallTime, "the run took longer than \(limit) of wall-clock time")
        stoppedEarly = true
        break
      }
    }
    if !stoppedEarly {
      clock.advance(to: end)
      if configuration.stopAt == nil {
        for station in stations { station.finish(end, violations: violations) }
      }
    }
    let elapsed = wall.now - started
    return report(simulated: clock.elapsed, wall: elapsed)
  }

  // MARK: Faults

  /// A fault's time has come: it strikes (after its delay) if its station is in the state it aims at,
  /// or waits for that state.
  private func due(_ fault: SoakFault) {
    guard let aim = fault.aim else { return strike(fault) }
    let station = stations[fault.station]
    if (aim.isNFC ? station.nfcState : station.bluetoothState) == aim {
      strike(fault, after: fault.delay)
    } else {
      waiting[fault.station].append(fault)
    }
  }

  private func strike(_ fault: SoakFault, after delay: Duration) {
    guard delay > .zero else { return strike(fault) }
    clock.schedule(after: delay) { [self] in strike(fault) }
  }

  private func strike(_ fault: SoakFault) {
    let station = stations[fault.station]
    struck += 1
    if fault.actions.count > 1 { sameInstant += 1 }
    for (offset, action) in fault.actions.enumerated() {
      let state = action.kind.isNFC ? station.nfcState : station.bluetoothState
      perState[action.kind, default: [:]][state, default: 0] += 1
      if offset == 0, state == fault.aim { aimedHits += 1 }
      if offset == 0 { log.fault(fault, at: clock.elapsed, state: state) }
      station.apply(action)
    }
  }

  /// After an instant: faults waiting for a state their station just entered strike; those that waited
  /// too long strike anyway. `active` says which stations had anything happen.
  private func releaseWaiting(_ now: Duration, active: [Bool]) {
    for index in stations.indices where !waiting[index].isEmpty {
      let expired = waiting[index][0].time + SoakFault.maximumWait <= now
      // A station where nothing happened is in the state it was in.
      guard active[index] || expired else { continue }
      let station = stations[index]
      let states = (bluetooth: station.bluetoothState, nfc: station.nfcState)
      let changed = states.bluetooth != lastStates[index].bluetooth || states.nfc != lastStates[index].nfc
      lastStates[index] = states
      guard changed || expired else { continue }
      var still: [SoakFault] = []
      for fault in waiting[index] {
        if fault.aim == states.bluetooth || fault.aim == states.nfc {
          strike(fault, after: fault.delay)
        } else if fault.time + SoakFault.maximumWait <= now {
          strike(fault)
        } else {
          still.append(fault)
        }
      }
      waiting[index] = still
    }
  }

  // MARK: The report

  private func report(simulated: Duration, wall: Duration) -> SoakReport {
    var counts: [String: Int] = [:]
    for station in stations {
      counts.merge(station.bluetoothTruth.counts, uniquingKeysWith: +)
      counts.merge(station.nfcTruth.counts, uniquingKeysWith: +)
      counts["appDeaths", default: 0] += station.kills
      counts["storeReads", default: 0] += station.storeTruth.reads
    }
    return SoakReport(
      configuration: configuration, violations: violations.all, violationCount: violations.count,
      faultsScheduled: faults.count, faultsStruck: struck, aimedHits: aimedHits, sameInstantFaults: sameInstant,
      actionsPerState: perState, simulated: simulated, wall: wall, instants: instants, events: log.count,
      digest: log.digest, counts: counts, log: log.lines, schedule: faults)
  }
}
