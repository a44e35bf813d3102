
#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An `UpdateCatalog` whose releases and images are added in code, for tests and the simulator.
///
/// It chooses updates with the same rule as the manifest catalogs and records every question it was
/// asked. Failures can be injected per call: each `failNextCheck(with:)` makes one later
/// `availableUpdate(for:at:)` throw, in the order they were injected, and `failNextImage(with:)` does
/// the same for `firmwareImage(for:)`.
///
/// Images are checked against their size, and against their digest when the catalog is given a
/// SHA-256 function (ReaderKit's `SHA256Checksum.compute`); ReaderCore has none of its own.
///
/// ```swift
/// let catalog = InMemoryUpdateCatalog(sha256: SHA256Checksum.compute)
/// catalog.add(release, image: bytes)
/// let answer = try catalog.availableUpdate(for: installed, at: now)
/// catalog.failNextImage(with: ReaderError(.updateCatalogTimedOut, "injected"))
/// ```
///
/// All methods are safe to call from any thread; the state sits behind one `Locked`.
public final class InMemoryUpdateCatalog: UpdateCatalog {
  private struct State {
    var releases: [UpdateRelease]
    var images: [URL: Data]
    var checkFailures: [ReaderError] = []
    var imageFailures: [ReaderError] = []
    var checks: [InstalledSoftware] = []
    var imageRequests: [URL] = []
  }

  private let state: Locked<State>
  private let sha256: (@Sendable (Data) -> SHA256Checksum)?

  /// Creates a catalog holding `releases`, with `images` keyed by their URL.
  /// - Parameter sha256: computes a digest; without it images are checked against their size only.
  public init(
    releases: [UpdateRelease] = [], images: [URL: Data] = [:], sha256: (@Sendable (Data) -> SHA256Checksum)? = nil
  ) {
    state = Locked(State(releases: releases, images: images))
    self.sha256 = sha256
  }

  /// The releases held, in the order they were added.
  public var releases: [UpdateRelease] { state.withLock { $0.releases } }

  /// Every reader `availableUpdate(for:at:)` was asked about, in order, failed calls included.
  public var checks: [InstalledSoftware] { state.withLock { $0.checks } }

  /// Every image URL `firmwareImage(for:)` was asked for, in order, failed calls included.
  public var imageRequests: [URL] { state.withLock { $0.imageRequests } }

  /// Adds a release, and its image's bytes when given (under `release.image.url`).
  public func add(_ release: UpdateRelease, image: Data? = nil) {
    state.withLock {
      $0.releases.append(release)
      if let image { $0.images[release.image.url] = image }
    }
  }

  /// Stores the bytes served for `url`, replacing any.
  public func setImage(_ data: Data, at url: URL) {
    state.withLock { $0.images[url] = data }
  }

  /// Removes every release and image; injected failures stay.
  public func removeAll() {
    state.withLock {
      $0.releases = []
      $0.images = [:]
    }
  }

  /// Makes one later `availableUpdate(for:at:)` throw `error`; failures queue up, one per call.
  public func failNextCheck(
    with error: ReaderError = ReaderError(.updateCatalogUnavailable, "injected catalog failure")
  ) {
    state.withLock { $0.checkFailures.append(error) }
  }

  /// Makes one later `firmwareImage(for:)` throw `error`; failures queue up, one per call.
  public func failNextImage(
    with error: ReaderError = ReaderError(.updateCatalogUnavailable, "injected image failure")
  ) {
    state.withLock { $0.imageFailures.append(error) }
  }

  /// The update that applies to `installed` at `now`, chosen by `UpdateAvailability(choosingFrom:for:at:)`.
  /// - Throws: the next error injected with `failNextCheck(with:)`.
  public func availableUpdate(for installed: InstalledSoftware, at now: Date) throws(ReaderError)
    -> UpdateAvailability
  {
    let result: Result<[UpdateRelease], ReaderError> = state.withLock { state in
      state.checks.append(installed)
      if !state.checkFailures.isEmpty { return .failure(state.checkFailures.removeFirst()) }
      return .success(state.releases)
    }
    return UpdateAvailability(choosingFrom: try result.get(), for: installed, at: now)
  }

  /// The bytes stored for `image.url`, checked against its size (and digest, given a SHA-256 function).
  /// - Throws: the next error injected with `failNextImage(with:)`; `updateCatalogUnavailable` when no
  ///   bytes are stored for the URL; `firmwareImageRejected` when they do not match.
  public func firmwareImage(for image: FirmwareImage) throws(ReaderError) -> Data {
    let result: Result<Data?, ReaderError> = state.withLock { state in
      state.imageRequests.append(image.url)
      if !state.imageFailures.isEmpty { return .failure(state.imageFailures.removeFirst()) }
      return .success(state.images[image.url])
    }
    guard let data = try result.get() else {
      throw ReaderError(
        .updateCatalogUnavailable, "no firmware image at \(image.url.absoluteString)",
        context: ["url": image.url.absoluteString])
    }
    try image.verify(data, sha256: sha256 ?? { _ in image.sha256 })
    return data
  }
}
