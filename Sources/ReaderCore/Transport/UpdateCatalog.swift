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
/// scheduler. Implementations bound every wait (a server that stalls, or that trickles past the
/// fetch's deadline, ends in `updateCatalogTimedOut`) and every allocation (a manifest or image larger
/// than its bound is refused without being read in full), and report every failure as an error: a
/// catalog that cannot answer never answers "no update".
///
/// Every call can be stopped: the forms taking a `CatalogCancellation` stop when it is cancelled (a
/// catalog whose calls block implements them, as `HTTPUpdateCatalog` does; the default checks the
/// cancellation before and after the call); the `async` forms run on a thread of their own and stop
/// when their task is cancelled, returning only once that thread has let go of everything it held.
public protocol UpdateCatalog: Sendable {
  /// The update that applies to `installed` at `now`, and since when its version is not the latest.
  /// - Throws: `updateCatalogInvalid` for a malformed manifest (naming the field and value) or a
  ///   malformed server response, `updateCatalogUnavailable` when it cannot be fetched,
  ///   `updateCatalogTimedOut` when its server stalls or outlasts the fetch's deadline.
  func availableUpdate(for installed: InstalledSoftware, at now: Date) throws(ReaderError) -> UpdateAvailability

  /// The bytes of `image`, fetched in full and checked against its size and SHA-256 digest.
  ///
  /// Nothing partial is ever returned: the bytes are returned only once they match.
  /// - Throws: `firmwareImageRejected` when the size or digest differs (a download that grows past the
  ///   expected size is stopped there), `updateCatalogUnavailable` when it cannot be fetched,
  ///   `updateCatalogTimedOut` when its server stalls or outlasts the fetch's deadline,
  ///   `updateCatalogInvalid` for a malformed server response.
  func firmwareImage(for image: FirmwareImage) throws(ReaderError) -> Data

  /// `availableUpdate(for:at:)`, stopped when `cancellation` is cancelled.
  /// - Throws: what `availableUpdate(for:at:)` throws, and `canceled` (`context["url"]` naming what was
  ///   being fetched, when a fetch was cut short).
  func availableUpdate(for installed: InstalledSoftware, at now: Date, cancellation: CatalogCancellation)
    throws(ReaderError) -> UpdateAvailability

  /// `firmwareImage(for:)`, stopped when `cancellation` is cancelled.
  /// - Throws: what `firmwareImage(for:)` throws, and `canceled`.
  func firmwareImage(for image: FirmwareImage, cancellation: CatalogCancellation) throws(ReaderError) -> Data
}

extension UpdateCatalog {
  /// The default for catalogs whose calls do not block for long: refuses to start once cancelled,
  /// and throws `canceled` instead of an answer that arrived after the cancellation.
  public func availableUpdate(for installed: InstalledSoftware, at now: Date, cancellation: CatalogCancellation)
    throws(ReaderError) -> UpdateAvailability
  {
    try Self.checking(cancellation, "availableUpdate") { () throws(ReaderError) in
      try availableUpdate(for: installed, at: now)
    }
  }

  /// The default for catalogs whose calls do not block for long: refuses to start once cancelled,
  /// and throws `canceled` instead of bytes that arrived after the cancellation.
  public func firmwareImage(for image: FirmwareImage, cancellation: CatalogCancellation) throws(ReaderError)
    -> Data
  {
    try Self.checking(cancellation, "firmwareImage") { () throws(ReaderError) in try firmwareImage(for: image) }
  }

  private static func checking<T>(
    _ cancellation: CatalogCancellation, _ operation: String, _ work: () throws(ReaderError) -> T
  ) throws(ReaderError) -> T {
    guard !cancellation.isCancelled else { throw .canceled(operation) }
    let result = try work()
    guard !cancellation.isCancelled else { throw .canceled(operation) }
    return result
  }

  /// `availableUpdate(for:at:)` on a thread of its own, so the caller's task is not blocked.
  ///
  /// Cancelling the task stops the fetch (`availableUpdate(for:at:cancellation:)`): it throws
  /// `canceled`, and returns only once the fetch's thread has closed what it opened and is ending.
  public func availableUpdate(for installed: InstalledSoftware, at now: Date) async throws(ReaderError)
    -> UpdateAvailability
  {
    try await runOnDedicatedThread { cancellation throws(ReaderError) in
      try self.availableUpdate(for: installed, at: now, cancellation: cancellation)
    }
  }

  /// `firmwareImage(for:)` on a thread of its own, so the caller's task is not blocked.
  ///
  /// Cancelling the task stops the download (`firmwareImage(for:cancellation:)`): it throws
  /// `canceled`, and returns only once the download's thread has closed what it opened and is ending.
  public func firmwareImage(for image: FirmwareImage) async throws(ReaderError) -> Data {
    try await runOnDedicatedThread { cancellation throws(ReaderError) in
      try self.firmwareImage(for: image, cancellation: cancellation)
    }
  }
}

/// The name of the threads update catalog calls run on (`rk-fetch`), as the system lists them.
package let catalogThreadName = "rk-fetch"

/// Runs a blocking `work` on a thread of its own, cancelled with the calling task, and returns its
/// result to the awaiting task once `work` has returned.
private func runOnDedicatedThread<T: Sendable>(
  _ work: @escaping @Sendable (CatalogCancellation) throws(ReaderError) -> T
) async throws(ReaderError) -> T {
  let cancellation = CatalogCancellation()
  let result: Result<T, ReaderError> = await withTaskCancellationHandler {
    await withCheckedContinuation { continuation in
      let started = DedicatedThread.start(named: catalogThreadName) {
        continuation.resume(returning: Result { () throws(ReaderError) in try work(cancellation) })
      }
      if !started {
        continuation.resume(
          returning: .failure(ReaderError(.updateCatalogUnavailable, "no thread could be started for the fetch")))
      }
    }
  } onCancel: {
    cancellation.cancel()
  }
  return try result.get()
}
