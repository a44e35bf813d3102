import Dispatch

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where reader software updates come from: which update applies to a reader, and the verified bytes
/// of an update's image.
///
/// ReaderKit ships three: `InMemoryUpdateCatalog` (releases added in code, for tests and the
/// simulator), `ManifestUpdateCatalog` (a JSON manifest file) and `HTTPUpdateCatalog` (the same
/// manifest over HTTP). All of them choose the update with `UpdateAvailability(choosingFrom:for:at:)`.
///
/// The methods are synchronous and may block on file or network I/O, so a terminal calls them off its
/// scheduler. Implementations bound every wait (a server that stalls ends in `updateCatalogTimedOut`)
/// and every allocation (a manifest or image larger than its bound is refused without being read in
/// full), and report every failure as an error: a catalog that cannot answer never answers "no
/// update". Apps can use the `async` forms, which run the same calls on a background thread.
public protocol UpdateCatalog: Sendable {
  /// The update that applies to `installed` at `now`, and since when its version is not the latest.
  /// - Throws: `updateCatalogInvalid` for a malformed manifest (naming the field and value),
  ///   `updateCatalogUnavailable` when it cannot be fetched, `updateCatalogTimedOut` when its server
  ///   stalls.
  func availableUpdate(for installed: InstalledSoftware, at now: Date) throws(ReaderError) -> UpdateAvailability

  /// The bytes of `image`, fetched in full and checked against its size and SHA-256 digest.
  ///
  /// Nothing partial is ever returned: the bytes are returned only once they match.
  /// - Throws: `firmwareImageRejected` when the size or digest differs (a download that grows past the
  ///   expected size is stopped there), `updateCatalogUnavailable` when it cannot be fetched,
  ///   `updateCatalogTimedOut` when its server stalls.
  func firmwareImage(for image: FirmwareImage) throws(ReaderError) -> Data
}

extension UpdateCatalog {
  /// `availableUpdate(for:at:)`, run on a background thread so the caller's task is not blocked.
  ///
  /// The blocking call is bounded by the catalog's own timeouts; cancelling the task does not cut it
  /// short.
  public func availableUpdate(for installed: InstalledSoftware, at now: Date) async throws(ReaderError)
    -> UpdateAvailability
  {
    try await runOnBackgroundThread { () throws(ReaderError) in try self.availableUpdate(for: installed, at: now) }
  }

  /// `firmwareImage(for:)`, run on a background thread so the caller's task is not blocked.
  ///
  /// The blocking call is bounded by the catalog's own timeouts; cancelling the task does not cut it
  /// short.
  public func firmwareImage(for image: FirmwareImage) async throws(ReaderError) -> Data {
    try await runOnBackgroundThread { () throws(ReaderError) in try self.firmwareImage(for: image) }
  }
}

/// Runs a blocking `work` on a global dispatch queue and returns its result to the awaiting task.
private func runOnBackgroundThread<T: Sendable>(
  _ work: @escaping @Sendable () throws(ReaderError) -> T
) async throws(ReaderError) -> T {
  let result: Result<T, ReaderError> = await withCheckedContinuation { continuation in
    DispatchQueue.global().async {
      continuation.resume(returning: Result { () throws(ReaderError) in try work() })
    }
  }
  return try result.get()
}
