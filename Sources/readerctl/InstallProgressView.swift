import ReaderCore
import ReaderKit

/// Shows a reader's software update installs as they happen, from the update delegate calls.
///
/// On a terminal that moves its cursor, a progress bar with an ETA redraws in place below the
/// narration (`LiveRegion`) and stays on screen, whole, when the install ends; elsewhere (piped,
/// `TERM=dumb`) a line is printed at the start, at every quarter and at the end. With `--json`
/// nothing is shown: the events say it all. Times are simulated, so the same seed shows the same
/// lines at any pace.
final class InstallProgressView: Sendable {
  private struct State {
    var install: UpdateProgress?
    /// The quarters already narrated (plain lines only).
    var quarters = 0
    /// The image being downloaded before the install can go on.
    var download: FirmwareImage?
  }

  /// How many times faster than the rest of a paced run an install is shown (see `pace()`): the bar
  /// is worth watching for a few seconds, not for the simulated minutes an install takes.
  static let installPace = 8.0

  private let session: any ReaderSession
  private let state = Locked(State())

  /// A view on `session`'s screen.
  init(session: any ReaderSession) { self.session = session }

  /// Whether an install is under way.
  var isInstalling: Bool { state.withLock { $0.install != nil } }

  /// The pace multiplier for `SimulationSession.run`: `installPace` while an install is under way.
  func pace() -> Double { isInstalling ? Self.installPace : 1 }

  private var drawsBar: Bool { !session.json && session.screen.isLive }

  /// `didStartInstallingUpdate`.
  func started(_ update: ReaderSoftwareUpdate) {
    let install = UpdateProgress(update: update, startedAt: session.now)
    state.withLock { $0 = State(install: install) }
    session.say(
      "Installing \(update.deviceSoftwareVersion) (\(update.components); estimate: \(update.durationEstimate))…")
    if drawsBar { session.screen.show { space in [install.line(width: space.columns)] } }
  }

  /// The install's image is being downloaded (`CheckedCatalog`), or has been: until it is there the
  /// reader has nothing to install, so the view says so instead of showing the install at 0 %.
  func downloading(_ download: CheckedCatalog.Download) {
    switch download {
    case .started(let image):
      let install = state.withLock { state -> UpdateProgress? in
        state.download = image
        return state.install
      }
      let what = install.map { "the image of \($0.update.deviceSoftwareVersion)" } ?? "the image"
      let host = image.url.host.map { " from \($0)" } ?? ""
      session.say("Downloading \(what) (\(image.size) bytes)\(host)…")
      if drawsBar {
        let version = install?.update.deviceSoftwareVersion ?? ""
        session.screen.show { space in
          [
            "  Downloading \(version)  \(image.size) bytes from \(image.url.host ?? "the server")…".fitted(
              to: space.columns)
          ]
        }
      }
    case .finished(_, let error):
      let install = state.withLock { state -> UpdateProgress? in
        state.download = nil
        return state.install
      }
      if error == nil, drawsBar, let install { session.screen.show { space in [install.line(width: space.columns)] } }
    }
  }

  /// `didReportReaderSoftwareUpdateProgress`.
  func progressed(_ progress: Double) {
    let now = session.now
    let (install, quarter) = state.withLock { state -> (UpdateProgress?, Bool) in
      guard var install = state.install else { return (nil, false) }
      install.report(progress, at: now)
      state.install = install
      let quarters = min(3, install.percent / 25)
      defer { state.quarters = max(state.quarters, quarters) }
      return (install, quarters > state.quarters)
    }
    guard let install else { return }
    if drawsBar {
      session.screen.show { space in [install.line(width: space.columns)] }
    } else if quarter {
      session.say(install.summary)
    }
  }

  /// `didFinishInstallingUpdate`: leaves the bar on screen and says how the install ended. Says
  /// nothing when nothing was installing (`installAvailableUpdate()` with no update available).
  func finished(_ update: ReaderSoftwareUpdate?, error: ReaderError?) {
    let ended = state.withLock { state -> UpdateProgress? in
      defer { state = State() }
      return state.install
    }
    guard let ended else { return }
    if drawsBar { session.screen.detach() }
    let version = update?.deviceSoftwareVersion ?? ended.update.deviceSoftwareVersion
    if let error {
      session.say("Installing \(version) failed at \(ended.percent) % (\(error.code)).")
    } else {
      session.say("Installed \(version) in \(UpdateProgress.clock(session.now - ended.startedAt)).")
    }
  }
}
