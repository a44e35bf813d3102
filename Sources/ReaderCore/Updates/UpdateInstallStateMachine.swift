#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One software update install, from start to finish: fetch and verify the image, send it to the
/// reader, report its progress, and finish exactly once.
///
/// Guarantees, whatever arrives late or at once (a link loss and a cancel together, a progress tick
/// after the finish): `started` comes first and once; progress starts at 0, never goes back, stays
/// below 1 until the reader confirms, ends at exactly 1 on success and is reported at most once per
/// `progressInterval`; `finished` comes last and once. A reader that drops the link mid-install keeps
/// its old version: the reader installs nothing it has not fully received and confirmed.
///
/// A test update's scripted failure (`UpdateFault`) is played here, as Stripe's SDK plays test
/// updates on any reader: the reader is never asked to misbehave. A low battery refuses the install
/// before it is sent; a reader error stops the reader once it reports `atProgress`; a dropped link
/// lets go of the link once it does (`dropLink`), as if the reader had dropped it.
package struct UpdateInstallStateMachine {
  package enum Timer: Hashable, Sendable {
    /// The next progress report.
    case progress
    /// How long the reader has to confirm a cancel.
    case cancelReply
    /// How long a reader may go without reporting anything while it installs.
    case stall
  }

  package enum Action: Equatable, Sendable {
    /// The install began; `cancelable` is false for an incremental-only update.
    case started(ReaderSoftwareUpdate, cancelable: Bool)
    /// Progress in `0...1`.
    case progress(Double)
    /// Download and verify the image; answered by `imageFetched`.
    case fetchImage(FirmwareImage)
    /// Send the update (with its verified image, if it has one) to the reader; answered by
    /// `readerProgress` and `readerFinished`.
    case install(ReaderSoftwareUpdate, image: Data?)
    /// Ask the reader to stop; answered by `readerFinished`.
    case cancelInstall
    /// The reader never confirmed the cancel: the install is given up (`finished` follows), and a
    /// late success from the reader is to be believed.
    case cancelUnconfirmed
    /// A test update drops the link here: let go of it as if the reader had (`finished` follows,
    /// interrupted).
    case dropLink
    case arm(Timer, after: Duration)
    case disarm(Timer)
    /// The install is over: `nil` is success. Always the last action, exactly once.
    case finished(ReaderSoftwareUpdate, ReaderError?)
  }

  /// What has been reported of the reader's progress.
  private struct Progress: Equatable {
    /// The last value reported.
    var reported = 0.0
    /// The reader's latest value.
    var latest = 0.0
    /// When the last value was reported.
    var reportedAt: Duration
    /// Whether a report is due at the end of the interval.
    var due = false
    /// When the reader last reported anything.
    var heardAt: Duration
  }

  /// Where the install stands.
  private enum State: Equatable {
    /// Not started.
    case idle
    /// Downloading and verifying the image.
    case fetching
    /// The reader installs.
    case installing(Progress)
    /// The app cancelled; waiting for the reader to stop.
    case canceling(Progress)
    /// Over; late input is absorbed.
    case finished
  }

  /// How often progress is reported at most.
  package static let progressInterval = Duration.milliseconds(250)
  /// The highest progress reported before the reader confirms the install.
  package static let progressBeforeConfirmation = 0.99
  /// How long the reader has to confirm a cancel before the install is given up.
  package static let cancelReplyTimeout = Duration.seconds(10)
  /// How long a reader installing an update may stay silent before the install counts as
  /// interrupted (a reader that hangs must not hold a connect, and every command behind it, forever).
  package static let stallTimeout = Duration.seconds(60)

  package let update: ReaderSoftwareUpdate
  private let fault: UpdateFault?
  /// The reader's battery level, for the error of a test update refused for a low battery.
  private let batteryLevel: Double?
  private var state = State.idle

  /// An install of `update`; `fault` is the failure a test update plays, on a reader whose battery
  /// reads `batteryLevel`.
  package init(update: ReaderSoftwareUpdate, fault: UpdateFault? = nil, batteryLevel: Double? = nil) {
    self.update = update
    self.fault = fault
    self.batteryLevel = batteryLevel
  }

  /// Whether the app can cancel it (Stripe's rule: not an incremental-only update).
  package var isCancelable: Bool { !update.isIncrementalOnly }

  package var isFinished: Bool { state == .finished }

  /// Starts the install at `now` (an expired update fails at once, after `started`).
  package mutating func start(at now: Duration, date: Date) -> [Action] {
    guard state == .idle else { return [] }
    let opening: [Action] = [.started(update, cancelable: isCancelable), .progress(0)]
    if update.isExpired(at: date) {
      return opening
        + finish(
          ReaderError(
            .readerSoftwareUpdateFailedExpiredUpdate,
            "the update expired before it was installed; connect again to get a current one",
            context: ["version": update.deviceSoftwareVersion]))
    }
    if let image = update.image {
      state = .fetching
      return opening + [.fetchImage(image)]
    }
    return opening + beginInstall(image: nil, now: now)
  }

  /// The image was downloaded and verified, or could not be.
  package mutating func imageFetched(_ result: Result<Data, ReaderError>, now: Duration) -> [Action] {
    guard state == .fetching else { return [] }
    switch result {
    case .success(let data):
      return beginInstall(image: data, now: now)
    case .failure(let cause):
      var context = cause.context
      context["cause"] = "\(cause.code)"
      return finish(
        ReaderError(
          .readerSoftwareUpdateFailedServerError, "the update's image could not be obtained: \(cause.message)",
          context: context))
    }
  }

  /// The reader reported how far it got: reported now if the last report is an interval old,
  /// otherwise at the end of the interval (a timer is armed only when there is something to report).
  package mutating func readerProgress(_ progress: Double, now: Duration) -> [Action] {
    let value = progress.isNaN ? 0 : min(max(progress, 0), 1)
    switch state {
    case .installing where playsFailure(at: value):
      return playFailure(at: value)
    case .installing(var current):
      current.latest = max(current.latest, value)
      current.heardAt = now
      let actions = reportOrSchedule(&current, now: now)
      state = .installing(current)
      return actions
    case .canceling(var current):
      current.latest = max(current.latest, value)
      current.heardAt = now
      state = .canceling(current)
      return []  // No progress is reported while the reader stops.
    case .idle, .fetching, .finished:
      return []
    }
  }

  private func reportOrSchedule(_ current: inout Progress, now: Duration) -> [Action] {
    let value = min(current.latest, Self.progressBeforeConfirmation)
    guard value > current.reported, !current.due else { return [] }
    let waited = now - current.reportedAt
    guard waited >= Self.progressInterval else {
      current.due = true
      return [.arm(.progress, after: Self.progressInterval - waited)]
    }
    current.reported = value
    current.reportedAt = now
    return [.progress(value)]
  }

  /// The reader finished: `nil` is success (also when a cancel came too late to stop it).
  package mutating func readerFinished(_ error: ReaderError?) -> [Action] {
    switch state {
    case .installing(let current), .canceling(let current):
      guard let error else { return (current.reported < 1 ? [.progress(1)] : []) + finish(nil) }
      if case .canceling = state { return finish(ReaderError.canceled("installUpdate")) }
      return finish(error)
    case .idle, .fetching, .finished:
      return []
    }
  }

  /// The link to the reader went down: the install is interrupted (the reader keeps its version).
  package mutating func linkLost() -> [Action] {
    switch state {
    case .fetching, .installing, .canceling:
      return finish(
        interruption(Self.lostLink))
    case .idle, .finished:
      return []
    }
  }

  /// Why an install ends when the link to its reader goes.
  private static let lostLink =
    "the reader was lost while installing the update (out of range, switched off or out of battery); it keeps its previous version"

  private func interruption(_ message: String) -> ReaderError {
    ReaderError(.readerSoftwareUpdateFailedInterrupted, message, context: ["version": update.deviceSoftwareVersion])
  }

  /// The install is given up at once, because the connection it belongs to was cancelled (the link
  /// is about to be let go of, so the reader stops and keeps its version).
  package mutating func abandon() -> [Action] {
    switch state {
    case .fetching, .installing, .canceling: return finish(ReaderError.canceled("installUpdate"))
    case .idle, .finished: return []
    }
  }

  /// The app cancelled the install. An incremental-only update cannot be cancelled.
  package mutating func cancel() -> [Action] {
    guard isCancelable else { return [] }
    switch state {
    case .fetching:
      return finish(ReaderError.canceled("installUpdate"))  // Nothing was sent to the reader.
    case .installing(let current):
      state = .canceling(current)
      return [.cancelInstall, .disarm(.progress), .arm(.cancelReply, after: Self.cancelReplyTimeout)]
    case .idle, .canceling, .finished:
      return []
    }
  }

  package mutating func timerFired(_ timer: Timer, now: Duration) -> [Action] {
    switch (timer, state) {
    case (.progress, .installing(var current)):
      current.due = false
      let actions = reportOrSchedule(&current, now: now)
      state = .installing(current)
      return actions
    case (.progress, .canceling):
      return []  // No progress is reported while the reader stops.
    case (.cancelReply, .canceling):
      var unconfirmed = ReaderError.canceled("installUpdate")
      unconfirmed.context["confirmed"] = "false"
      return [.cancelUnconfirmed] + finish(unconfirmed)
    case (.stall, .installing(let current)), (.stall, .canceling(let current)):
      let silent = now - current.heardAt
      guard silent >= Self.stallTimeout else { return [.arm(.stall, after: Self.stallTimeout - silent)] }
      return finish(
        interruption(
          "the reader stopped reporting while installing the update (\(Self.stallTimeout.formattedSeconds) without a word)"
        ))
    case (_, .idle), (_, .fetching), (_, .installing), (_, .canceling), (_, .finished):
      return []  // A timer that outlived the state that armed it.
    }
  }

  private mutating func beginInstall(image: Data?, now: Duration) -> [Action] {
    if fault == .lowBattery {
      let level = batteryLevel.map { "\(Int(($0 * 100).rounded())) %" } ?? "unknown"
      return finish(
        ReaderError(
          .readerSoftwareUpdateFailedBatteryLow, "the reader's battery is too low to install the update; charge it",
          context: ["batteryLevel": level]))
    }
    state = .installing(Progress(reportedAt: now, heardAt: now))
    return [.install(update, image: image), .arm(.stall, after: Self.stallTimeout)]
  }

  /// Whether the test update's scripted failure happens once the reader reports `progress`.
  private func playsFailure(at progress: Double) -> Bool {
    switch fault {
    case .fail(let at), .dropLink(let at): progress >= at
    case .lowBattery, nil: false
    }
  }

  /// Plays the test update's failure at `progress`: the reader is stopped, or the link let go of.
  private mutating func playFailure(at progress: Double) -> [Action] {
    guard case .fail = fault else {
      return [.dropLink] + finish(interruption(Self.lostLink))
    }
    return [.cancelInstall]
      + finish(
        ReaderError(
          .readerSoftwareUpdateFailedReaderError, "the reader could not install the update",
          context: ["progress": "\(Int((progress * 100).rounded())) %"]))
  }

  private mutating func finish(_ error: ReaderError?) -> [Action] {
    state = .finished
    return [.disarm(.progress), .disarm(.cancelReply), .disarm(.stall), .finished(update, error)]
  }
}
