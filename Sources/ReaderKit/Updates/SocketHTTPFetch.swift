#if canImport(Glibc)
  import Foundation
  import Glibc
  import ReaderCore

  /// One bounded HTTP/1.1 GET over a plain TCP socket: the body of a 2xx answer, or a typed error,
  /// within fixed time and memory, stopped at once by a `CatalogCancellation`. Used for `http:` URLs
  /// on Linux, where URLSession reads ahead of its delegate without back-pressure and cannot be stopped
  /// at a byte bound (an endless body was seen to be pulled in by the hundreds of megabytes before a
  /// cancel took effect).
  ///
  /// Every wait is a `poll(2)` on the socket and on a wake-up pipe the cancellation writes to, bounded
  /// by `stallTimeout` (no byte for that long) and by what is left of `totalTimeout`. The answer is read
  /// by an `HTTPResponseReader` with the socket as its source: at most `limit` body bytes are kept, and
  /// reading stops at the first byte beyond them; Content-Length, chunked and close-delimited bodies are
  /// read, and the answer is parsed strictly (`HTTPResponseHead`, `HTTPChunkSyntax`): a line that breaks
  /// the syntax — a junk status line, a signed or oversized chunk size, a trailer that is not a field —
  /// is `updateCatalogInvalid` naming the line, never a crash. Redirects are not followed (a 3xx answer is an HTTP error status). Host names are
  /// resolved with `getaddrinfo`, whose wait is bounded by the system resolver's own timeouts (the
  /// cancellation is checked before and after it).
  enum SocketHTTPFetch {
    /// Fetches `url` (`http:`) and returns its body, or `.exceeded` when it has more than `limit` bytes.
    /// - Throws: `updateCatalogUnavailable` (a refused or failed connection, a status outside 2xx with
    ///   `context["status"]` and an `.httpStatus` cause, a connection closed early),
    ///   `updateCatalogTimedOut` (silent for `stallTimeout`, or not done after `totalTimeout`:
    ///   `context["timeout"]` in seconds), `updateCatalogInvalid` (a malformed answer:
    ///   `context["line"]`), `canceled` (`context["url"]`). Every error has `context["url"]`.
    static func get(
      _ url: URL, limit: Int, stallTimeout: Duration, totalTimeout: Duration, cancellation: CatalogCancellation
    ) throws(ReaderError) -> BoundedBody {
      let errors = FetchErrors(url: url)
      guard !cancellation.isCancelled else { throw errors.canceled() }
      guard let wake = WakeUpPipe(cancellation) else {
        throw errors.unavailable("cannot open a pipe: \(String(cString: strerror(errno)))", errno: errno)
      }
      defer { wake.close() }
      let connection = try Connection(
        url: url, errors: errors, wake: wake.readEnd, cancellation: cancellation, stallTimeout: stallTimeout,
        totalTimeout: totalTimeout)
      defer { connection.close() }
      try connection.sendRequest()
      var reader = HTTPResponseReader(source: connection, errors: errors)
      return try reader.readResponse(limit: limit)
    }

    /// A connected socket and the fetch's deadlines: the source of an `HTTPResponseReader`.
    private struct Connection: HTTPByteSource {
      let url: URL
      let errors: FetchErrors
      let wake: Int32
      let cancellation: CatalogCancellation
      let stallTimeout: Duration
      let totalTimeout: Duration
      let deadline: ContinuousClock.Instant
      private var fd: Int32 = -1

      init(
        url: URL, errors: FetchErrors, wake: Int32, cancellation: CatalogCancellation, stallTimeout: Duration,
        totalTimeout: Duration
      ) throws(ReaderError) {
        self.url = url
        self.errors = errors
        self.wake = wake
        self.cancellation = cancellation
        self.stallTimeout = stallTimeout
        self.totalTimeout = totalTimeout
        deadline = .now + totalTimeout
        fd = try connect()
      }

      /// Closes the socket (called once, when the fetch is over).
      func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
      }

      // MARK: Connecting and sending

      private func connect() throws(ReaderError) -> Int32 {
        guard url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty else {
          throw errors.unavailable("not an http URL with a host")
        }
        let port = url.port ?? 80
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let status = getaddrinfo(name, "\(port)", &hints, &list)
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

      func sendRequest() throws(ReaderError) {
        var target = url.path(percentEncoded: true)
        if target.isEmpty { target = "/" }
        if let query = url.query(percentEncoded: true) { target += "?" + query }
        var host = url.host ?? ""
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }  // an IPv6 literal
        let authority = url.port.map { "\(host):\($0)" } ?? host
        let request = Array(
          ("GET \(target) HTTP/1.1\r\nHost: \(authority)\r\nUser-Agent: ReaderKit\r\nAccept-Encoding: identity\r\n"
            + "Connection: close\r\n\r\n").utf8)
        var sent = 0
        while sent < request.count {
          let result = request.withUnsafeBytes { bytes in
            send(fd, bytes.baseAddress.map { $0 + sent }, bytes.count - sent, Int32(MSG_NOSIGNAL))
          }
          if result > 0 {
            sent += result
          } else if result < 0, errno == EAGAIN || errno == EWOULDBLOCK {
            try wait(fd, for: Int16(POLLOUT))
          } else if result < 0, errno == EINTR {
            continue
          } else {
            throw errors.unavailable("cannot send the request: \(String(cString: strerror(errno)))", errno: errno)
          }
        }
      }

      // MARK: Reading

      /// Receives what the server sent next, waiting for it as `wait(_:for:)` does.
      func read(into buffer: UnsafeMutableRawBufferPointer) throws(ReaderError) -> Int {
        while true {
          let result = recv(fd, buffer.baseAddress, buffer.count, 0)
          if result >= 0 { return result }
          switch errno {
          case EINTR: continue
          case EAGAIN, EWOULDBLOCK: try wait(fd, for: Int16(POLLIN))
          default:
            throw errors.unavailable("the connection failed: \(String(cString: strerror(errno)))", errno: errno)
          }
        }
      }

      // MARK: Waiting

      /// Waits until `fd` is ready for `events`, at most `stallTimeout` and never past the deadline;
      /// throws `canceled` as soon as the cancellation is requested.
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
  }

  extension Duration {
    /// The duration in whole milliseconds, rounded up.
    fileprivate var milliseconds: Int64 {
      let (seconds, attoseconds) = components
      return seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }
  }
#endif
