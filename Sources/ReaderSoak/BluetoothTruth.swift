import ReaderCore
import ReaderKit
import ReaderSimulator

/// The Bluetooth side's rules on one station, held against the world's ground truth
/// (`SimulatedBluetoothCentral.truth(_:)`) rather than against the terminal's own event log.
///
/// Two kinds of checks:
/// - At every event of the live app's terminal: what the event claims (a version, a progress, an
///   install's start and finish) against the world at that moment.
/// - At the end of every simulated instant, once all the work due then has run: the terminal's status
///   against the world's links, and the expectations that follow from what happened before (a reader
///   lost unexpectedly must be won back once it is reachable). The bound is the instant itself: a
///   link that drops must be reported by the end of the instant in which it dropped, without any
///   simulated time passing.
final class BluetoothTruth: @unchecked Sendable {
  // Confined to the thread that drives the clock.

  /// How long a lost reader may stay reachable, within its reconnect deadline, before the terminal must
  /// be connected to it or reconnecting it: the longest backoff between attempts (8 s, +50 % jitter),
  /// two connection latencies (1.5 s each) and a second.
  static let reconnectGrace = Duration.seconds(16)
  /// The same at launch: advertising (about a second), a connection latency and margin.
  static let launchGrace = Duration.seconds(8)
  /// How long a link may stay up, or a connect request wait, that the terminal knows nothing of: the
  /// reply timeout after which the terminal lets go of a reader that does not close its link.
  static let orphanBound = Duration.seconds(10)
  /// The reconnect deadline of every connection the soak makes: the documented default, 60 seconds.
  static let deadline = Duration.seconds(60)
  /// How far past its deadline a reconnection without a link may still be under way: the deadline
  /// timer fires at the deadline itself; a second of margin.
  static let deadlineMargin = Duration.seconds(1)

  /// Whether a disconnect for `reason` is followed by automatic reconnection, by the documented rules
  /// (not the library's code): not after the app's own disconnect, a critically low battery, an idle
  /// power-down or a lost pairing.
  static func reconnects(after reason: DisconnectReason) -> Bool {
    switch reason {
    case .disconnectRequested, .criticallyLowBattery, .idlePowerDown, .peerRemovedPairingInformation: false
    default: true
    }
  }
  /// The search window of the app's reconnect at launch.
  static let launchTimeout = Duration.seconds(30)

  /// A reader the app expects to keep: connected with automatic reconnection on, not let go of by a rule.
  private struct Bound {
    var serial: String
    /// When the world's link to it went down, while it was expected.
    var lostAt: Duration?
    /// Since when the world says it is reachable.
    var reachableSince: Duration?
    /// Since when the world's link to it is down (reset whenever it is up, also while it is prepared).
    var downSince: Duration?
  }

  /// The saved reader a reconnect at launch looks for.
  private struct LaunchWatch {
    var serial: String
    var start: Duration
    var reachableSince: Duration?
  }

  private struct OpenInstall {
    var serial: String
    var version: String
    var estimate: UpdateTimeEstimate
    var start: Duration
    var progress: Double?
  }

  private unowned let station: SoakStation
  private let violations: SoakViolations
  private var bound: Bound?
  /// The connection that stands has automatic reconnection off.
  private var autoOff = false
  private var launch: LaunchWatch?
  private var install: OpenInstall?
  private var orphanSince: [String: Duration] = [:]
  /// A reboot the reader accepted, until it drops the link.
  private(set) var rebootPending = false
  /// Why the reader was last lost.
  private var lastLoss: DisconnectReason?

  /// What happened, for the report.
  private(set) var counts: [String: Int] = [:]

  init(station: SoakStation, violations: SoakViolations) {
    self.station = station
    self.violations = violations
  }

  private var index: Int { station.index }
  private var world: SimulatedBluetoothCentral { station.world }

  /// Whether an install is under way, as the terminal reported.
  var isInstalling: Bool { install != nil }

  /// Whether the station's reader is restarting, by the world or by an accepted reboot.
  func isInRebootWindow(status: ConnectionStatus) -> Bool {
    if rebootPending { return true }
    if let serial = bound?.serial ?? station.currentSerial, world.truth(serial)?.isRebooting == true { return true }
    return status == .reconnecting && (lastLoss == .rebootRequested || lastLoss == .securityReboot)
  }

  private func fail(_ invariant: SoakViolation.Invariant, _ message: String) {
    violations.record(station.clock.elapsed, index, invariant, message)
  }

  private func count(_ key: String) { counts[key, default: 0] += 1 }

  // MARK: The app's life

  /// The app died: what its terminal had under way is gone with it.
  func appDied() {
    bound = nil
    autoOff = false
    launch = nil
    install = nil
    rebootPending = false
    orphanSince = [:]
  }

  // MARK: Events

  func event(_ event: TerminalEvent, autoReconnect: Bool) {
    let now = event.time
    switch event.kind {
    case .didConnect(let reader):
      count("connected")
      checkVersion(reader, "didConnect")
      bound = autoReconnect ? Bound(serial: reader.serialNumber) : nil
      autoOff = !autoReconnect
      launch = nil
      rebootPending = false
    case .readerDidSucceedReconnect(let reader):
      count("reconnectionsWon")
      checkVersion(reader, "readerDidSucceedReconnect")
      bound?.lostAt = nil
      bound?.reachableSince = nil
      rebootPending = false
    case .didStartReconnect(let reader, let reason):
      count("reconnectionsStarted")
      lastLoss = reason
      rebootPending = false
      if autoOff {
        fail(.reconnect, "reconnects \(reader.serialNumber) although the app turned automatic reconnection off")
      }
      if bound?.serial == reader.serialNumber, bound?.lostAt == nil { bound?.lostAt = now }
    case .readerDidFailReconnect(_, let error):
      count("reconnectionsFailed")
      // Cancelled, a required update that failed, a reader lost again while prepared: the rules end
      // the connection. A deadline that passed is checked against the world until the window closes.
      if error.code != .bluetoothConnectTimedOut { bound = nil }
    case .didDisconnect(let reader, let reason):
      count("disconnected.\(reason.rawValue)")
      rebootPending = false
      if let open = install, open.serial == reader.serialNumber {
        fail(.install, "\(reader.serialNumber) disconnected (\(reason)) while its install of \(open.version) is open")
        install = nil
      }
      if bound?.serial == reader.serialNumber {
        if !Self.reconnects(after: reason) {
          bound = nil
        } else if bound?.lostAt == nil {
          lastLoss = reason
          bound?.lostAt = now
        }
      }
    case .didStartInstallingUpdate(let reader, let update, _):
      count("installsStarted")
      if let open = install {
        fail(.install, "started \(update.deviceSoftwareVersion) while the install of \(open.version) is open")
      }
      install = OpenInstall(
        serial: reader.serialNumber, version: update.deviceSoftwareVersion, estimate: update.durationEstimate,
        start: now)
      station.probe(at: now + Self.installLimit(update.durationEstimate) + .milliseconds(1))
    case .didReportReaderSoftwareUpdateProgress(let reader, let progress):
      progressReported(reader, progress)
    case .didFinishInstallingUpdate(let reader, let update?, let error):
      installFinished(reader, update, error)
    case .didRespondToReboot(_, nil):
      rebootPending = true
    case .didStartLaunchReconnect(let serial):
      count("launchesWithSavedReader")
      launch = LaunchWatch(serial: serial, start: now)
    case .didFinishLaunchReconnect(let error):
      if let watch = launch, error?.code == .readerNotFound, let since = watch.reachableSince,
        adequate(since: since, until: now, windowEnd: watch.start + Self.launchTimeout, grace: Self.launchGrace)
      {
        fail(
          .launch,
          "the launch gave up on \(watch.serial) (not found) though it was reachable from \(since.soakText) on")
      }
      launch = nil
    default:
      break
    }
  }

  private func checkVersion(_ reader: Reader, _ what: String) {
    guard let truth = world.truth(reader.serialNumber), truth.softwareVersion != reader.deviceSoftwareVersion else {
      return
    }
    fail(
      .version,
      "\(what) reports \(reader.serialNumber) on \(reader.deviceSoftwareVersion ?? "nil"); it runs \(truth.softwareVersion)"
    )
  }

  private func progressReported(_ reader: Reader, _ progress: Double) {
    guard var open = install, open.serial == reader.serialNumber else {
      return fail(.install, "progress \(progress) for \(reader.serialNumber) with no install under way")
    }
    if !(0...1).contains(progress) { fail(.progress, "progress \(progress) is outside 0...1") }
    if let last = open.progress, progress < last {
      fail(.progress, "progress of \(open.version) went back from \(last) to \(progress)")
    }
    if let reached = world.truth(reader.serialNumber)?.installProgress, progress > reached + 1e-9 {
      fail(.progress, "progress \(progress) of \(open.version) is ahead of the reader's \(reached)")
    }
    open.progress = progress
    install = open
  }

  private func installFinished(_ reader: Reader, _ update: ReaderSoftwareUpdate, _ error: ReaderError?) {
    guard let open = install, open.serial == reader.serialNumber else {
      return fail(.install, "\(update.deviceSoftwareVersion) finished on \(reader.serialNumber) without a start")
    }
    install = nil
    let running = world.truth(reader.serialNumber)?.softwareVersion
    if let error { count("installsFailed.\(error.code)") }
    guard error == nil else {
      if error?.code != .canceled, running == update.deviceSoftwareVersion, running != open.version {
        fail(.version, "\(update.deviceSoftwareVersion) reported failed (\(error!.code)) but the reader runs it")
      }
      return
    }
    count("installsSucceeded")
    if open.progress != 1 {
      fail(.progress, "\(update.deviceSoftwareVersion) succeeded with its last progress at \(open.progress ?? -1)")
    }
    if running != update.deviceSoftwareVersion {
      fail(.version, "\(update.deviceSoftwareVersion) reported installed; the reader runs \(running ?? "nothing")")
    }
    if reader.deviceSoftwareVersion != update.deviceSoftwareVersion {
      fail(
        .version,
        "\(update.deviceSoftwareVersion) reported installed on a reader still at \(reader.deviceSoftwareVersion ?? "nil")"
      )
    }
  }

  // MARK: The end of an instant

  /// Checks the terminal of the live app against the world, at the end of instant `now`.
  func instant(_ now: Duration, terminal: Terminal) {
    let status = terminal.connectionStatus
    let connected = status == .connected ? terminal.connectedReader : nil
    if let reader = connected, let truth = world.truth(reader.serialNumber) {
      violations.episode(
        reader.serialNumber, broken: !truth.isLinked, now, index, .link,
        "the terminal says \(reader.serialNumber) is connected; the world has no link to it")
      violations.episode(
        reader.serialNumber, broken: truth.softwareVersion != reader.deviceSoftwareVersion, now, index, .version,
        "connectedReader \(reader.serialNumber) says \(reader.deviceSoftwareVersion ?? "nil"); it runs \(truth.softwareVersion)"
      )
    }
    checkOrphans(now, status: status, connected: connected?.serialNumber)
    checkBound(now, status: status, connected: connected?.serialNumber)
    checkLaunch(now, status: status)
    if let open = install {
      violations.episode(
        "install", broken: now - open.start > Self.installLimit(open.estimate), now, index, .install,
        "the install of \(open.version) started at \(open.start.soakText) has not finished")
    }
  }

  /// How long an install of an update with `estimate` may take at most: the simulated reader's install
  /// time, the stall timeout (60 s) and the cancel reply timeout (10 s) of the documented install
  /// rules, and 30 s of margin.
  static func installLimit(_ estimate: UpdateTimeEstimate) -> Duration {
    SimulatedBluetoothCentral.installDuration(estimate) + .seconds(60) + .seconds(10) + .seconds(30)
  }

  private func checkOrphans(_ now: Duration, status: ConnectionStatus, connected: String?) {
    let busy = status == .connecting || status == .reconnecting
    for serial in station.serials {
      guard let truth = world.truth(serial) else { continue }
      guard truth.isLinked || truth.isConnectPending, !busy, connected != serial else {
        if orphanSince[serial] != nil { orphanSince[serial] = nil }
        violations.episode(serial, broken: false, now, index, .orphanLink, "")
        continue
      }
      let since = orphanSince[serial] ?? now
      orphanSince[serial] = since
      if now - since <= Self.orphanBound { station.probe(at: since + Self.orphanBound + .milliseconds(1)) }
      let what = truth.isLinked ? "a link to" : "a connect request for"
      violations.episode(
        serial, broken: now - since > Self.orphanBound, now, index, .orphanLink,
        "the world holds \(what) \(serial) since \(since.soakText); the terminal is \(status)")
    }
  }

  /// A reader lost unexpectedly must be won back once it has been reachable for `reconnectGrace`, if
  /// that span began early enough within its reconnect deadline.
  private func checkBound(_ now: Duration, status: ConnectionStatus, connected: String?) {
    guard var watch = bound, let truth = world.truth(watch.serial) else { return }
    defer { bound = bound == nil ? nil : watch }
    if connected == watch.serial && truth.isLinked {
      watch.lostAt = nil
      watch.reachableSince = nil
      watch.downSince = nil
      return
    }
    if truth.isLinked {
      watch.downSince = nil
    } else if watch.downSince == nil {
      watch.downSince = now
      station.probe(at: now + Self.deadline + Self.deadlineMargin + .milliseconds(1))
    }
    // A reconnection gives up at its deadline, counted from the loss, unless a link is up by then.
    if status == .reconnecting, let down = watch.downSince {
      violations.episode(
        watch.serial, broken: now > down + Self.deadline + Self.deadlineMargin, now, index, .reconnect,
        "still reconnecting \(watch.serial) \((now - down).soakText) after its link went down (deadline \(Self.deadline.soakText))"
      )
    }
    if watch.lostAt == nil {
      guard !truth.isLinked else { return }
      watch.lostAt = now
    }
    guard let lostAt = watch.lostAt else { return }
    if truth.isReachable {
      if watch.reachableSince == nil {
        watch.reachableSince = now
        station.probe(at: now + Self.reconnectGrace)
      }
    } else {
      watch.reachableSince = nil
    }
    let trying = status == .reconnecting || status == .connecting || connected == watch.serial
    if let since = watch.reachableSince, !trying,
      adequate(since: since, until: now, windowEnd: lostAt + Self.deadline, grace: Self.reconnectGrace)
    {
      fail(
        .reconnect,
        "\(watch.serial), lost at \(lostAt.soakText)\(lastLoss.map { " (\($0))" } ?? ""), is reachable since \(since.soakText); the terminal is \(status)"
      )
      bound = nil
      return
    }
    // The deadline is over and the reader was never reachable long enough: giving up was right.
    if now > lostAt + Self.deadline + Self.reconnectGrace, !trying { bound = nil }
  }

  private func checkLaunch(_ now: Duration, status: ConnectionStatus) {
    guard var watch = launch, let truth = world.truth(watch.serial) else { return }
    if truth.isReachable {
      if watch.reachableSince == nil {
        watch.reachableSince = now
        station.probe(at: now + Self.launchGrace)
      }
    } else {
      watch.reachableSince = nil
    }
    launch = watch
    let trying = status == .connecting || status == .connected || status == .reconnecting
    if let since = watch.reachableSince, !trying,
      adequate(since: since, until: now, windowEnd: watch.start + Self.launchTimeout, grace: Self.launchGrace)
    {
      fail(.launch, "the saved reader \(watch.serial) is reachable since \(since.soakText); the launch is \(status)")
      launch = nil
    }
  }

  /// Whether a reachable span from `since` to `until` gave a correct terminal enough time (`grace`)
  /// and began early enough to finish before `windowEnd`.
  private func adequate(since: Duration, until: Duration, windowEnd: Duration, grace: Duration) -> Bool {
    until - since >= grace && since + grace <= windowEnd
  }

  /// Checks at the end of the run: nothing may be left open.
  func finish(_ now: Duration) {
    if let open = install {
      fail(.install, "the install of \(open.version) started at \(open.start.soakText) never finished")
    }
  }
}
