import Foundation
import ReaderCore
import ReaderKit
import ReaderSimulator

/// `readerctl update`: checks a simulated reader against an update manifest, and installs what applies.
enum UpdateCommand {
  static let help = CommandHelp(
    command: "update",
    overview: "Checks a simulated reader against an update manifest, and installs the update that applies.",
    synopses: [
      "--catalog PATH|URL [--serial S] [--device-type T] [--installed-version V] [--location ID] [--date DATE] "
        + "[--install] [--dock] [--stall-timeout S] [--fetch-timeout S] [--ca-file PEM] [--seed N] [--readers N] [--speed X] [--json]"
    ],
    discussion: [
      "Prints the update that applies to the reader: its version, components, estimate, whether it is "
        + "required, requiredAt, and its image's size and SHA-256 digest. The manifest is fetched once."
    ],
    options: [
      .init("catalog", ["PATH|URL"], "the manifest: a file path, a file: URL, or an http: or https: URL"),
      .init("serial", ["S"], "the reader with serial number S (default: the first in the world)"),
      .init(
        "device-type", ["T"],
        "the first reader of model T: chipper2X, stripeM2 or wisePad3; with --serial, that reader must be of "
          + "model T"),
      .init("installed-version", ["V"], "the version the reader runs (default: its own, e.g. 2.01.00.16)"),
      .init(
        "location", ["ID"],
        "the location the reader is at (default tml_readerctl); a release may be offered at some locations only"),
      .init(
        "date", ["DATE"],
        "check as of DATE: 2026-06-01 (midnight UTC) or an ISO 8601 date-time with a time zone, "
          + "2026-06-01T09:30:00Z; not before 2026-01-01 (default: now)"),
      .init(
        "install", [],
        "install the update: the reader connects with the catalog's answer and installs it, a required update "
          + "while it connects, an optional one afterwards with installAvailableUpdate(). The image is downloaded "
          + "and checked against its size and digest first; on a terminal a progress bar shows the download, "
          + "then the install and the time left. The reader is kept in memory only, never in the store "
          + "`readerctl reconnect` reads."),
      .init(
        "dock", [],
        "with --install, put the reader on its charging dock first: a reader below 50 % battery that is not "
          + "charging refuses to update"),
      .init("stall-timeout", ["S"], "how long an HTTP catalog may stay silent, in seconds (default 15)"),
      .init(
        "fetch-timeout", ["S"],
        "how long one HTTP fetch (the manifest, or the image) may take in all, in seconds (default: 10 s and one "
          + "more for every 64 KiB the fetch may bring)"),
      .init(
        "ca-file", ["PEM"],
        "trust the CA certificates in the PEM file for an https: catalog, besides the system's (a private "
          + "catalog's own CA)"),
      .init("seed", ["N"], "seed of the simulated world (default 1)"),
      .init("readers", ["N"], "readers in the world (default 3, 1-64)"),
      .init(
        "speed", ["X"],
        "simulated seconds per real second (default: 4 on a terminal, 0 = unpaced otherwise); installs run 8 "
          + "times faster than that"),
      .json(
        members: "\"catalog\": …, \"date\": …, \"installedSoftware\": …, \"update\": … | null, \"required\": …",
        more: ", with the \"reader\" after an install"),
    ],
    exitStatuses: [
      (0, "checked (and installed)"), (64, "usage"),
      (65, "a malformed manifest or server response, or an image whose size or digest is wrong"),
      (66, "a manifest or image file that is missing or unreadable"),
      (69, "no such reader in the world, or a catalog server that cannot be reached"),
      (74, "the output cannot be written"),
      (
        75,
        "a catalog server that stalls or outlasts --fetch-timeout, or an install that cannot run now (battery "
          + "low without --dock, reader out of range)"
      ),
      (130, "interrupted"), (1, "other failures"),
    ])

  /// The location the reader is at unless `--location` says otherwise.
  static let defaultLocation = "tml_readerctl"

  static func run(_ arguments: [String], console: Console) throws(UsageError) -> Int32 {
    let options = try help.parse(arguments)
    _ = try options.positionals(named: [])
    guard let catalogText = options.string("catalog") else { throw UsageError("--catalog is required") }
    let stallTimeout = try options.number("stall-timeout", default: 15, in: 0.001...3600)
    let fetchTimeout = try options.string("fetch-timeout").map { _ throws(UsageError) in
      try options.number("fetch-timeout", default: 0, in: 0.001...86_400)
    }
    let source = try CatalogSource(
      catalogText, stallTimeout: .seconds(stallTimeout), fetchTimeout: fetchTimeout.map { .seconds($0) },
      trustedCertificates: options.string("ca-file").map { URL(fileURLWithPath: $0) })
    let deviceType = try options.string("device-type").map { text throws(UsageError) -> DeviceType in
      guard let type = DeviceType(rawValue: text) else {
        let names = DeviceType.allCases.map(\.rawValue).joined(separator: ", ")
        throw UsageError("--device-type must be one of \(names), not '\(text)'")
      }
      return type
    }
    let version = try options.string("installed-version").map { text throws(UsageError) -> SoftwareVersion in
      do throws(ReaderError) {
        return try SoftwareVersion(text)
      } catch {
        throw UsageError("--installed-version: \(error.message)")
      }
    }
    let location = options.string("location") ?? defaultLocation
    guard !location.allSatisfy(\.isWhitespace) else { throw UsageError("--location must not be empty") }
    let date = try options.string("date").map(parseDate) ?? Date()
    let json = options.has("json")
    let session = SimulationSession(
      seed: try options.integer("seed", default: 1, in: 0...UInt64.max),
      readers: try options.integer("readers", default: 3, in: 1...64), console: console,
      speed: try options.number("speed", default: console.isTerminal && !json ? 4 : 0, in: 0...1_000_000), json: json,
      start: date)
    Interrupt.install()
    let check = UpdateCheck(
      session: session, source: source, serial: options.string("serial"), deviceType: deviceType, version: version,
      location: location)
    return check.run(install: options.has("install"), dock: options.has("dock"))
  }

  /// `2026-06-01` (midnight UTC) or an ISO 8601 date-time with a time zone, not before the simulation's
  /// epoch (the simulated world cannot start earlier).
  static func parseDate(_ text: String) throws(UsageError) -> Date {
    let full = text.utf8.count == 10 ? text + "T00:00:00Z" : text
    guard let date = try? Date.ISO8601FormatStyle().parse(full), namesARealDay(full) else {
      throw UsageError(
        "--date must be a date (2026-06-01) or an ISO 8601 date-time with a time zone (2026-06-01T09:30:00Z), "
          + "not '\(text)'")
    }
    guard date >= Terminal.simulationEpoch else {
      throw UsageError(
        "--date must not be before \(Terminal.simulationEpoch.formatted(.iso8601)), where the simulation begins")
    }
    return date
  }

  /// Whether the `YYYY-MM-DD` that `text` starts with exists: the parser rolls 2026-02-30 over into March.
  private static func namesARealDay(_ text: String) -> Bool {
    let day = String(text.prefix(10))
    guard let midnight = try? Date.ISO8601FormatStyle().parse(day + "T00:00:00Z") else { return false }
    return midnight.formatted(.iso8601).hasPrefix(day)
  }
}

/// One run of `readerctl update`: the check, and the install if asked.
private struct UpdateCheck {
  let session: SimulationSession
  let source: CatalogSource
  let serial: String?
  let deviceType: DeviceType?
  let version: SoftwareVersion?
  let location: String
  private let interruptNoted = Outcome<Bool>()

  private var console: Console { session.console }

  func run(install: Bool, dock: Bool) -> Int32 {
    var fields: [(String, JSONValue)] = [
      ("catalog", .string(source.location)), ("date", .string(session.date.formatted(.iso8601))),
    ]
    let reader: SimulatedReader
    switch pickReader() {
    case .success(let picked): reader = picked
    case .failure(let error): return fail("the reader is not in the simulated world", error, fields)
    }
    if let version { session.world.setSoftwareVersion(reader.serialNumber, version.description) }
    let running: SoftwareVersion
    do throws(ReaderError) {
      if let version { running = version } else { running = try SoftwareVersion(reader.softwareVersion) }
    } catch {
      return fail("the reader's software version cannot be read", error, fields)
    }
    let installed = InstalledSoftware(
      deviceType: reader.deviceType, serialNumber: reader.serialNumber, locationId: location, version: running)
    fields.append(("installedSoftware", installed.json))

    // Fetched once: the install reads the same releases (`CheckedCatalog`).
    let manifest: UpdateManifest
    do throws(ReaderError) {
      manifest = try source.manifest(cancellation: Interrupt.cancellation)
    } catch {
      return fail("the catalog could not be read", error, fields)
    }
    let availability = UpdateAvailability(choosingFrom: manifest.releases, for: installed, at: session.date)
    let required = UpdateReport.required(availability, at: session.date)
    fields += UpdateReport.fields(availability, required: required)
    report(reader, installed, availability, required: required == true, install: install)
    guard install, let update = availability.update else { return session.finish(.success(fields)) }
    return self.install(update, on: reader, releases: manifest.releases, dock: dock, fields)
  }

  /// The reader `--serial` and `--device-type` pick, or the first in the world.
  private func pickReader() -> Result<SimulatedReader, ReaderError> {
    let readers = session.world.readers
    if let found = readers.first(where: {
      (serial == nil || $0.serialNumber == serial) && (deviceType == nil || $0.deviceType == deviceType)
    }) {
      return .success(found)
    }
    // "no reader CHB20-1", "no wisePad3 reader", "no wisePad3 reader CHB20-1".
    let wanted = [deviceType?.rawValue, "reader", serial].compactMap { $0 }.joined(separator: " ")
    let world = readers.map { "\($0.serialNumber) (\($0.deviceType.rawValue))" }.joined(separator: ", ")
    var context = ["seed": "\(session.seed)"]
    if let serial { context["serialNumber"] = serial }
    if let deviceType { context["deviceType"] = deviceType.rawValue }
    return .failure(
      ReaderError(
        .readerNotFound,
        "no \(wanted) in the simulated world of seed \(session.seed), which has \(world); "
          + "try another --seed or more --readers", context: context))
  }

  /// Prints what the check found (nothing with `--json`: the outcome line carries it).
  private func report(
    _ reader: SimulatedReader, _ installed: InstalledSoftware, _ availability: UpdateAvailability, required: Bool,
    install: Bool
  ) {
    guard !session.json else { return }
    let lines = UpdateReport.check(
      serialNumber: reader.serialNumber, deviceType: reader.deviceType, installed: installed,
      availability: availability, required: required, install: install, catalog: source.location, date: session.date)
    for line in lines { session.note(line.text, prefix: line.prefix) }
  }

  /// Connects the reader with the catalog and installs `update`; returns the exit status.
  private func install(
    _ update: ReaderSoftwareUpdate, on simulated: SimulatedReader, releases: [UpdateRelease], dock: Bool,
    _ fields: [(String, JSONValue)]
  ) -> Int32 {
    let serial = simulated.serialNumber
    let say = session.say
    if dock, simulated.batteryLevel < SimulatedBluetoothCentral.minimumUpdateBattery, !simulated.isCharging {
      say(
        "\(serial)'s battery is at \(Int((simulated.batteryLevel * 100).rounded())) %: it goes on its charging "
          + "dock first (a reader refuses to update below 50 % unless it is charging).")
      session.world.setBattery(serial, level: simulated.batteryLevel, isCharging: true)
    }
    let installs = InstallProgressView(session: session)
    let catalog = CheckedCatalog(
      releases: releases, images: source.catalog, cancellation: Interrupt.cancellation,
      downloads: installs.downloading)
    let terminal = session.makeTerminal(store: InMemoryReaderStore(), updateCatalog: catalog)
    let delegate = InstallingDelegate(installs: installs, say: say)

    say("Looking for \(serial)…")
    let listener = DiscoveryListener(session: session, quiet: true)
    let scanEnded = Outcome<ReaderError?>()
    let scan: BluetoothScanDiscoveryConfiguration
    do throws(ReaderError) {
      scan = try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(true).setTimeout(30).build()
    } catch {
      return fail("the scan cannot be configured", error, fields)
    }
    let discovery = terminal.discoverReaders(scan, delegate: listener) { scanEnded.set($0) }
    session.run(
      until: { listener.latest.contains { $0.serialNumber == serial } || scanEnded.isSet }, limit: .seconds(31))
    guard let reader = listener.latest.first(where: { $0.serialNumber == serial }) else {
      let stopped = Outcome<Bool>()
      noteInterrupt()
      discovery.cancel { _ in stopped.set(true) }
      session.run(until: { stopped.isSet }, limit: .seconds(10), paced: false, interruptible: false)
      if Interrupt.requested { return fail("interrupted", .canceled("update"), fields) }
      return fail(
        "the reader could not be found",
        ReaderError(
          .readerNotFound, "\(serial) was not seen within 30 s of scanning",
          context: ["serialNumber": serial, "timeout": "30"]), fields)
    }

    let configuration: BluetoothConnectionConfiguration
    do throws(ReaderError) {
      configuration = try BluetoothConnectionConfiguration.Builder(delegate: delegate, locationId: location).build()
    } catch {
      return fail("the connection cannot be configured", error, fields)
    }
    say("Connecting \(serial) to location \(location) with the catalog…")
    let connected = Outcome<Result<Reader, ReaderError>>()
    let connecting = terminal.connectReader(reader, connectionConfig: configuration) { connected.set($0) }
    session.run(until: { connected.isSet }, limit: .seconds(3600), pace: delegate.installs.pace)
    if !connected.isSet {
      noteInterrupt()
      connecting.cancel { _ in }
      session.run(until: { connected.isSet }, limit: .seconds(600), paced: false, interruptible: false)
    }
    let failure = "installing \(update.deviceSoftwareVersion) failed"
    switch connected.value {
    case .success?:
      if let error = delegate.installError {
        return fail(
          "\(failure); the reader connected anyway under the 30-day grace rule, with the update still pending", error,
          fields)
      }
    case .failure(let error)?:
      return fail(delegate.installError == nil ? "connecting failed" : failure, error, fields)
    case nil:
      return fail("interrupted", .canceled("connectReader"), fields)
    }

    if let (what, error) = UpdateReport.installOptional(
      update, terminal: terminal, session: session, pace: delegate.installs.pace, stopping: noteInterrupt)
    {
      return fail(what, error, fields)
    }
    return UpdateReport.installed(update, serial: serial, terminal: terminal, session: session, fields)
  }

  private func noteInterrupt() {
    guard Interrupt.requested, !interruptNoted.isSet else { return }
    interruptNoted.set(true)
    session.screen.lineAfterInterrupt()
  }

  /// Reports `error` on stderr after `what`, ends the command with it, and returns its status (130
  /// after Ctrl-C, whatever the error).
  private func fail(_ what: String, _ error: ReaderError, _ fields: [(String, JSONValue)]) -> Int32 {
    noteInterrupt()
    session.screen.detach()
    console.error("readerctl: \(Interrupt.requested ? "interrupted: " : "")\(what): \(error.report)\n")
    var outcome = CommandOutcome.failure(error, fields)
    if Interrupt.requested { outcome.status = ExitStatus.interrupted }
    return session.finish(outcome)
  }
}

/// The connection's delegate of `update` and `update --bluez`: shows installs and remembers how the last
/// one ended.
nonisolated final class InstallingDelegate: MobileReaderDelegate {
  let installs: InstallProgressView
  private let say: @Sendable (String) -> Void
  private let failure = Locked<ReaderError?>(nil)

  init(installs: InstallProgressView, say: @escaping @Sendable (String) -> Void) {
    self.installs = installs
    self.say = say
  }

  /// Why the last install failed, if it did.
  var installError: ReaderError? { failure.withLock { $0 } }

  func reader(_ reader: Reader, didReportAvailableUpdate update: ReaderSoftwareUpdate) {
    say("\(reader.serialNumber) reports the optional update \(update.deviceSoftwareVersion).")
  }

  func reader(_ reader: Reader, didStartInstallingUpdate update: ReaderSoftwareUpdate, cancelable: Cancelable?) {
    installs.started(update)
  }

  func reader(_ reader: Reader, didReportReaderSoftwareUpdateProgress progress: Float) {
    installs.progressed(Double(progress))
  }

  func reader(_ reader: Reader, didFinishInstallingUpdate update: ReaderSoftwareUpdate?, error: (any Error)?) {
    let error = error as? ReaderError
    failure.withLock { $0 = error }
    installs.finished(update, error: error)
  }
}
