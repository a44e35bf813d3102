import Foundation
import ReaderCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads a whole regular file, but never more than a bound.
enum FileFetch {
  /// The contents of the file at `url` (a `file:` URL), or `.exceeded` as soon as it holds more than
  /// `limit` bytes. Anything but a regular file (a directory, a FIFO that would block) is refused
  /// before it is read, and so is a URL naming another host than `localhost`.
  /// - Throws: `updateCatalogUnavailable` with `context["url"]`, `context["reason"]` and, for a failed
  ///   system call, `context["errno"]`.
  static func contents(of url: URL, limit: Int) throws(ReaderError) -> BoundedBody {
    try readAll(url, limit: limit) { _ in }
  }

  /// The contents of the file at `url` as `contents(of:limit:)` reads them, and their SHA-256 digest, computed
  /// while reading (`nil` when the file holds more than `limit` bytes).
  /// - Throws: what `contents(of:limit:)` throws.
  static func hashedContents(of url: URL, limit: Int) throws(ReaderError) -> (BoundedBody, SHA256Checksum?) {
    var hasher = SHA256Hasher()
    let body = try readAll(url, limit: limit) { hasher.update($0) }
    guard case .complete = body else { return (body, nil) }
    return (body, hasher.finalize())
  }

  /// How much one `read` asks for: small enough that a piece is still in the cache when `received` sees it.
  private static let pieceSize = 256 * 1024

  /// Reads the file into one buffer that becomes the `Data` returned, uninitialized until read into and never
  /// copied; hands each piece read to `received` as it arrives.
  private static func readAll(
    _ url: URL, limit: Int, received: (UnsafeRawBufferPointer) -> Void
  ) throws(ReaderError) -> BoundedBody {
    // `file://host/path` names a file on another machine; read here it would be a local path.
    if let host = url.host, !host.isEmpty, host.lowercased() != "localhost" {
      throw ReaderError(
        .updateCatalogUnavailable, "\(url.absoluteString) names the host \(host), not this machine",
        context: ["url": url.absoluteString, "reason": "a file URL naming another host"])
    }
    let fd = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { throw unavailable(url, errno: errno) }
    defer { _ = close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw unavailable(url, errno: errno) }
    guard (info.st_mode & S_IFMT) == S_IFREG else {
      throw ReaderError(
        .updateCatalogUnavailable, "\(url.path) is not a regular file",
        context: ["url": url.absoluteString, "reason": "not a regular file"])
    }
    guard Int(info.st_size) <= limit else { return .exceeded(limit: limit) }
    // Room for one byte more than the file's size tells a file that grew since `fstat`; the buffer
    // grows while it does, up to one byte over the bound.
    var capacity = Int(info.st_size) + 1
    guard var buffer = malloc(capacity) else { throw unavailable(url, errno: ENOMEM) }
    var handedOver = false
    defer { if !handedOver { free(buffer) } }
    var count = 0
    while true {
      if count == capacity {
        guard count <= limit else { return .exceeded(limit: limit) }
        let grown = count + min(64 * 1024, limit + 1 - count)
        guard let moved = realloc(buffer, grown) else { throw unavailable(url, errno: ENOMEM) }
        (buffer, capacity) = (moved, grown)
      }
      let result = read(fd, buffer + count, min(capacity - count, pieceSize))
      if result == 0 { break }
      if result < 0 {
        if errno == EINTR { continue }
        throw unavailable(url, errno: errno)
      }
      received(UnsafeRawBufferPointer(start: buffer + count, count: result))
      count += result
    }
    handedOver = true
    return .complete(Data(bytesNoCopy: buffer, count: count, deallocator: .free))
  }

  private static func unavailable(_ url: URL, errno code: Int32) -> ReaderError {
    let reason = String(cString: strerror(code))
    return ReaderError(
      .updateCatalogUnavailable, "cannot read \(url.path): \(reason)",
      context: ["url": url.absoluteString, "reason": reason, "errno": "\(code)"])
  }
}
