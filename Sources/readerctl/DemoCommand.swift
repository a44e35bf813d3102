import Foundation
import ReaderCore
import ReaderKit
import ReaderSimulator

/// `readerctl demo`: a narrated run of a reader's life on the built-in simulator.
enum DemoCommand {
  static let help = CommandHelp(
    command: "demo",
    overview: "A narrated run of a reader's life, then NFC reader sessions, on the built-in simulator.",
    synopses: ["[nfc] [--seed N] [--readers N] [--speed X] [--json]"],
    discussion: [
      "Readers are switched on, a scan lists them, the merchant picks one and it connects to a location, "
        + "installing a required software update first; it is carried out of range and won back, rebooted, "
        + "rebooted again by its own 24-hour timer; an optional update is offered and installed; the reader is "
        + "found again after the app is relaunched, and disconnected; days later an update that became required "
        + "in the meantime installs while it reconnects. On a terminal, installs show a progress bar with the "
        + "time left.",
      "Then NFC, on the same clock: a reader session reads a badge; a second session waits in line until the "
        + "first ends; another app holds the radio and the read loop retries once; a long round of reads outlives "
        + "two of the system's session time limits through the read loop; a damaged label changes the sheet's "
        + "message and ends its session with an error message; a user cancel ends quietly.",
    ],
    arguments: [("nfc", "tell the NFC story alone")],
    options: [
      .init("seed", ["N"], "seed of the simulated world (default 1); the same seed gives the same run"),
      .init("readers", ["N"], "readers in the world (default 4, 2-16)"),
      .init(
        "speed", ["X"],
        "simulated seconds per real second while something is on screen (default: 4 on a terminal, 0 = as "
          + "fast as possible otherwise); installs run 8 times faster than that, and long waits are always "
          + "skipped"),
      .json(),
    ],
    notes: ["The same seed tells the same story at any speed: simulated times do not depend on pacing."],
    exitStatuses: [
      (0, "every step worked"), (1, "a step failed"), (64, "usage"), (74, "the output cannot be written"),
      (130, "interrupted"),
    ])

  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try help.parse(arguments)
    let nfcAlone = try NFCDemo.isAlone(options.positionals)
    let json = options.has("json")
    let readers = try options.integer("readers", default: 4, in: 2...16)
    let session = SimulationSession(
      seed: try options.integer("seed", default: 1, in: 0...UInt64.max), readers: nfcAlone ? 0 : readers,
      console: console,
      speed: try options.number("speed", default: console.isTerminal && !json ? 4 : 0, in: 0...1_000_000), json: json)
    Interrupt.install()
    var outcome = nfcAlone ? CommandOutcome.success() : Demo(session: session, narrate: !json).play()
    if outcome.status == ExitStatus.success {
      outcome = NFCDemo(session: session, narrate: !json, alone: nfcAlone).play()
    }
    if !json && outcome.status == ExitStatus.success && console.isTerminal {
      session.note(
        "(\(SimulationSession.format(session.now)) of simulated time took "
          + "\(JSONValue.number(session.wallElapsed.inSeconds, decimals: 1).rendered) s of wall time.)")
    }
    return session.finish(outcome)
  }
}

/// One run of the demo's story.
private final class Demo {
  private let session: SimulationSession
  private let narrate: Bool
  private let store = InMemoryReaderStore()
  private let locationId = "tml_demo_downtown"
  /// The app's reader delegate; a relaunched app has a new one.
  private var delegate: DemoReaderDelegate
  /// The vendor's update catalog, whose releases are dated from the simulation's epoch.
  private let catalog = InMemoryUpdateCatalog(sha256: { SHA256Checksum.compute($0) })
  /// The release that is optional when the app relaunches and required four days later.
  private var laterRelease: UpdateRelease?
  /// The observer that narrates the current terminal's status changes.
  private var statusNarration: UInt64?

  init(session: SimulationSession, narrate: Bool) {
    self.session = session
    self.narrate = narrate
    delegate = Self.makeDelegate(session)
  }

  private static func makeDelegate(_ session: SimulationSession) -> DemoReaderDelegate {
    DemoReaderDelegate(installs: InstallProgressView(session: session)) { [session] text in session.say(text) }
  }

  private var world: SimulatedBluetoothCentral { session.world }

  private func say(_ text: String) { delegate.say(text) }

  /// Plays every scene; returns how it ended.
  func play() -> CommandOutcome {
    if narrate {
      session.note("ReaderKit demo: a simulated Bluetooth world (seed \(session.seed)).")
      session.note(
        "Times are simulated: \(DiscoverCommand.pacingNote(session)) while something happens, installs run faster "
          + "still, and long waits are skipped."
      )
      session.console.line()
    }
    var terminal = makeTerminal()
    do throws(DemoFailure) {
      let reader = try scanAndPick(terminal)
      try publishReleases(for: reader)
      try connect(reader, terminal)
      try walkAway(reader, terminal)
      try reboot(reader, terminal)
      try securityReboot(reader, terminal)
      try installOptionalUpdate(terminal)
      terminal = try relaunch(reader, terminal)
      try disconnect(terminal)
      try letRequiredAtPass()
      try reconnectForRequiredUpdate(reader, terminal)
      try disconnect(terminal, "At closing time the merchant disconnects the reader again.")
      say("That is the whole life of a reader: every step above ran on the same virtual clock.")
      return .success()
    } catch {
      if Interrupt.requested {
        session.screen.lineAfterInterrupt()
        session.screen.detach()
        session.console.error("readerctl: interrupted\n")
        return .failure(.canceled("demo"))
      }
      session.screen.detach()
      session.console.error("readerctl: the demo stopped: \(error.message)\n")
      return .failure(code: "demoStepFailed", message: error.message, status: ExitStatus.failure)
    }
  }

  // MARK: Scenes

  private func scanAndPick(_ terminal: Terminal) throws(DemoFailure) -> Reader {
    // The readers are switched on one after another while the scan runs.
    let readers = world.readers
    for reader in readers { world.setPower(reader.serialNumber, on: false) }
    for (index, reader) in readers.enumerated() {
      let serial = reader.serialNumber
      let line =
        "\(reader.deviceType.displayName) \(serial) “\(reader.label ?? "-")” is switched on, "
        + "\(formatDistance(reader.distance)) away."
      session.clock.schedule(after: .milliseconds(400 + 900 * Int64(index))) { [world, delegate] in
        delegate.say(line)
        world.setPower(serial, on: true)
      }
    }
    say("The app scans for readers (status: discovering); the list below updates as they appear.")
    let listener = DiscoveryListener(session: session, quiet: !narrate)
    let finished = Outcome<ReaderError?>()
    let scan = try attempt { () throws(ReaderError) in
      try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(true).setTimeout(60).build()
    }
    terminal.discoverReaders(scan, delegate: listener) { finished.set($0) }
    let scanTime = Duration.milliseconds(400 + 900 * Int64(readers.count)) + .seconds(3)
    try check(session.run(for: scanTime), "interrupted")
    try check(!finished.isSet, "the scan ended early: \(String(describing: finished.value ?? nil))")
    session.screen.detach()

    // As a merchant would: the reader on the charging dock, by its label, or else the nearest one.
    let docked = readers.first { $0.isCharging }?.serialNumber
    guard let pick = listener.latest.first(where: { $0.serialNumber == docked }) ?? listener.latest.first else {
      throw DemoFailure("the scan found no reader")
    }
    say("The merchant taps “\(pick.label ?? pick.serialNumber)” (\(pick)) in the list.")
    if let simulated = world.reader(pick.serialNumber),
      simulated.batteryLevel < SimulatedBluetoothCentral.minimumUpdateBattery,
      !simulated.isCharging
    {
      say("Its battery is low for a software update, so the merchant puts it on its charging dock first.")
      world.setBattery(pick.serialNumber, level: simulated.batteryLevel, isCharging: true)
    }
    return pick
  }

  /// The vendor's catalog for the reader's model: a required update it lacks, and an optional one
  /// released six hours into the story.
  private func publishReleases(for reader: Reader) throws(DemoFailure) {
    let required = try release(
      "2.03.00.00", for: reader.deviceType, releasedAt: days(-30), requiredAt: days(-14), components: [.config, .keys],
      estimate: .estimate1To2Minutes)
    catalog.add(required.release, image: required.image)
    let optional = try release(
      "2.03.01.00", for: reader.deviceType, releasedAt: days(0.25), requiredAt: days(30), components: [.keys],
      estimate: .estimateLessThan1Minute)
    catalog.add(optional.release, image: optional.image)
    say(
      "The vendor's update catalog requires \(required.release.version) (\(required.release.components)) on every "
        + "\(reader.deviceType.displayName) since \(required.release.requiredAt.formatted(.iso8601)).")
  }

  private func connect(_ reader: Reader, _ terminal: Terminal) throws(DemoFailure) {
    let configuration = try attempt { () throws(ReaderError) in
      try BluetoothConnectionConfiguration.Builder(delegate: delegate, locationId: locationId).build()
    }
    say("Connecting to \(reader.serialNumber) at location \(locationId); connecting ends the scan.")
    let result = Outcome<Result<Reader, ReaderError>>()
    terminal.connectReader(reader, connectionConfig: configuration) { result.set($0) }
    try check(
      session.run(until: { result.isSet }, limit: .seconds(600), pace: delegate.installs.pace),
      "the connection did not complete")
    switch result.value {
    case .success(let connected)?:
      say(
        "Connected to \(connected.serialNumber) at \(connected.locationId ?? "?") (software "
          + "\(connected.deviceSoftwareVersion ?? "?"), battery "
          + "\(connected.batteryLevel.map { "\(Int(($0 * 100).rounded())) %" } ?? "?")); saved for the next launch.")
    case .failure(let error)?:
      throw DemoFailure("connecting failed: \(error)")
    case nil:
      throw DemoFailure("the connection did not complete")
    }
  }

  private func walkAway(_ reader: Reader, _ terminal: Terminal) throws(DemoFailure) {
    try check(session.run(for: .seconds(5)), "interrupted")
    say("The merchant walks to the terrace with the reader, out of Bluetooth range, for 20 seconds.")
    let before = delegate.succeededReconnects
    world.walkAway(reader.serialNumber, for: .seconds(20))
    try awaitReconnect(after: before, limit: .seconds(90))
  }

  private func reboot(_ reader: Reader, _ terminal: Terminal) throws(DemoFailure) {
    try check(session.run(for: .seconds(5)), "interrupted")
    say("The app reboots the reader (this also restarts its 24-hour security reboot count).")
    let before = delegate.succeededReconnects
    let answer = Outcome<ReaderError?>()
    terminal.rebootReader { answer.set($0) }
    try check(session.run(until: { answer.isSet }, limit: .seconds(30)), "the reboot was not answered")
    if let error = answer.value ?? nil { throw DemoFailure("the reboot failed: \(error)") }
    say("The reader accepted the reboot; it restarts and drops the link (reason: rebootRequested).")
    try awaitReconnect(after: before, limit: .seconds(120))
  }

  private func securityReboot(_ reader: Reader, _ terminal: Terminal) throws(DemoFailure) {
    guard reader.deviceType.hasSecurityReboot else {
      say("A \(reader.deviceType.displayName) has no 24-hour security reboot; skipping that scene.")
      return
    }
    say("A day passes (skipped): the \(reader.deviceType.displayName) reboots itself after 24 hours of operation.")
    let before = delegate.succeededReconnects
    try check(
      session.run(
        until: { self.delegate.succeededReconnects > before || self.delegate.failedReconnects > 0 },
        limit: .seconds(25 * 3600), paced: false), "no security reboot happened within 25 hours")
    try awaitReconnect(after: before, limit: .seconds(120))
  }

  private func relaunch(_ reader: Reader, _ ended: Terminal) throws(DemoFailure) -> Terminal {
    try check(session.run(for: .seconds(3)), "interrupted")
    say("The merchant swipes the app away: the system ends it without a goodbye, and its link to the reader drops.")
    session.world.terminateHostApp()
    // The ended app's terminal is still on the clock (its timers run on), but a dead app says nothing.
    session.stopPrinting(ended)
    if let token = statusNarration { ended.removeEventObserver(token) }
    delegate.mute()
    delegate = Self.makeDelegate(session)
    let later = try release(
      "2.04.00.00", for: reader.deviceType, releasedAt: session.date, requiredAt: days(4),
      components: [.firmware, .config], estimate: .estimate1To2Minutes)
    catalog.add(later.release, image: later.image)
    laterRelease = later.release
    say(
      "While the app is closed, the vendor publishes \(later.release.version) (\(later.release.components)), "
        + "optional until \(later.release.requiredAt.formatted(.iso8601)).")
    say("The app is launched again and reconnects to the reader it used last.")
    let terminal = makeTerminal()
    let result = Outcome<Result<Reader?, ReaderError>>()
    terminal.reconnectToSavedReader(delegate: delegate, timeout: .seconds(30)) { result.set($0) }
    try check(session.run(until: { result.isSet }, limit: .seconds(60)), "the launch reconnect did not finish")
    switch result.value {
    case .success(let found?)? where found.serialNumber == reader.serialNumber:
      say("Reconnected at launch to \(found) at \(found.locationId ?? "?"), without the merchant doing anything.")
      return terminal
    case .success(let other)?:
      throw DemoFailure("the launch reconnect found \(other.map(\.serialNumber) ?? "nothing saved")")
    case .failure(let error)?:
      throw DemoFailure("the launch reconnect failed: \(error)")
    case nil:
      throw DemoFailure("the launch reconnect did not finish")
    }
  }

  private func disconnect(
    _ terminal: Terminal,
    _ line: String = "The merchant disconnects the reader (reason: disconnectRequested; no reconnection follows)."
  ) throws(DemoFailure) {
    try check(session.run(for: .seconds(3)), "interrupted")
    say(line)
    let done = Outcome<ReaderError?>()
    terminal.disconnectReader { done.set($0) }
    try check(session.run(until: { done.isSet }, limit: .seconds(30)), "the disconnect did not complete")
    if let error = done.value ?? nil { throw DemoFailure("disconnecting failed: \(error)") }
  }

  private func installOptionalUpdate(_ terminal: Terminal) throws(DemoFailure) {
    try check(session.run(for: .seconds(5)), "interrupted")
    if terminal.connectedReader?.availableUpdate == nil {
      say("The catalog has not offered an optional update yet; the app waits for its next answer (skipped).")
      let reported = delegate.availableUpdateReports
      try check(
        session.run(
          until: { self.delegate.availableUpdateReports > reported }, limit: .seconds(8 * 3600), paced: false),
        "no optional update was offered within 8 hours")
    }
    guard let update = terminal.connectedReader?.availableUpdate else {
      throw DemoFailure("the reader has no available update to install")
    }
    say(
      "The merchant taps “Update now” in the app (installAvailableUpdate); the reader stays connected while "
        + "\(update.deviceSoftwareVersion) installs.")
    let done = Outcome<ReaderError?>()
    terminal.installAvailableUpdate { done.set($0) }
    try check(
      session.run(until: { done.isSet }, limit: .seconds(900), pace: delegate.installs.pace),
      "the install did not finish")
    if let error = done.value ?? nil { throw DemoFailure("installing the optional update failed: \(error)") }
    say(
      "The reader runs \(terminal.connectedReader?.deviceSoftwareVersion ?? "?") and stayed connected throughout "
        + "(status: \(terminal.connectionStatus)).")
  }

  private func letRequiredAtPass() throws(DemoFailure) {
    guard let later = laterRelease else { throw DemoFailure("no later release was published") }
    let morning = Duration.seconds(Int64(4 * 86_400 + 8 * 3600))
    let wait = max(morning - session.now, .zero)
    say(
      "\(Self.span(wait).prefix(1).uppercased() + Self.span(wait).dropFirst()) pass (skipped) with the reader on its "
        + "dock; at \(later.requiredAt.formatted(.iso8601)) \(later.version) becomes required.")
    try check(session.run(for: wait, paced: false), "interrupted")
  }

  private func reconnectForRequiredUpdate(_ reader: Reader, _ terminal: Terminal) throws(DemoFailure) {
    say(
      "The merchant opens the app in the morning: it reconnects to the saved reader, and the update, now "
        + "required, installs before the reader can be used.")
    let result = Outcome<Result<Reader?, ReaderError>>()
    terminal.reconnectToSavedReader(delegate: delegate, timeout: .seconds(30)) { result.set($0) }
    try check(
      session.run(until: { result.isSet }, limit: .seconds(600), pace: delegate.installs.pace),
      "the reconnection did not finish")
    switch result.value {
    case .success(let found?)? where found.serialNumber == reader.serialNumber:
      say(
        "Reconnected to \(found) at \(found.locationId ?? "?"), running \(found.deviceSoftwareVersion ?? "?"): "
          + "the required update was installed first.")
    case .success(let other)?:
      throw DemoFailure("the reconnection found \(other.map(\.serialNumber) ?? "nothing saved")")
    case .failure(let error)?:
      throw DemoFailure("the reconnection failed: \(error)")
    case nil:
      throw DemoFailure("the reconnection did not finish")
    }
  }

  // MARK: Helpers

  /// `3 days and 8 hours`, `1 day`, `5 hours`: `duration` to the nearest hour, as the narration says it.
  static func span(_ duration: Duration) -> String {
    let hours = Int((duration.inSeconds / 3600).rounded())
    let parts = [(hours / 24, "day"), (hours % 24, "hour")].filter { $0.0 > 0 }.map {
      "\($0.0) \($0.1)\($0.0 == 1 ? "" : "s")"
    }
    return parts.isEmpty ? "less than an hour" : parts.joined(separator: " and ")
  }

  /// The date `days` days after the simulation's epoch (2026-01-01 00:00 UTC).
  private func days(_ days: Double) -> Date { Terminal.simulationEpoch.addingTimeInterval(days * 86_400) }

  /// A release of `version` for `model` at every location, with an image of deterministic bytes.
  private func release(
    _ version: String, for model: DeviceType, releasedAt: Date, requiredAt: Date, components: UpdateComponent,
    estimate: UpdateTimeEstimate
  ) throws(DemoFailure) -> (release: UpdateRelease, image: Data) {
    let salt = version.utf8.reduce(0) { $0 &+ Int($1) }
    let bytes = Data((0..<(96 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ salt) })
    guard let url = URL(string: "https://updates.readerkit.example/\(model.rawValue)/\(version).bin") else {
      throw DemoFailure("no image URL for \(version)")
    }
    let image = FirmwareImage(url: url, size: bytes.count, sha256: SHA256Checksum.compute(bytes))
    let release = UpdateRelease(
      deviceType: model, version: try attempt { () throws(ReaderError) in try SoftwareVersion(version) },
      releasedAt: releasedAt, requiredAt: requiredAt, components: components, durationEstimate: estimate,
      image: image)
    return (release, bytes)
  }

  private func makeTerminal() -> Terminal {
    let terminal = session.makeTerminal(store: store, updateCatalog: catalog)
    if narrate {
      let session = self.session
      statusNarration = terminal.addEventObserver { event in
        if case .didChangeConnectionStatus(let status) = event.kind { session.say("status: \(status)") }
      }
    }
    return terminal
  }

  /// Runs until the reconnection that follows a disconnect has ended; it must have succeeded.
  private func awaitReconnect(after succeeded: Int, limit: Duration) throws(DemoFailure) {
    let failed = delegate.failedReconnects
    let ended = session.run(
      until: { self.delegate.succeededReconnects > succeeded || self.delegate.failedReconnects > failed }, limit: limit)
    try check(ended, "the reconnection did not end within \(SimulationSession.format(limit))")
    try check(delegate.failedReconnects == failed, "the reconnection failed")
  }

  private func check(_ condition: Bool, _ message: @autoclosure () -> String) throws(DemoFailure) {
    if Interrupt.requested { throw DemoFailure("interrupted") }
    if !condition { throw DemoFailure(message()) }
  }

  private func attempt<T>(_ body: () throws(ReaderError) -> T) throws(DemoFailure) -> T {
    do throws(ReaderError) {
      return try body()
    } catch {
      throw DemoFailure("\(error)")
    }
  }

  private func formatDistance(_ metres: Double) -> String {
    metres < 1 ? "\(Int((metres * 100).rounded())) cm" : "\(Int(metres.rounded())) m"
  }
}

private struct DemoFailure: Error {
  var message: String
  init(_ message: String) { self.message = message }
}

/// Narrates what an app would show for each reader event, and counts reconnections.
private nonisolated final class DemoReaderDelegate: MobileReaderDelegate {
  private struct Counts {
    var succeeded = 0
    var failed = 0
    var availableUpdates = 0
    var muted = false
  }

  private let narrate: @Sendable (String) -> Void
  /// Shows the installs.
  let installs: InstallProgressView
  private let counts = Locked(Counts())

  init(installs: InstallProgressView, say: @escaping @Sendable (String) -> Void) {
    self.installs = installs
    self.narrate = say
  }

  /// Says `text`, unless muted.
  func say(_ text: String) {
    if !counts.withLock({ $0.muted }) { narrate(text) }
  }

  /// Stops narrating and showing installs: the app that owned the delegate has ended.
  func mute() { counts.withLock { $0.muted = true } }

  private var isMuted: Bool { counts.withLock { $0.muted } }

  var succeededReconnects: Int { counts.withLock { $0.succeeded } }
  var failedReconnects: Int { counts.withLock { $0.failed } }
  var availableUpdateReports: Int { counts.withLock { $0.availableUpdates } }

  func reader(_ reader: Reader, didStartReconnect cancelable: Cancelable, disconnectReason: DisconnectReason) {
    say("The reader dropped (\(disconnectReason)); the app shows “Reconnecting to your reader…” and a Cancel button.")
  }

  func readerDidSucceedReconnect(_ reader: Reader) {
    counts.withLock { $0.succeeded += 1 }
    say("Reconnected to \(reader.serialNumber) at \(reader.locationId ?? "?"); the app shows “Reader connected”.")
  }

  func readerDidFailReconnect(_ reader: Reader) {
    counts.withLock { $0.failed += 1 }
    say("Reconnection gave up. The app shows “Reader disconnected” and offers to search again.")
  }

  func reader(_ reader: Reader, didDisconnect reason: DisconnectReason) {
    say("The reader is disconnected (\(reason)).")
  }

  func readerDidReportLowBatteryWarning(_ reader: Reader) {
    say("The reader's battery is low. The app asks the merchant to charge it.")
  }

  func reader(_ reader: Reader, didReportAvailableUpdate update: ReaderSoftwareUpdate) {
    counts.withLock { $0.availableUpdates += 1 }
    say(
      "The reader reports an optional update, \(update.deviceSoftwareVersion) (\(update.components); "
        + "\(update.durationEstimate)), required from \(update.requiredAt.formatted(.iso8601)); the app offers it, "
        + "nothing is installed yet.")
  }

  func reader(_ reader: Reader, didStartInstallingUpdate update: ReaderSoftwareUpdate, cancelable: Cancelable?) {
    if !isMuted { installs.started(update) }
  }

  func reader(_ reader: Reader, didReportReaderSoftwareUpdateProgress progress: Float) {
    if !isMuted { installs.progressed(Double(progress)) }
  }

  func reader(_ reader: Reader, didFinishInstallingUpdate update: ReaderSoftwareUpdate?, error: (any Error)?) {
    if !isMuted { installs.finished(update, error: error as? ReaderError) }
  }
}
