#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A software update a reader can install, with the anchor SDK's names and meanings.
///
/// An update is optional until `requiredAt`; from then on (and always, for an incremental-only update)
/// it is required and installed while connecting, before the reader can be used (`isRequired(at:)`).
/// It is encoded with its field names, its estimate and components by name, never as numbers.
public struct ReaderSoftwareUpdate: Sendable, Hashable, Codable {
  /// The version the reader runs once the update is installed.
  ///
  /// For an incremental-only update the anchor SDK reports the installed version here, since such an
  /// update does not change it; ReaderKit's test updates do the same. An update from a catalog carries
  /// the version of its release, since every catalog release has its own version.
  public var deviceSoftwareVersion: String
  /// How long the whole install is expected to take.
  public var durationEstimate: UpdateTimeEstimate
  /// The parts of the software the update replaces.
  public var components: UpdateComponent
  /// When the update becomes required: from then on it is installed at the next connection.
  public var requiredAt: Date
  /// Whether the update was made up for testing (a test reader update) rather than offered by a
  /// catalog.
  public var isTestUpdate: Bool
  /// The image to download and verify before installing, or `nil` when there is nothing to download
  /// (test updates).
  public var image: FirmwareImage?
  /// When the update stops being installable, if ever; installing it later fails with
  /// `readerSoftwareUpdateFailedExpiredUpdate`, and connecting again fetches a current one.
  public var expiresAt: Date?

  /// Describes an update.
  public init(
    deviceSoftwareVersion: String, durationEstimate: UpdateTimeEstimate, components: UpdateComponent,
    requiredAt: Date, isTestUpdate: Bool = false, image: FirmwareImage? = nil, expiresAt: Date? = nil
  ) {
    self.deviceSoftwareVersion = deviceSoftwareVersion
    self.durationEstimate = durationEstimate
    self.components = components
    self.requiredAt = requiredAt
    self.isTestUpdate = isTestUpdate
    self.image = image
    self.expiresAt = expiresAt
  }

  /// Whether the update holds only an incremental change: it keeps the version, takes under a minute,
  /// is always required and cannot be cancelled.
  public var isIncrementalOnly: Bool { components == .incremental }

  /// Whether the update must be installed before the reader is used at `now`: `requiredAt` has been
  /// reached, or the update is incremental-only.
  public func isRequired(at now: Date) -> Bool {
    isIncrementalOnly || requiredAt <= now
  }

  /// Whether `expiresAt` has been reached at `now`.
  public func isExpired(at now: Date) -> Bool {
    expiresAt.map { $0 <= now } ?? false
  }

  /// Text to show a person for an estimate, e.g. `2-5 minutes`.
  public static func string(from estimate: UpdateTimeEstimate) -> String {
    estimate.description
  }

  private enum CodingKeys: String, CodingKey {
    case deviceSoftwareVersion, durationEstimate, components, requiredAt, isTestUpdate, image, expiresAt
  }

  /// Decodes an update; a record without `isTestUpdate` is not a test update.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    deviceSoftwareVersion = try container.decode(String.self, forKey: .deviceSoftwareVersion)
    durationEstimate = try container.decode(UpdateTimeEstimate.self, forKey: .durationEstimate)
    components = try container.decode(UpdateComponent.self, forKey: .components)
    requiredAt = try container.decode(Date.self, forKey: .requiredAt)
    isTestUpdate = try container.decodeIfPresent(Bool.self, forKey: .isTestUpdate) ?? false
    image = try container.decodeIfPresent(FirmwareImage.self, forKey: .image)
    expiresAt = try container.decodeIfPresent(Date.self, forKey: .expiresAt)
  }
}
