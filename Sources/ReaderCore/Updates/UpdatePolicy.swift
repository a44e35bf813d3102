#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the terminal does with the update a catalog offers, and when a failed required update still
/// lets the reader connect.
///
/// - An update is required when its `requiredAt` has passed, or when it is incremental only (as the
///   anchor SDK treats those); a required update is installed while connecting, before the reader
///   can be used. Any other update is optional: reported, kept on `Reader.availableUpdate`, installed
///   when the app calls `installAvailableUpdate()`.
/// - The grace rule: when a required update fails, the connection still succeeds — with the update
///   left pending, to be tried again at the next connection — if the reader has run the latest
///   software for its location at some point within `graceWindow` (30 days), and if this version of
///   ReaderKit has the rule at all (`graceIntroducedIn`, as Stripe's SDK introduced it in 3.5.0).
///   A cancelled required update never connects.
public struct UpdatePolicy: Sendable, Hashable {
  /// What to do with an offered update.
  public enum Decision: Sendable, Hashable {
    /// Nothing to install.
    case upToDate
    /// Report it and keep it available.
    case optional(ReaderSoftwareUpdate)
    /// Install it now, before the reader counts as connected.
    case required(ReaderSoftwareUpdate)
  }

  /// ReaderKit's own version, which decides which versioned rules apply.
  public static let readerKitVersion = try! SoftwareVersion("1.3.0")
  /// The ReaderKit version that introduced the grace rule.
  public static let graceIntroducedIn = try! SoftwareVersion("1.3.0")
  /// How recently the reader must have run the latest software for the grace rule: 30 days.
  public static let graceWindow = Duration.seconds(30 * 86_400)

  /// The ReaderKit version whose versioned rules apply: this build's (`readerKitVersion`).
  package let sdkVersion: SoftwareVersion
  /// The window of the grace rule.
  public var graceWindow: Duration

  /// The policy of this ReaderKit version, with a grace window of `graceWindow`.
  public init(graceWindow: Duration = UpdatePolicy.graceWindow) {
    self.init(sdkVersion: Self.readerKitVersion, graceWindow: graceWindow)
  }

  /// The policy of ReaderKit `sdkVersion`: how the versioned rules read at a version boundary.
  package init(sdkVersion: SoftwareVersion, graceWindow: Duration = UpdatePolicy.graceWindow) {
    self.sdkVersion = sdkVersion
    self.graceWindow = graceWindow
  }

  /// What to do with `availability` at `now`.
  public func decide(_ availability: UpdateAvailability, at now: Date) -> Decision {
    guard let update = availability.update else { return .upToDate }
    return update.isRequired(at: now) ? .required(update) : .optional(update)
  }

  /// Whether a required update that failed with `error` still lets the reader connect.
  public func connectsDespiteFailure(_ availability: UpdateAvailability, error: ReaderError, at now: Date) -> Bool {
    guard error.code != .canceled, error.code != .readerSoftwareUpdateFailedInterrupted else { return false }
    return sdkVersion >= Self.graceIntroducedIn && availability.hasRunLatestSoftware(within: graceWindow, at: now)
  }
}
