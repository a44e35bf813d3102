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
    var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
    var count = 0
    while true {
      if count == bytes.count {
        guard count <= limit else { return .exceeded(limit: limit) }
        bytes.append(contentsOf: repeatElement(0, count: min(64 * 1024, limit + 1 - count)))
      }
      let result = bytes.withUnsafeMutableBytes { buffer in
        read(fd, buffer.baseAddress! + count, buffer.count - count)
      }
      if result == 0 { break }
      if result < 0 {
        if errno == EINTR { continue }
        throw unavailable(url, errno: errno)
      }
      count += result
    }
    return .complete(Data(bytes[..<count]))
  }

  private static func unavailable(_ url: URL, errno code: Int32) -> ReaderError {
    let reason = String(cString: strerror(code))
    return ReaderError(
      .updateCatalogUnavailable, "cannot read \(url.path): \(reason)",
      context: ["url": url.absoluteString, "reason": reason, "errno": "\(code)"])
  }
}
