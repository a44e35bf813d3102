#if canImport(Glibc)
  import Foundation
  import Glibc
  import ReaderCore

  /// A connected non-blocking TCP socket and the fetch's deadlines: the transport of `http:`, and the
  /// socket under `TLSByteStream` for `https:`.
  ///
  /// Every wait is a `poll(2)` on the socket and on a wake-up pipe the cancellation writes to, bounded
  /// by `stallTimeout` (no progress for that long) and by what is left of `totalTimeout`. Host names are
  /// resolved with `getaddrinfo`, whose wait is bounded by the system resolver's own timeouts (the
  /// cancellation is checked before and after it).
  struct TCPByteStream: HTTPByteStream {
    let errors: FetchErrors
    let wake: Int32
    let cancellation: CatalogCancellation
    let stallTimeout: Duration
    let totalTimeout: Duration
    let deadline: ContinuousClock.Instant
    /// The connected socket.
    private(set) var fd: Int32 = -1

    /// Connects to `host` and `port`, trying each address `getaddrinfo` gives in turn.
    /// - Throws: `updateCatalogUnavailable` (an unknown host, a refused or failed connection, with an
    ///   `.errno` cause), `updateCatalogTimedOut`, `canceled`.
    init(
      host: String, port: Int, errors: FetchErrors, wake: Int32, cancellation: CatalogCancellation,
      stallTimeout: Duration, totalTimeout: Duration
    ) throws(ReaderError) {
      self.errors = errors
      self.wake = wake
      self.cancellation = cancellation
      self.stallTimeout = stallTimeout
      self.totalTimeout = totalTimeout
      deadline = .now + totalTimeout
      fd = try connect(host: host, port: port)
    }

    func close() {
      if fd >= 0 { _ = Glibc.close(fd) }
    }

    // MARK: Connecting

    private func connect(host: String, port: Int) throws(ReaderError) -> Int32 {
      var hints = addrinfo()
      hints.ai_family = AF_UNSPEC
      hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
      hints.ai_flags = AI_NUMERICSERV
      var list: UnsafeMutablePointer<addrinfo>?
      let status = getaddrinfo(host, "\(port)", &hints, &list)
      guard !cancellation.isCancelled else {
        if list != nil { freeaddrinfo(list) }
        throw errors.canceled()
      }
      guard status == 0, let first = list else {
        throw errors.unavailable("unknown host (\(String(cString: gai_strerror(status))))")
      }
      defer { freeaddrinfo(list) }
      var lastError = errors.unavailable("no address")
      var entry: UnsafeMutablePointer<addrinfo>? = first
      while let address = entry {
        entry = address.pointee.ai_next
        let fd = socket(
          address.pointee.ai_family,
          address.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
          address.pointee.ai_protocol)
        guard fd >= 0 else {
          lastError = errors.unavailable("cannot open a socket: \(String(cString: strerror(errno)))", errno: errno)
          continue
        }
        do throws(ReaderError) {
          try finishConnecting(fd, address.pointee.ai_addr, address.pointee.ai_addrlen)
          return fd
        } catch {
          _ = Glibc.close(fd)
          if error.code == .updateCatalogTimedOut || error.code == .canceled { throw error }
          lastError = error
        }
      }
      throw lastError
    }

    private func finishConnecting(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t)
      throws(ReaderError)
    {
      if Glibc.connect(fd, address, length) == 0 { return }
      guard errno == EINPROGRESS else { throw connectFailure(errno) }
      try wait(fd, for: Int16(POLLOUT))
      var code: Int32 = 0
      var size = socklen_t(MemoryLayout<Int32>.size)
      guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &size) == 0 else { throw connectFailure(errno) }
      if code != 0 { throw connectFailure(code) }
    }

    private func connectFailure(_ code: Int32) -> ReaderError {
      code == ECONNREFUSED
        ? errors.unavailable("connection refused", errno: code)
        : errors.unavailable("cannot connect: \(String(cString: strerror(code)))", errno: code)
    }

    // MARK: Writing and reading

    func write(_ bytes: [UInt8]) throws(ReaderError) {
      var sent = 0
      while sent < bytes.count {
        let result = bytes.withUnsafeBytes { buffer in
          send(fd, buffer.baseAddress.map { $0 + sent }, buffer.count - sent, Int32(MSG_NOSIGNAL))
        }
        if result > 0 {
          sent += result
        } else if result < 0, errno == EAGAIN || errno == EWOULDBLOCK {
          try wait(for: Int16(POLLOUT))
        } else if result < 0, errno == EINTR {
          continue
        } else {
          throw errors.unavailable("cannot send the request: \(String(cString: strerror(errno)))", errno: errno)
        }
      }
    }

    /// Receives what the server sent next, waiting for it as `wait(for:)` does.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(ReaderError) -> Int {
      while true {
        let result = recv(fd, buffer.baseAddress, buffer.count, 0)
        if result >= 0 { return result }
        switch errno {
        case EINTR: continue
        case EAGAIN, EWOULDBLOCK: try wait(for: Int16(POLLIN))
        default:
          throw errors.unavailable("the connection failed: \(String(cString: strerror(errno)))", errno: errno)
        }
      }
    }

    // MARK: Waiting

    /// Waits until the socket is ready for `events` (`POLLIN`, `POLLOUT`), at most `stallTimeout` and
    /// never past the deadline; throws `canceled` as soon as the cancellation is requested.
    func wait(for events: Int16) throws(ReaderError) {
      try wait(fd, for: events)
    }

    private func wait(_ fd: Int32, for events: Int16) throws(ReaderError) {
      let stallEnds = ContinuousClock.now + stallTimeout
      while true {
        let now = ContinuousClock.now
        guard now < deadline else {
          throw errors.timedOut(totalTimeout, "not finished after \(totalTimeout.contextSeconds) s")
        }
        guard now < stallEnds else {
          throw errors.timedOut(stallTimeout, "nothing received for \(stallTimeout.contextSeconds) s")
        }
        let milliseconds = Int32(clamping: max(1, (min(stallEnds, deadline) - now).milliseconds))
        var descriptors = [
          pollfd(fd: fd, events: events, revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
        ]
        let ready = poll(&descriptors, 2, milliseconds)
        if ready < 0 {
          if errno == EINTR { continue }
          throw errors.unavailable("poll failed: \(String(cString: strerror(errno)))", errno: errno)
        }
        if descriptors[1].revents != 0 || cancellation.isCancelled { throw errors.canceled() }
        if descriptors[0].revents != 0 { return }
      }
    }
  }

  extension Duration {
    /// The duration in whole milliseconds, rounded up.
    fileprivate var milliseconds: Int64 {
      let (seconds, attoseconds) = components
      return seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }
  }
#endif
