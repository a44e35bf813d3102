#if canImport(Glibc)
  import Foundation
  import Glibc
  import ReaderCore

  /// One bounded HTTP/1.1 GET over a plain TCP socket: the body of a 2xx answer, or a typed error,
  /// within fixed time and memory. Used for `http:` URLs on Linux, where URLSession reads ahead of its
  /// delegate without back-pressure and cannot be stopped at a byte bound (an endless body was seen to
  /// be pulled in by the hundreds of megabytes before a cancel took effect).
  ///
  /// Every wait is a `poll(2)` bounded by `stallTimeout` (no byte for that long) and by what is left of
  /// `totalTimeout`; at most `limit` body bytes are kept, and reading stops at the first byte beyond
  /// them. Content-Length, chunked and close-delimited bodies are read; redirects are not followed (a 3xx
  /// answer is an HTTP error status). Host names are resolved with `getaddrinfo`, whose wait is bounded
  /// by the system resolver's own timeouts.
  enum SocketHTTPFetch {
    /// The most header bytes accepted.
    static let maximumHeaderSize = 64 * 1024

    /// Fetches `url` (`http:`) and returns its body, or `.exceeded` when it has more than `limit` bytes.
    /// - Throws: the same errors as `HTTPFetch.get`.
    static func get(
      _ url: URL, limit: Int, stallTimeout: Duration, totalTimeout: Duration
    ) throws(ReaderError) -> BoundedBody {
      var connection = try Connection(
        url: url, stallTimeout: stallTimeout, deadline: .now + totalTimeout, totalTimeout: totalTimeout)
      defer { connection.close() }
      try connection.sendRequest()
      let head = try connection.readHead()
      guard (200..<300).contains(head.status) else {
        throw ReaderError(
          .updateCatalogUnavailable, "\(url.absoluteString) answered with HTTP status \(head.status)",
          context: ["url": url.absoluteString, "status": "\(head.status)", "reason": "HTTP status \(head.status)"])
      }
      if head.headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
        return try connection.readChunkedBody(limit: limit)
      }
      if let field = head.headers["content-length"] {
        guard let length = Int(field.trimmingCharacters(in: .whitespaces)), length >= 0 else {
          throw connection.unavailable("the Content-Length \(field) is not a number")
        }
        guard length <= limit else { return .exceeded(limit: limit) }
        return .complete(try connection.readExactly(length))
      }
      return try connection.readToEnd(limit: limit)
    }

    /// The status and header fields (names in lower case).
    struct Head {
      var status: Int
      var headers: [String: String]
    }

    /// A connected socket with a read buffer and the fetch's deadlines.
    private struct Connection {
      let url: URL
      let stallTimeout: Duration
      let deadline: ContinuousClock.Instant
      let totalTimeout: Duration
      private var fd: Int32 = -1
      /// Bytes read but not consumed yet.
      private var buffer: [UInt8] = []
      private var start = 0

      init(url: URL, stallTimeout: Duration, deadline: ContinuousClock.Instant, totalTimeout: Duration)
        throws(ReaderError)
      {
        self.url = url
        self.stallTimeout = stallTimeout
        self.deadline = deadline
        self.totalTimeout = totalTimeout
        fd = try connect()
      }

      mutating func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
      }

      // MARK: Connecting and sending

      private func connect() throws(ReaderError) -> Int32 {
        guard url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty else {
          throw unavailable("not an http URL with a host")
        }
        let port = url.port ?? 80
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let status = getaddrinfo(name, "\(port)", &hints, &list)
        guard status == 0, let first = list else {
          throw unavailable("unknown host (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(list) }
        var lastError = ReaderError(.updateCatalogUnavailable, "no address", context: [:])
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
          entry = address.pointee.ai_next
          let fd = socket(
            address.pointee.ai_family,
            address.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue)
              | Int32(SOCK_CLOEXEC.rawValue), address.pointee.ai_protocol)
          guard fd >= 0 else {
            lastError = unavailable("cannot open a socket: \(String(cString: strerror(errno)))")
            continue
          }
          do throws(ReaderError) {
            try finishConnecting(fd, address.pointee.ai_addr, address.pointee.ai_addrlen)
            return fd
          } catch {
            _ = Glibc.close(fd)
            if error.code == .updateCatalogTimedOut { throw error }
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
          ? unavailable("connection refused") : unavailable("cannot connect: \(String(cString: strerror(code)))")
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
            send(fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
          }
          if result > 0 {
            sent += result
          } else if result < 0, errno == EAGAIN || errno == EWOULDBLOCK {
            try wait(fd, for: Int16(POLLOUT))
          } else if result < 0, errno == EINTR {
            continue
          } else {
            throw unavailable("cannot send the request: \(String(cString: strerror(errno)))")
          }
        }
      }

      // MARK: Reading

      /// Reads more bytes into the buffer; `false` at the end of the stream.
      private mutating func fill() throws(ReaderError) -> Bool {
        if start > 0, start == buffer.count {
          buffer.removeAll(keepingCapacity: true)
          start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
          let result = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
          if result > 0 {
            buffer.append(contentsOf: chunk[..<result])
            return true
          }
          if result == 0 { return false }
          switch errno {
          case EINTR: continue
          case EAGAIN, EWOULDBLOCK: try wait(fd, for: Int16(POLLIN))
          default: throw unavailable("the connection failed: \(String(cString: strerror(errno)))")
          }
        }
      }

      private var available: Int { buffer.count - start }

      private mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        defer { start += count }
        return buffer[start..<start + count]
      }

      mutating func readHead() throws(ReaderError) -> Head {
        var searchFrom = 0
        while true {
          let bytes = buffer[start...]
          if let end = Self.find([13, 10, 13, 10], in: bytes, from: bytes.startIndex + searchFrom) {
            let text = String(decoding: take(end + 4 - start), as: UTF8.self)
            return try parseHead(text)
          }
          searchFrom = max(0, available - 3)
          guard available <= SocketHTTPFetch.maximumHeaderSize else {
            throw unavailable("the answer's header is larger than \(SocketHTTPFetch.maximumHeaderSize) bytes")
          }
          guard try fill() else { throw unavailable("the connection closed before an answer") }
        }
      }

      private func parseHead(_ text: String) throws(ReaderError) -> Head {
        var lines = text.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]),
          (100...999).contains(status)
        else { throw unavailable("bad server response") }
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
          guard let colon = line.firstIndex(of: ":") else { continue }
          headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Head(status: status, headers: headers)
      }

      mutating func readExactly(_ count: Int) throws(ReaderError) -> Data {
        while available < count {
          guard try fill() else { throw unavailable("the connection closed before the body was complete") }
        }
        return Data(take(count))
      }

      mutating func readToEnd(limit: Int) throws(ReaderError) -> BoundedBody {
        while true {
          if available > limit { return .exceeded(limit: limit) }
          guard try fill() else { return .complete(Data(take(available))) }
        }
      }

      mutating func readChunkedBody(limit: Int) throws(ReaderError) -> BoundedBody {
        var body = Data()
        while true {
          let line = try readLine()
          let digits = line.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) }
          guard let digits, !digits.isEmpty, digits.count <= 15, let size = Int(digits, radix: 16) else {
            throw unavailable("bad chunk size in the body")
          }
          if size == 0 { return .complete(body) }
          guard body.count + size <= limit else { return .exceeded(limit: limit) }
          body.append(try readExactly(size))
          guard try readLine().isEmpty else { throw unavailable("bad chunk end in the body") }
        }
      }

      /// One CRLF-terminated line of at most 1 KiB, without its CRLF.
      private mutating func readLine() throws(ReaderError) -> String {
        while true {
          let bytes = buffer[start...]
          if let end = Self.find([13, 10], in: bytes, from: bytes.startIndex) {
            let line = String(decoding: buffer[start..<end], as: UTF8.self)
            start = end + 2
            return line
          }
          guard available <= 1024 else { throw unavailable("a chunk header is too long") }
          guard try fill() else { throw unavailable("the connection closed before the body was complete") }
        }
      }

      private static func find(_ pattern: [UInt8], in bytes: ArraySlice<UInt8>, from: Int) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        var index = max(from, bytes.startIndex)
        while index + pattern.count <= bytes.endIndex {
          if bytes[index] == pattern[0], bytes[index..<index + pattern.count].elementsEqual(pattern) { return index }
          index += 1
        }
        return nil
      }

      // MARK: Waiting

      /// Waits until `fd` is ready for `events`, at most `stallTimeout` and never past the deadline.
      private func wait(_ fd: Int32, for events: Int16) throws(ReaderError) {
        while true {
          let now = ContinuousClock.now
          guard now < deadline else { throw timedOut(totalTimeout, "not finished after \(seconds(totalTimeout)) s") }
          let stallEnds = now + stallTimeout
          let until = min(stallEnds, deadline)
          let milliseconds = Int32(clamping: max(1, (until - now).milliseconds))
          var descriptor = pollfd(fd: fd, events: events, revents: 0)
          let ready = poll(&descriptor, 1, milliseconds)
          if ready > 0 { return }
          if ready < 0 {
            if errno == EINTR { continue }
            throw unavailable("poll failed: \(String(cString: strerror(errno)))")
          }
          if ContinuousClock.now >= deadline { continue }
          if ContinuousClock.now >= stallEnds {
            throw timedOut(stallTimeout, "nothing received for \(seconds(stallTimeout)) s")
          }
        }
      }

      // MARK: Errors

      func unavailable(_ reason: String) -> ReaderError {
        ReaderError(
          .updateCatalogUnavailable, "cannot fetch \(url.absoluteString): \(reason)",
          context: ["url": url.absoluteString, "reason": reason])
      }

      private func timedOut(_ timeout: Duration, _ reason: String) -> ReaderError {
        ReaderError(
          .updateCatalogTimedOut, "\(url.absoluteString) did not answer in time: \(reason)",
          context: ["url": url.absoluteString, "timeout": "\(seconds(timeout))", "reason": reason])
      }

      private func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
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
