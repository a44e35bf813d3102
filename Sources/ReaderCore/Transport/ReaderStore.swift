/// The reader an app last connected to, as remembered across launches.
public struct SavedReader: Sendable, Hashable, Codable {
  /// The reader's serial number, the key used to find it again.
  public var serialNumber: String
  /// The location the reader was connected to.
  public var locationId: String
  /// The reader's model, when it was known.
  public var deviceType: DeviceType?

  /// Creates a record.
  public init(serialNumber: String, locationId: String, deviceType: DeviceType? = nil) {
    self.serialNumber = serialNumber
    self.locationId = locationId
    self.deviceType = deviceType
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
