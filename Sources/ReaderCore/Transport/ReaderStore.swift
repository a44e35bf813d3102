/// The reader an app last connected to, as remembered across launches.
public struct SavedReader: Sendable, Hashable, Codable {
  /// The reader's serial number, the key used to find it again.
  public var serialNumber: String
  /// The location the reader was connected to.
  public var locationId: String
  /// The reader's model, when it was known.
  public var deviceType: DeviceType?
  /// Whether it was a simulated reader: reconnect at launch then discovers simulated readers.
  public var simulated: Bool

  /// Creates a record.
  public init(serialNumber: String, locationId: String, deviceType: DeviceType? = nil, simulated: Bool = false) {
    self.serialNumber = serialNumber
    self.locationId = locationId
    self.deviceType = deviceType
    self.simulated = simulated
  }

  private enum CodingKeys: String, CodingKey { case serialNumber, locationId, deviceType, simulated }

  /// Decodes a record; one written before `simulated` existed reads as a real reader.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    serialNumber = try container.decode(String.self, forKey: .serialNumber)
    locationId = try container.decode(String.self, forKey: .locationId)
    deviceType = try container.decodeIfPresent(DeviceType.self, forKey: .deviceType)
    simulated = try container.decodeIfPresent(Bool.self, forKey: .simulated) ?? false
  }
}

/// Persistent storage for the last connected reader, used by reconnect-at-launch.
///
/// Implementations must never lose a previously saved record: a failed save leaves the old one in
/// place, and a corrupt or unreadable record is reported (`storeCorrupt`, `storeUnavailable`) rather
/// than silently replaced with nothing.
public protocol ReaderStore: Sendable {
  /// The saved reader, or `nil` when nothing was ever saved (or it was cleared).
  /// - Throws: `storeCorrupt` when a record exists but cannot be decoded; `storeUnavailable` when it
  ///   cannot be read.
  func loadLastReader() throws(ReaderError) -> SavedReader?
  /// Replaces the saved reader atomically.
  ///
  /// When the existing record is corrupt, its bytes are kept for diagnosis before it is replaced
  /// (`FileReaderStore` keeps them as `last-reader.json.corrupt-<n>`), never discarded.
  /// - Throws: `storeUnavailable` when the record cannot be written; the old record is kept.
  func saveLastReader(_ reader: SavedReader) throws(ReaderError)
  /// Forgets the saved reader.
  /// - Throws: `storeUnavailable` when the record cannot be removed.
  func clearLastReader() throws(ReaderError)
}
