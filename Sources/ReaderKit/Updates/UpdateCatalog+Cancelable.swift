import Foundation
import ReaderCore

extension UpdateCatalog {
  /// `availableUpdate(for:at:)` on a thread of its own, with a completion and a `Cancelable`, as the
  /// terminal's long operations have.
  ///
  /// `completion` runs once, on the fetch's thread, with the answer or the error; after
  /// `cancel`, with `canceled` (unless the answer was already there). As everywhere, `cancel`'s own
  /// completion runs only after that, once the fetch has closed what it opened: with `nil`, or with
  /// `cancelFailedAlreadyCompleted` when it had already completed.
  @discardableResult
  public func availableUpdate(
    for installed: InstalledSoftware, at now: Date,
    completion: @escaping @Sendable (Result<UpdateAvailability, ReaderError>) -> Void
  ) -> Cancelable {
    runCancelably(completion) { cancellation throws(ReaderError) in
      try self.availableUpdate(for: installed, at: now, cancellation: cancellation)
    }
  }

  /// `firmwareImage(for:)` on a thread of its own, with a completion and a `Cancelable`; see
  /// `availableUpdate(for:at:completion:)`.
  @discardableResult
  public func firmwareImage(
    for image: FirmwareImage, completion: @escaping @Sendable (Result<Data, ReaderError>) -> Void
  ) -> Cancelable {
    runCancelably(completion) { cancellation throws(ReaderError) in
      try self.firmwareImage(for: image, cancellation: cancellation)
    }
  }
}

/// Runs `work` on a thread of its own; its `Cancelable` cancels `work`'s `CatalogCancellation`.
private func runCancelably<T: Sendable>(
  _ completion: @escaping @Sendable (Result<T, ReaderError>) -> Void,
  _ work: @escaping @Sendable (CatalogCancellation) throws(ReaderError) -> T
) -> Cancelable {
  let cancellation = CatalogCancellation()
  let cancelable = Cancelable { cancellation.cancel() }
  let started = DedicatedThread.start(named: catalogThreadName) {
    let result = Result { () throws(ReaderError) in try work(cancellation) }
    completion(result)
    cancelable.finish(canceled: result.failure?.code == .canceled && cancellation.isCancelled)
  }
  if !started {
    completion(.failure(ReaderError(.updateCatalogUnavailable, "no thread could be started for the fetch")))
    cancelable.finish(canceled: false)
  }
  return cancelable
}
