#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An update catalog's answer for one reader: the update that applies, if any, and since when the
/// installed version has not been the latest for the reader's location.
///
/// The second half is what a grace rule needs ("the reader has run the latest software for its location
/// at some point in the last 30 days"): see `hasRunLatestSoftware(within:at:)`.
public struct UpdateAvailability: Sendable, Hashable {
  /// The update to offer, or `nil` when there is none.
  public var update: ReaderSoftwareUpdate?
  /// When the installed version stopped being the latest for the reader's model and location: the
  /// release date of the first release newer than it. `nil` when the installed version is the latest.
  public var installedVersionSupersededAt: Date?

  /// Nothing to install, and the installed version is the latest.
  public static let upToDate = UpdateAvailability(update: nil, installedVersionSupersededAt: nil)

  /// Creates an answer.
  public init(update: ReaderSoftwareUpdate?, installedVersionSupersededAt: Date?) {
    self.update = update
    self.installedVersionSupersededAt = installedVersionSupersededAt
  }

  /// The answer a catalog holding `releases` gives for `installed` at `now`. Every catalog uses this
  /// rule:
  ///
  /// - A release counts for the reader when it is for its model, covers its location and is published
  ///   (`releasedAt` ≤ `now`). `installedVersionSupersededAt` is the earliest `releasedAt` among the
  ///   counted releases newer than the installed version, expired ones included: the installed version
  ///   stopped being the latest then.
  /// - The pending releases are the counted, newer, unexpired ones (`expiresAt` > `now`). With none,
  ///   there is no update.
  /// - Otherwise the update installs the newest pending release (its version, image and `expiresAt`),
  ///   which brings every older pending release with it. So it takes the earliest `requiredAt` of them
  ///   (a required release is never skipped by a newer optional one), the union of their components and
  ///   the longest of their estimates.
  ///
  /// Releases with equal versions are taken in sequence order (the first wins).
  public init(choosingFrom releases: some Sequence<UpdateRelease>, for installed: InstalledSoftware, at now: Date) {
    var supersededAt: Date?
    var newest: UpdateRelease?
    var requiredAt: Date?
    var components: UpdateComponent = []
    var estimate = UpdateTimeEstimate.estimateLessThan1Minute
    for release in releases where release.isPublished(for: installed, at: now) && installed.version < release.version {
      supersededAt = min(supersededAt ?? release.releasedAt, release.releasedAt)
      guard !release.isExpired(at: now) else { continue }
      if newest.map({ $0.version < release.version }) ?? true { newest = release }
      requiredAt = min(requiredAt ?? release.requiredAt, release.requiredAt)
      components.formUnion(release.components)
      estimate = max(estimate, release.durationEstimate)
    }
    self.installedVersionSupersededAt = supersededAt
    guard let newest, let requiredAt else {
      self.update = nil
      return
    }
    self.update = ReaderSoftwareUpdate(
      deviceSoftwareVersion: newest.version.description, durationEstimate: estimate, components: components,
      requiredAt: requiredAt, image: newest.image, expiresAt: newest.expiresAt)
  }

  /// Whether the reader has run the latest software for its location at some point in the `window`
  /// before `now`: the installed version is the latest, or it was superseded less than `window` ago.
  ///
  /// The window is the caller's policy (e.g. 30 days); at exactly `window` after the supersession the
  /// answer is already `false`.
  public func hasRunLatestSoftware(within window: Duration, at now: Date) -> Bool {
    guard let supersededAt = installedVersionSupersededAt else { return true }
    return now.timeIntervalSince(supersededAt) < window.inSeconds
  }
}
