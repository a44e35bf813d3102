#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The one place `readerctl` writes bytes to a file descriptor: standard output, standard error and
/// `--output` files all go through `write(_:to:)`.
///
/// It writes everything or says why not: a write cut short is continued, `EINTR` is retried, a
/// descriptor that would block (`O_NONBLOCK` inherited from the shell) is waited for with `poll(2)`,
/// and any other failure (`EPIPE`, `ENOSPC`, `EBADF`, `EIO`, …) is returned as its errno. Nothing
/// here stops the process: what a failure means is up to the caller (`StandardStreams` ends the
/// command with exit status 74; `--output` reports the file).
enum DescriptorWriter {
  /// Writes all of `bytes` to `descriptor`; returns `nil` once they are written, or the errno of the
  /// write that failed.
  static func write(_ bytes: some Collection<UInt8>, to descriptor: Int32) -> Int32? {
    let failure = bytes.withContiguousStorageIfAvailable { buffer in
      write(UnsafeRawBufferPointer(buffer), to: descriptor)
    }
    if let failure { return failure }
    return Array(bytes).withUnsafeBytes { write($0, to: descriptor) }
  }

  private static func write(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32? {
    guard let base = buffer.baseAddress else { return nil }
    var written = 0
    while written < buffer.count {
      #if canImport(Glibc)
        let result = Glibc.write(descriptor, base + written, buffer.count - written)
      #else
        let result = Darwin.write(descriptor, base + written, buffer.count - written)
      #endif
      if result > 0 {
        written += result
        continue
      }
      let code = result == 0 ? EIO : errno
      switch code {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK:
        var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        // Blocks until the reader makes room; a reader that went away shows as POLLERR, and the
        // next write says how.
        if poll(&ready, 1, -1) < 0, errno != EINTR { return errno }
      default: return code
      }
    }
    return nil
  }

  /// `No space left on device (errno 28)`: the system's text for `code`, and the number.
  static func describe(_ code: Int32) -> String {
    "\(String(cString: strerror(code))) (errno \(code))"
  }
}
