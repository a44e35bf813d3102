#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The software-update lifecycle of the terminal's reader: what is checked, when, what is installed,
/// and what the terminal learns from it.
///
/// Three kinds of work, one at a time: preparing a reader whose link just came up (its software is
/// checked — against the catalog, or the connection's test update — and a required update installed
/// before it counts as connected), a look at the catalog every `checkInterval` while a reader is
/// connected and the line is idle, and the app's `installAvailableUpdate()`. Pure: the terminal
/// machine feeds it the link's facts (a reader to prepare, the link gone, the connected reader) and
/// routes its typed outcomes (`prepared`, `preparationFailed`, `offered`-style reader changes,
/// `installFinished`) to the link and the command line-up.
///
/// Rules that live here and nowhere else:
/// - An answer (of the catalog, of an image fetch) is taken only for the request that is still
///   waited for; requests and install handles are numbered so a late answer is never taken for a
///   newer one's.
/// - A catalog that cannot answer is never read as "no update": a reader being prepared cannot be
///   vouched for, so its connection fails; an idle check is simply tried again later.
/// - An offer is reported (`didReportAvailableUpdate`) when it differs from the one the reader
///   already carries, whether the reader is being prepared or connected and idle.
/// - While connected an update is only offered; a required one installs at the next connection.
/// - A required update that fails connects the reader anyway only by the grace rule
///   (`UpdatePolicy.connectsDespiteFailure`); a cancelled one never does.
/// - A test update is drawn once per connection; a reconnection sees what is still pending of it.
///   Its scripted failure (`UpdateFault`) is played by the install, never sent to the reader.
/// - An install whose cancel the reader never confirmed may still finish: a late success from that
///   reader is believed (the connected reader then reports the new version).
package struct SoftwareUpdateStateMachine {
  package typealias JobID = UInt64

  /// How the terminal handles software updates.
  package struct Settings: Sendable {
    /// Whether a catalog answers `checkForUpdate` and `fetchImage`.
    package var hasCatalog: Bool
    /// The rules: required or optional, and the grace rule.
    package var policy: UpdatePolicy
    /// How often the catalog is asked again while a reader is connected and the line idle.
    package var checkInterval: Duration
    /// The date at the scheduler's time zero: `requiredAt` and the grace window are dates.
    package var epoch: Date

    package init(
      hasCatalog: Bool = false, policy: UpdatePolicy = UpdatePolicy(), checkInterval: Duration = .seconds(3600),
      epoch: Date = Date(timeIntervalSince1970: 1_767_225_600)
    ) {
      self.hasCatalog = hasCatalog
      self.policy = policy
      self.checkInterval = checkInterval
      self.epoch = epoch
    }
  }

  /// The timers the lifecycle asks for.
  package enum Timer: Hashable, Sendable {
    /// One of the running install's timers.
    case install(UpdateInstallStateMachine.Timer)
    /// The next look at the catalog while a reader is connected.
    case check
  }

  package enum Action: Equatable, Sendable {
    /// Ask the catalog; answered by `catalogAnswered(request:_:now:connectedReader:)`.
    case checkForUpdate(request: UInt64, InstalledSoftware, at: Date)
    /// Download and verify an image; answered by `imageFetched(request:_:now:)`.
    case fetchImage(request: UInt64, FirmwareImage)
    /// Send the update to the reader; answered by `readerProgress` and `readerFinished`.
    case installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?)
    /// Ask the reader to stop installing; answered by `readerFinished`.
    case cancelUpdate(serialNumber: String)
    case arm(Timer, after: Duration)
    case disarm(Timer)
    /// An install that can be cancelled started: create the `Cancelable` handed to
    /// `didStartInstallingUpdate` (cancelling it feeds `cancelInstall(handle:)`).
    case openInstallHandle(UInt64)
    /// The install of `handle` ended.
    case closeInstallHandle(UInt64, canceled: Bool)
    /// Tell the reader's delegate (and the event stream).
    case report(TerminalEvent.Kind)
    /// The reader being prepared may count as connected, as `reader`; `announce` is an update newly
    /// offered to it, to report once it does.
    case prepared(Reader, announce: ReaderSoftwareUpdate?)
    /// The reader being prepared cannot be used: its connection (or reconnection) fails with the error.
    case preparationFailed(ReaderError)
    /// What the link loss made of the install under way: the link machine ends a connection being
    /// prepared with this error.
    case interrupted(ReaderError)
    /// A test update drops the link: let go of it as if the reader had dropped it, and end the
    /// connection being prepared with the error.
    case dropLink(serialNumber: String, ReaderError)
    /// The connected reader now reads `Reader` (a new version installed, a new offer).
    case connectedReaderChanged(Reader)
    /// The app's install, command `JobID`, is over.
    case installFinished(JobID, Result<Reader?, ReaderError>)
  }

  /// What an install is for.
  private enum Purpose: Equatable {
    /// Preparing a reader whose link came up; `availability` decides the grace rule.
    case preparing(UpdateAvailability)
    /// The app's `installAvailableUpdate()`, command `JobID`.
    case app(JobID)
  }

  /// A catalog request waited for.
  private struct Check: Equatable {
    var request: UInt64
    var reader: Reader
    /// Whether the reader is being prepared (otherwise: connected, and the line idle).
    var preparing: Bool
  }

  /// An install under way.
  private struct Install {
    var machine: UpdateInstallStateMachine
    var reader: Reader
    var purpose: Purpose
    /// The install's `Cancelable`, when it can be cancelled.
    var handle: UInt64?
    /// The image request whose answer the install waits for.
    var request: UInt64?
  }

  /// What runs.
  private enum State {
    /// Nothing: no check, no install.
    case idle
    /// Waiting for the catalog.
    case checking(Check)
    /// An install runs.
    case installing(Install)
  }

  /// The current connection's test update, and what it resolved to at its first preparation.
  private struct TestUpdate {
    var update: TestReaderUpdate
    var resolved: (availability: UpdateAvailability, fault: UpdateFault?)?
  }

  private var state = State.idle
  private var test: TestUpdate?
  private var requests: UInt64 = 0
  private var handles: UInt64 = 0
  /// An install whose cancel the reader never confirmed: a late success from it is still believed.
  private var unconfirmed: (serialNumber: String, update: ReaderSoftwareUpdate)?
  private let settings: Settings

  package init(settings: Settings = Settings()) {
    self.settings = settings
  }

  /// Whether any update work runs (a check or an install).
  package var isIdle: Bool {
    if case .idle = state { return true }
    return false
  }

  /// Whether links that come up must be prepared before their reader counts as connected.
  package func preparesReaders(testUpdate: TestReaderUpdate?) -> Bool {
    settings.hasCatalog || testUpdate != nil
  }

  private func date(_ now: Duration) -> Date { settings.epoch.addingTimeInterval(now.inSeconds) }

  // MARK: Connections

  /// A new connection starts, with its test update (nil: the catalog's).
  package mutating func connectionStarted(testUpdate: TestReaderUpdate?) {
    test = testUpdate.map { TestUpdate(update: $0) }
  }

  /// A reader counts as connected (or reconnected): the hourly look at the catalog starts, unless the
  /// connection sees a test update instead of the catalog's.
  package func readerConnected() -> [Action] {
    guard settings.hasCatalog, test == nil else { return [] }
    return [.arm(.check, after: settings.checkInterval)]
  }

  /// The reader is no longer connected: no more looks at the catalog.
  package func readerDisconnected() -> [Action] {
    [.disarm(.check)]
  }

  // MARK: Inputs

  /// The link to `reader` came up: check its software before it counts as connected.
  package mutating func prepare(_ reader: Reader, now: Duration, random: inout SeededRandom) -> [Action] {
    guard let test else { return askCatalog(about: reader, preparing: true, now: now) }
    if let first = test.resolved {
      let pending = UpdateAvailability(
        update: reader.availableUpdate, installedVersionSupersededAt: first.availability.installedVersionSupersededAt)
      return decide(pending, for: reader, preparing: true, now: now, connectedReader: nil)
    }
    let resolved = test.update.resolve(
      installedVersion: reader.deviceSoftwareVersion ?? "", at: date(now), random: &random)
    self.test?.resolved = resolved
    return decide(resolved.availability, for: reader, preparing: true, now: now, connectedReader: nil)
  }

  /// The hourly timer fired. `connectedReader` is the reader connected now (nil: none, the timer
  /// stops); `lineIsIdle` whether no command runs.
  package mutating func checkTimerFired(connectedReader: Reader?, lineIsIdle: Bool, now: Duration) -> [Action] {
    guard let reader = connectedReader else { return [] }
    let again = readerConnected()
    guard lineIsIdle, case .idle = state else { return again }
    return again + askCatalog(about: reader, preparing: false, now: now)
  }

  /// `installAvailableUpdate()`, command `job`, for the connected `reader` (nil: none): installs its
  /// available update, or reports at once that there is none.
  package mutating func installAvailable(
    _ job: JobID, on reader: Reader?, notConnected: ReaderError, now: Duration
  ) -> [Action] {
    if case .checking(let check) = state, !check.preparing { state = .idle }  // The app's install goes first.
    guard let reader, case .idle = state else { return [.installFinished(job, .failure(notConnected))] }
    guard let available = reader.availableUpdate else {
      return [
        .report(.didFinishInstallingUpdate(reader, update: nil, error: nil)), .installFinished(job, .success(reader)),
      ]
    }
    return startInstall(available, on: reader, for: .app(job), now: now)
  }

  /// The catalog answered request `request`. `connectedReader` is the reader connected now.
  package mutating func catalogAnswered(
    request: UInt64, _ result: Result<UpdateAvailability, ReaderError>, now: Duration, connectedReader: Reader?
  ) -> [Action] {
    guard case .checking(let check) = state, check.request == request else { return [] }
    state = .idle
    switch result {
    case .success(let availability):
      return decide(
        availability, for: check.reader, preparing: check.preparing, now: now, connectedReader: connectedReader)
    case .failure(let cause):
      return check.preparing ? [.preparationFailed(Self.uncheckable(cause))] : []
    }
  }

  /// The image of request `request` was fetched and verified, or could not be.
  package mutating func imageFetched(request: UInt64, _ result: Result<Data, ReaderError>, now: Duration) -> [Action] {
    guard case .installing(var install) = state, install.request == request else { return [] }
    install.request = nil
    return step(&install, install.machine.imageFetched(result, now: now), now: now)
  }

  /// The reader `serialNumber` reported how far its install got.
  package mutating func readerProgress(serialNumber: String, _ progress: Double, now: Duration) -> [Action] {
    guard case .installing(var install) = state, install.reader.serialNumber == serialNumber else { return [] }
    return step(&install, install.machine.readerProgress(progress, now: now), now: now)
  }

  /// The reader `serialNumber` finished installing (`nil`: success). `connectedReader` is the reader
  /// connected now. A finish from a reader whose install was given up without its confirmation is
  /// still believed.
  package mutating func readerFinished(
    serialNumber: String, _ error: ReaderError?, now: Duration, connectedReader: Reader?
  ) -> [Action] {
    guard case .installing(var install) = state, install.reader.serialNumber == serialNumber else {
      return lateFinish(serialNumber: serialNumber, error, connectedReader: connectedReader)
    }
    return step(&install, install.machine.readerFinished(error), now: now, connectedReader: connectedReader)
  }

  /// A timer fired.
  package mutating func timerFired(_ timer: UpdateInstallStateMachine.Timer, now: Duration) -> [Action] {
    guard case .installing(var install) = state else { return [] }
    return step(&install, install.machine.timerFired(timer, now: now), now: now)
  }

  /// The app cancelled the install of `handle`.
  package mutating func cancelInstall(handle: UInt64, now: Duration) -> [Action] {
    guard case .installing(var install) = state, install.handle == handle else { return [] }
    return step(&install, install.machine.cancel(), now: now)
  }

  /// The link to `serialNumber` went down: a check for it is dropped, an install is interrupted
  /// (`interrupted` says with what, for a connection being prepared).
  package mutating func linkLost(serialNumber: String, now: Duration) -> [Action] {
    switch state {
    case .checking(let check) where check.reader.serialNumber == serialNumber:
      state = .idle  // A check whose answer no longer matters.
      return []
    case .installing(var install) where install.reader.serialNumber == serialNumber:
      let steps = install.machine.linkLost()
      var actions = step(&install, steps, now: now, linkGone: true)
      for case .finished(_, let error?) in steps { actions.append(.interrupted(error)) }
      return actions
    case .idle, .checking, .installing:
      return []
    }
  }

  /// The connection being prepared was cancelled: its update work stops at once, and nothing
  /// follows for the link (it is being let go of).
  package mutating func abandon(now: Duration) -> [Action] {
    switch state {
    case .checking(let check) where check.preparing:
      state = .idle
      return []
    case .installing(var install) where isPreparing(install):
      return step(&install, install.machine.abandon(), now: now, abandoned: true)
    case .idle, .checking, .installing:
      return []
    }
  }

  private func isPreparing(_ install: Install) -> Bool {
    if case .preparing = install.purpose { return true }
    return false
  }

  // MARK: Checking

  private mutating func askCatalog(about reader: Reader, preparing: Bool, now: Duration) -> [Action] {
    let version: SoftwareVersion
    do {
      version = try SoftwareVersion(reader.deviceSoftwareVersion ?? "")
    } catch {
      state = .idle
      return preparing ? [.preparationFailed(Self.uncheckable(error))] : []
    }
    requests += 1
    state = .checking(Check(request: requests, reader: reader, preparing: preparing))
    let installed = InstalledSoftware(
      deviceType: reader.deviceType, serialNumber: reader.serialNumber, locationId: reader.locationId ?? "",
      version: version)
    return [.checkForUpdate(request: requests, installed, at: date(now))]
  }

  /// Why a reader being prepared cannot be vouched for.
  private static func uncheckable(_ cause: ReaderError) -> ReaderError {
    var context = cause.context
    context["cause"] = "\(cause.code)"
    return ReaderError(
      .readerSoftwareUpdateFailedServerError, "the reader's software could not be checked: \(cause.message)",
      context: context)
  }

  /// The catalog (or the test update) said what applies to `reader`.
  private mutating func decide(
    _ availability: UpdateAvailability, for reader: Reader, preparing: Bool, now: Duration, connectedReader: Reader?
  ) -> [Action] {
    state = .idle
    let decision = settings.policy.decide(availability, at: date(now))
    guard preparing else { return offer(decision, to: reader, connectedReader: connectedReader) }
    var prepared = reader
    switch decision {
    case .required(let required):
      return startInstall(required, on: reader, for: .preparing(availability), now: now)
    case .upToDate:
      prepared.availableUpdate = nil
      return [.prepared(prepared, announce: nil)]
    case .optional(let optional):
      let known = reader.availableUpdate == optional
      prepared.availableUpdate = optional
      return [.prepared(prepared, announce: known ? nil : optional)]
    }
  }

  /// An idle look at the catalog decided `decision`: the connected reader is told of a new offer.
  private func offer(_ decision: UpdatePolicy.Decision, to reader: Reader, connectedReader: Reader?) -> [Action] {
    let offered: ReaderSoftwareUpdate? =
      switch decision {
      case .upToDate: nil
      case .optional(let update), .required(let update): update
      }
    guard var changed = connectedReader, changed.serialNumber == reader.serialNumber,
      changed.availableUpdate != offered
    else { return [] }
    changed.availableUpdate = offered
    return [.connectedReaderChanged(changed)]
      + (offered.map { [.report(.didReportAvailableUpdate(changed, update: $0))] } ?? [])
  }

  // MARK: Installing

  private mutating func startInstall(
    _ update: ReaderSoftwareUpdate, on reader: Reader, for purpose: Purpose, now: Duration
  ) -> [Action] {
    var install = Install(
      machine: UpdateInstallStateMachine(
        update: update, fault: test?.resolved?.fault, batteryLevel: reader.batteryLevel),
      reader: reader, purpose: purpose)
    return step(&install, install.machine.start(at: now, date: date(now)), now: now)
  }

  /// Routes what the install machine of `install` said, and keeps `install` as the state unless it
  /// finished. `linkGone`: the link is down, the link machine ends the connection; `abandoned`: the
  /// connection is being let go of. Either way the finish only reports.
  private mutating func step(
    _ install: inout Install, _ steps: [UpdateInstallStateMachine.Action], now: Duration,
    connectedReader: Reader? = nil, linkGone: Bool = false, abandoned: Bool = false
  ) -> [Action] {
    var actions: [Action] = []
    var unconfirmedCancel = false
    var dropsLink = false
    state = .idle  // Taken out while it changes.
    let serial = install.reader.serialNumber
    for step in steps {
      switch step {
      case .started(let started, let cancelable):
        if cancelable {
          handles += 1
          install.handle = handles
          actions.append(.openInstallHandle(handles))
        }
        actions.append(.report(.didStartInstallingUpdate(install.reader, update: started, cancelable: cancelable)))
      case .progress(let progress):
        actions.append(.report(.didReportReaderSoftwareUpdateProgress(install.reader, progress: progress)))
      case .fetchImage(let image):
        requests += 1
        install.request = requests
        actions.append(.fetchImage(request: requests, image))
      case .install(let pending, let image):
        actions.append(.installUpdate(serialNumber: serial, update: pending, image: image))
      case .cancelInstall:
        actions.append(.cancelUpdate(serialNumber: serial))
      case .arm(let timer, let delay):
        actions.append(.arm(.install(timer), after: delay))
      case .disarm(let timer):
        actions.append(.disarm(.install(timer)))
      case .cancelUnconfirmed:
        unconfirmedCancel = true
      case .dropLink:
        dropsLink = true
      case .finished(let installed, let error):
        actions += finish(
          install, installed, error, unconfirmedCancel: unconfirmedCancel, connectedReader: connectedReader,
          reportsOnly: linkGone || abandoned || dropsLink, now: now)
        if dropsLink, let error { actions.append(.dropLink(serialNumber: serial, error)) }
        return actions
      }
    }
    state = .installing(install)
    return actions
  }

  /// The install of `install` finished with `error` (nil: success). `reportsOnly`: the connection it
  /// prepared is over already, so only the reports follow.
  private mutating func finish(
    _ install: Install, _ installed: ReaderSoftwareUpdate, _ error: ReaderError?, unconfirmedCancel: Bool,
    connectedReader: Reader?, reportsOnly: Bool, now: Duration
  ) -> [Action] {
    var actions: [Action] = []
    var reader = install.reader
    if error == nil {
      reader.deviceSoftwareVersion = installed.deviceSoftwareVersion
      reader.availableUpdate = nil
    }
    if case .app = install.purpose, error == nil, var connected = connectedReader {
      // What the callback reads (`connectedReader`) already runs the new version.
      connected.deviceSoftwareVersion = installed.deviceSoftwareVersion
      connected.availableUpdate = nil
      actions.append(.connectedReaderChanged(connected))
      reader = connected
    }
    if unconfirmedCancel { unconfirmed = (reader.serialNumber, installed) }
    actions.append(.report(.didFinishInstallingUpdate(reader, update: installed, error: error)))
    if let handle = install.handle { actions.append(.closeInstallHandle(handle, canceled: error?.code == .canceled)) }
    switch install.purpose {
    case .app(let job):
      return actions + [.installFinished(job, error.map { .failure($0) } ?? .success(reader))]
    case .preparing(let availability):
      guard !reportsOnly else { return actions }
      guard let error else { return actions + [.prepared(reader, announce: nil)] }
      if error.code == .readerSoftwareUpdateFailedInterrupted {
        // Reported by a reader whose link is still up (or that went silent): the connection ends here.
        return actions + [.preparationFailed(error)]
      }
      if error.code == .canceled {
        return actions + [
          .preparationFailed(
            ReaderError(
              .unsupportedReaderVersion,
              "the required update was cancelled; the reader cannot be used until it is installed",
              context: ["version": reader.deviceSoftwareVersion ?? "", "update": installed.deviceSoftwareVersion]))
        ]
      }
      guard settings.policy.connectsDespiteFailure(availability, error: error, at: date(now)) else {
        return actions + [.preparationFailed(error)]
      }
      // The grace rule: it connects with the update pending, tried again at the next connection.
      reader.availableUpdate = installed
      return actions + [.prepared(reader, announce: installed)]
    }
  }

  /// A reader finished an install the terminal had given up on (its cancel was never confirmed):
  /// the reader runs the new version, so the connected reader says so.
  private mutating func lateFinish(serialNumber: String, _ error: ReaderError?, connectedReader: Reader?)
    -> [Action]
  {
    guard let late = unconfirmed, late.serialNumber == serialNumber else { return [] }
    unconfirmed = nil
    guard error == nil, var connected = connectedReader, connected.serialNumber == serialNumber else { return [] }
    connected.deviceSoftwareVersion = late.update.deviceSoftwareVersion
    connected.availableUpdate = nil
    return [.connectedReaderChanged(connected)]
  }
}
