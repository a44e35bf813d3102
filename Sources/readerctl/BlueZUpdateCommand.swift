import Foundation
import ReaderCore
import ReaderKit

/// `readerctl update --bluez`: checks a real reader against an update manifest and installs what applies,
/// as the simulated form does, over BlueZ and the reader's MCUmgr SMP service.
///
/// A real reader says what it runs only once connected (its Device Information Service), so the check
/// connects it first without the catalog (nothing installs) and lets it go; `--install` then connects it
/// again with the catalog, a required update installing while it connects and an optional one with
/// `installAvailableUpdate()` afterwards.
enum BlueZUpdateCommand {
  static let help = CommandHelp(
    command: "update --bluez",
    overview: "Checks a real reader against an update manifest, and installs the update that applies.",
    synopses: [
      "--catalog PATH|URL [--serial S] [--location ID] [--install] [--adapter NAME] [--timeout S] [--record FILE] "
        + "[--json]"
    ],
    discussion: [
      "Connects the reader once to read its model and version (Device Information Service), then prints the "
        + "update that applies as the simulated form does. With --install it connects it again with the catalog: "
        + "the MCUboot image is checked against its digest, uploaded over SMP, tested, booted and confirmed. "
        + BlueZCommands.busNote
    ],
    options: BlueZCommands.sharedOptions + [
      .init("catalog", ["PATH|URL"], "the manifest: a file path, a file: URL, or an http: or https: URL"),
      .init("serial", ["S"], "the reader with serial number S (default: the nearest one found)"),
      .init("location", ["ID"], "the location the reader is at (default tml_readerctl)"),
      .init("install", [], "install the update that applies"),
      .init("timeout", ["S"], "how long to look for the reader, in seconds (default 30)"),
      .json(
        members: "\"catalog\": …, \"date\": …, \"installedSoftware\": …, \"update\": … | null, \"required\": …",
        more: ", with the \"reader\" after an install"),
    ],
    exitStatuses: [
      (0, "checked (and installed)"), (64, "usage"),
      (65, "a malformed manifest, or an image whose size or digest is wrong"),
      (66, "a manifest or image file that is missing or unreadable"),
      (69, "no such reader found, a catalog server that cannot be reached; or " + BlueZCommands.missingStatus.1),
      (74, "the output or the recording cannot be written"),
      (75, "a catalog server that stalls, or an install that cannot run now (reader out of range)"),
      (130, "interrupted"), (1, "other failures"),
    ])

  static func run(_ arguments: [String], console: Console, source: BlueZCommands.Source) throws(UsageError) -> Int32 {
    let options = try help.parse(arguments)
    _ = try options.positionals(named: [])
    guard let catalogText = options.string("catalog") else { throw UsageError("--catalog is required") }
    let (catalog, location) = try catalog(catalogText)
    let readerLocation = options.string("location") ?? UpdateCommand.defaultLocation
    guard !readerLocation.allSatisfy(\.isWhitespace) else { throw UsageError("--location must not be empty") }
    let timeout = try options.number("timeout", default: 30, in: 0.001...86_400)
    Interrupt.install()
    switch source.session(options, notes: [:], console: console, what: "the update") {
    case .failure(let failure): return failure.report([("catalog", .string(location))])
    case .success(let session):
      let run = Check(
        session: session, catalog: catalog, catalogLocation: location, serial: options.string("serial"),
        location: readerLocation, timeout: .seconds(timeout))
      return run.run(install: options.has("install"))
    }
  }

  /// The catalog `--catalog` names, and its location as shown.
  private static func catalog(_ text: String) throws(UsageError) -> (any UpdateCatalog, String) {
    guard !text.isEmpty else { throw UsageError("--catalog needs a file path or a URL") }
    guard let scheme = text.firstMatch(of: /^([A-Za-z][A-Za-z0-9+.\-]*):\/\//)?.1.lowercased() else {
      let catalog = ManifestUpdateCatalog(path: text)
      return (catalog, catalog.manifestURL.path)
    }
    guard let url = URL(string: text), scheme == "file" || url.host.map({ !$0.isEmpty }) == true else {
      throw UsageError("--catalog: '\(text)' is not a valid URL")
    }
    switch scheme {
    case "http", "https": return (HTTPUpdateCatalog(manifestURL: url), url.absoluteString)
    case "file": return (ManifestUpdateCatalog(manifestURL: url), url.absoluteString)
    default: throw UsageError("--catalog takes a file path or an http:, https: or file: URL, not a \(scheme): URL")
    }
  }

  /// One run: the check, and the install if asked.
  private struct Check {
    let session: BlueZSession
    let catalog: any UpdateCatalog
    let catalogLocation: String
    let serial: String?
    let location: String
    let timeout: Duration

    private var say: @Sendable (String) -> Void { session.say }

    func run(install: Bool) -> Int32 {
      var fields: [(String, JSONValue)] = [
        ("catalog", .string(catalogLocation)), ("date", .string(session.date.formatted(.iso8601))),
      ]
      // The check: connect without a catalog to read what the reader runs, then let it go.
      let checking = session.makeTerminal(store: InMemoryReaderStore(), updateCatalog: nil)
      let reader: Reader
      switch connect(checking, delegate: QuietReaderDelegate(), purpose: "to read its model and version") {
      case .success(let connected): reader = connected
      case .failure(let failure): return fail(failure.what, failure.error, fields)
      }
      let released = Outcome<ReaderError?>()
      checking.disconnectReader { released.set($0) }
      session.run(until: { released.isSet }, limit: .seconds(30), paced: false, interruptible: false)
      session.stopPrinting(checking)
      guard let text = reader.deviceSoftwareVersion, let running = try? SoftwareVersion(text) else {
        return fail(
          "the reader's software version cannot be read",
          ReaderError(
            .invalidSoftwareVersion,
            "\(reader.serialNumber) reports no usable firmware revision (Device Information Service 0x2A26): "
              + "\(reader.deviceSoftwareVersion.map { "'\($0)'" } ?? "none")",
            context: ["serialNumber": reader.serialNumber]), fields)
      }
      let installed = InstalledSoftware(
        deviceType: reader.deviceType, serialNumber: reader.serialNumber, locationId: location, version: running)
      fields.append(("installedSoftware", installed.json))
      let availability: UpdateAvailability
      do throws(ReaderError) {
        availability = try catalog.availableUpdate(for: installed, at: session.date)
      } catch {
        return fail("the catalog could not be read", error, fields)
      }
      let required = UpdateReport.required(availability, at: session.date)
      fields += UpdateReport.fields(availability, required: required)
      report(reader, installed, availability, required: required == true, install: install)
      guard install, let update = availability.update else { return session.finish(.success(fields)) }
      return self.install(update, serial: reader.serialNumber, fields)
    }

    struct ConnectFailure: Error {
      let what: String
      let error: ReaderError
    }

    /// Finds the reader (`serial`, or the nearest) and connects it with `delegate`.
    private func connect(
      _ terminal: Terminal, delegate: any MobileReaderDelegate, purpose: String, serial: String? = nil
    )
      -> Result<Reader, ConnectFailure>
    {
      let wanted = serial ?? self.serial
      say("Looking for \(wanted ?? "the nearest reader")…")
      let listener = LatestReaders()
      let scan: BluetoothScanDiscoveryConfiguration
      do throws(ReaderError) {
        scan = try session.scanConfiguration(timeout: timeout)
      } catch {
        return .failure(ConnectFailure(what: "the scan cannot be configured", error: error))
      }
      let scanEnded = Outcome<ReaderError?>()
      let discovery = terminal.discoverReaders(scan, delegate: listener) { scanEnded.set($0) }
      let pick = { listener.latest.first { wanted == nil || $0.serialNumber == wanted } }
      session.run(until: { pick() != nil || scanEnded.isSet }, limit: timeout + .seconds(1))
      guard let found = pick() else {
        let stopped = Outcome<Bool>()
        discovery.cancel { _ in stopped.set(true) }
        session.run(until: { stopped.isSet }, limit: .seconds(10), paced: false, interruptible: false)
        if Interrupt.requested { return .failure(ConnectFailure(what: "interrupted", error: .canceled("update"))) }
        let seconds = DiscoverCommand.timeoutText(timeout.inSeconds)
        return .failure(
          ConnectFailure(
            what: "the reader could not be found",
            error: ReaderError(
              .readerNotFound, "\(wanted ?? "no reader") was not seen within \(seconds) of scanning",
              context: ["serialNumber": wanted ?? "", "timeout": seconds])))
      }
      let configuration: BluetoothConnectionConfiguration
      do throws(ReaderError) {
        configuration = try BluetoothConnectionConfiguration.Builder(delegate: delegate, locationId: location).build()
      } catch {
        return .failure(ConnectFailure(what: "the connection cannot be configured", error: error))
      }
      say("Connecting \(found.serialNumber) \(purpose)…")
      let connected = Outcome<Result<Reader, ReaderError>>()
      let connecting = terminal.connectReader(found, connectionConfig: configuration) { connected.set($0) }
      session.run(until: { connected.isSet }, limit: .seconds(3600))
      if !connected.isSet {
        connecting.cancel { _ in }
        session.run(until: { connected.isSet }, limit: .seconds(600), paced: false, interruptible: false)
      }
      switch connected.value {
      case .success(let reader)?: return .success(reader)
      case .failure(let error)?: return .failure(ConnectFailure(what: "connecting failed", error: error))
      case nil: return .failure(ConnectFailure(what: "interrupted", error: .canceled("connectReader")))
      }
    }

    /// Prints what the check found, in the simulated form's words (nothing with `--json`).
    private func report(
      _ reader: Reader, _ installed: InstalledSoftware, _ availability: UpdateAvailability, required: Bool,
      install: Bool
    ) {
      guard !session.json else { return }
      let lines = UpdateReport.check(
        serialNumber: reader.serialNumber, deviceType: reader.deviceType, installed: installed,
        availability: availability, required: required, install: install, catalog: catalogLocation,
        date: session.date)
      for line in lines { session.console.line(line.prefix + line.text) }
    }

    /// Connects the reader again, with the catalog, and installs `update`; returns the exit status.
    private func install(_ update: ReaderSoftwareUpdate, serial: String, _ fields: [(String, JSONValue)]) -> Int32 {
      let terminal = session.makeTerminal(store: InMemoryReaderStore(), updateCatalog: catalog)
      let delegate = InstallingDelegate(installs: InstallProgressView(session: session), say: say)
      let failure = "installing \(update.deviceSoftwareVersion) failed"
      switch connect(terminal, delegate: delegate, purpose: "to location \(location) with the catalog", serial: serial)
      {
      case .success:
        if let error = delegate.installError {
          return fail(
            "\(failure); the reader connected anyway under the 30-day grace rule, with the update still pending", error,
            fields)
        }
      case .failure(let connectFailure):
        return fail(
          delegate.installError == nil ? connectFailure.what : failure, connectFailure.error, fields)
      }
      if let (what, error) = UpdateReport.installOptional(update, terminal: terminal, session: session) {
        return fail(what, error, fields)
      }
      return UpdateReport.installed(update, serial: serial, terminal: terminal, session: session, fields)
    }

    /// Reports `error` on stderr after `what`, ends the command with it, and returns its status (130
    /// after Ctrl-C, whatever the error).
    private func fail(_ what: String, _ error: ReaderError, _ fields: [(String, JSONValue)]) -> Int32 {
      if Interrupt.requested { session.screen.lineAfterInterrupt() }
      session.screen.detach()
      session.console.error("readerctl: \(Interrupt.requested ? "interrupted: " : "")\(what): \(error.report)\n")
      var outcome = CommandOutcome.failure(error, fields)
      if Interrupt.requested { outcome.status = ExitStatus.interrupted }
      return session.finish(outcome)
    }
  }
}
