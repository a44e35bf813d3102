#if canImport(Darwin)
  import Foundation
  import ReaderCore

  /// A `ReaderStore` over `UserDefaults`; the default store on Apple platforms.
  ///
  /// The record is stored under `key` as the same versioned JSON bytes `FileReaderStore` writes, and
  /// follows the same rules: loading never modifies anything; a value that is not a valid record
  /// throws `storeCorrupt` and is left as it is; saving or clearing over such a value first keeps it
  /// under `<key>.corrupt-<n>` (the lowest free `n`, from 1). Each `set` of a key is atomic.
  ///
  /// ```swift
  /// let store = UserDefaultsReaderStore(suiteName: "group.com.example.pos")
  /// try store.saveLastReader(SavedReader(serialNumber: "STRM2-0001", locationId: "tml_1"))
  /// ```
  public struct UserDefaultsReaderStore: ReaderStore {
    /// The defaults suite, or `nil` for the app's standard defaults.
    public let suiteName: String?
    /// The key the record is stored under.
    public let key: String

    /// Creates a store over `key` in the suite `suiteName` (`nil`: the standard defaults).
    public init(suiteName: String? = nil, key: String = "ReaderKit.lastReader") {
      self.suiteName = suiteName
      self.key = key
    }

    /// The saved reader, or `nil` when nothing is stored under `key`. Never modifies anything.
    /// - Throws: `storeCorrupt` when the value is not a valid record (`context["reason"]`, and
    ///   `context["offset"]`, `context["field"]` or `context["version"]` where known);
    ///   `storeUnavailable` when the suite cannot be opened.
    public func loadLastReader() throws(ReaderError) -> SavedReader? {
      switch inspect(try openDefaults()) {
      case .missing: return nil
      case .record(let reader): return reader
      case .corrupt(let error): throw error
      }
    }

    /// Replaces the saved reader, first keeping a corrupt value aside under `<key>.corrupt-<n>`.
    /// - Throws: `storeUnavailable` when the suite cannot be opened; nothing is changed then.
    public func saveLastReader(_ reader: SavedReader) throws(ReaderError) {
      let defaults = try openDefaults()
      let bytes = try SavedReaderRecord.encode(reader, path: location)
      if case .corrupt = inspect(defaults) { keepAside(defaults) }
      defaults.set(Data(bytes), forKey: key)
    }

    /// Forgets the saved reader, first keeping a corrupt value aside; succeeds when there is none.
    /// - Throws: `storeUnavailable` when the suite cannot be opened.
    public func clearLastReader() throws(ReaderError) {
      let defaults = try openDefaults()
      if case .corrupt = inspect(defaults) { keepAside(defaults) }
      defaults.removeObject(forKey: key)
    }

    /// `suite/key`, for error context.
    private var location: String { "\(suiteName ?? "standard")/\(key)" }

    private func openDefaults() throws(ReaderError) -> UserDefaults {
      guard let defaults = UserDefaults(suiteName: suiteName) else {
        throw ReaderError(
          .storeUnavailable, "cannot open the defaults suite \(suiteName ?? "standard")",
          context: ["suite": suiteName ?? "standard", "key": key, "reason": "invalid suite name"])
      }
      return defaults
    }

    private func inspect(_ defaults: UserDefaults) -> SavedReaderRecord.Found {
      guard let value = defaults.object(forKey: key) else { return .missing }
      let context = ["suite": suiteName ?? "standard", "key": key]
      guard let data = value as? Data else {
        return .corrupt(
          ReaderError(
            .storeCorrupt, "the saved reader is corrupt: not data",
            context: context.merging(["reason": "the value is not data"]) { $1 }))
      }
      return SavedReaderRecord.classify(data, context: context)
    }

    /// Copies the current value to `<key>.corrupt-<n>`, the lowest free `n`.
    private func keepAside(_ defaults: UserDefaults) {
      guard let value = defaults.object(forKey: key) else { return }
      var n = 1
      while defaults.object(forKey: "\(key).corrupt-\(n)") != nil { n += 1 }
      defaults.set(value, forKey: "\(key).corrupt-\(n)")
    }
  }
#endif
