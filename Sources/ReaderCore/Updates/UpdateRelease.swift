#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One software release in an update catalog: a version for one reader model, offered at some
/// locations from `releasedAt`.
///
/// A catalog turns its releases into the update one reader sees with
/// `UpdateAvailability(choosingFrom:for:at:)`.
public struct UpdateRelease: Sendable, Hashable {
  /// The locations a release is offered at.
  public enum Locations: Sendable, Hashable {
    /// Every location.
    case all
    /// Only these location ids.
    case only(Set<String>)

    /// Whether a reader connected to `locationId` is offered the release.
    public func contains(_ locationId: String) -> Bool {
      switch self {
      case .all: true
      case .only(let ids): ids.contains(locationId)
      }
    }
  }

  /// The reader model the release is for.
  public var deviceType: DeviceType
  /// Where the release is offered.
  public var locations: Locations
  /// The version a reader runs once the release is installed.
  public var version: SoftwareVersion
  /// When the release is published: before then no reader is offered it.
  public var releasedAt: Date
  /// When the release becomes required.
  public var requiredAt: Date
  /// When the release stops being offered, if ever.
  public var expiresAt: Date?
  /// The parts of the software the release replaces.
  public var components: UpdateComponent
  /// How long installing the release takes.
  public var durationEstimate: UpdateTimeEstimate
  /// The release's image.
  public var image: FirmwareImage

  /// Describes a release.
  public init(
    deviceType: DeviceType, locations: Locations = .all, version: SoftwareVersion, releasedAt: Date,
    requiredAt: Date, expiresAt: Date? = nil, components: UpdateComponent, durationEstimate: UpdateTimeEstimate,
    image: FirmwareImage
  ) {
    self.deviceType = deviceType
    self.locations = locations
    self.version = version
    self.releasedAt = releasedAt
    self.requiredAt = requiredAt
    self.expiresAt = expiresAt
    self.components = components
    self.durationEstimate = durationEstimate
    self.image = image
  }

  /// Whether the release is published for the reader's model and location at `now`.
  func isPublished(for installed: InstalledSoftware, at now: Date) -> Bool {
    deviceType == installed.deviceType && locations.contains(installed.locationId) && releasedAt <= now
  }

  /// Whether `expiresAt` has been reached at `now`.
  func isExpired(at now: Date) -> Bool {
    expiresAt.map { $0 <= now } ?? false
  }
}
