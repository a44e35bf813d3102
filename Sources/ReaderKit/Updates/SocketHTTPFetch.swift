#if canImport(Glibc)
  import Foundation
  import Glibc
  import ReaderCore

  /// One bounded HTTP/1.1 GET on Linux, for `http:` and `https:` alike: the body of a 2xx answer, or a
  /// typed error, within fixed time and memory, stopped at once by a `CatalogCancellation`.
  ///
  /// The HTTP logic lives here once, over an `HTTPByteStream`: a plain TCP socket (`TCPByteStream`) for
  /// `http:`, TLS over one (`TLSByteStream`, OpenSSL's libssl, the certificate verified against the
  /// system's trust store and the host name) for `https:`. URLSession is not used on Linux: there it
  /// reads ahead of its delegate without back-pressure and cannot be stopped at a byte bound (an
  /// endless body was seen to be pulled in by the hundreds of megabytes before a cancel took effect).
  ///
  /// Every wait — connecting, the TLS handshake, sending, reading — is a `poll(2)` on the socket and on
  /// a wake-up pipe the cancellation writes to, bounded by `stallTimeout` (no progress for that long)
  /// and by what is left of `totalTimeout`. The answer is read by an `HTTPResponseReader` with the
  /// stream as its source: at most `limit` body bytes are kept, and reading stops at the first byte
  /// beyond them; Content-Length, chunked and close-delimited bodies are read, and the answer is parsed
  /// strictly (`HTTPResponseHead`, `HTTPChunkSyntax`): a line that breaks the syntax — a junk status
  /// line, a signed or oversized chunk size, a trailer that is not a field — is `updateCatalogInvalid`
  /// naming the line, never a crash. Redirects are not followed (a 3xx answer is an HTTP error status).
  enum SocketHTTPFetch {
    /// Fetches `url` (`http:` or `https:`) and returns its body, or `.exceeded` when it has more than
    /// `limit` bytes. For `https:`, `trustedCertificates` (a PEM file of CA certificates) is trusted
    /// besides the system's trust store.
    /// - Throws: `updateCatalogUnavailable` (a refused or failed connection, a certificate that does not
    ///   verify with a `.other("certificate verify failed: …")` cause, a failed handshake, a status
    ///   outside 2xx with `context["status"]` and an `.httpStatus` cause, a connection closed early),
    ///   `updateCatalogTimedOut` (silent for `stallTimeout`, or not done after `totalTimeout`:
    ///   `context["timeout"]` in seconds), `updateCatalogInvalid` (a malformed answer:
    ///   `context["line"]`), `canceled` (`context["url"]`). Every error has `context["url"]`.
    static func get(
      _ url: URL, limit: Int, stallTimeout: Duration, totalTimeout: Duration, trustedCertificates: URL? = nil,
      cancellation: CatalogCancellation
    ) throws(ReaderError) -> BoundedBody {
      let errors = FetchErrors(url: url)
      guard !cancellation.isCancelled else { throw errors.canceled() }
      let scheme = url.scheme?.lowercased()
      guard scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
        throw errors.unavailable("not an http or https URL with a host")
      }
      let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
      guard let wake = WakeUpPipe(cancellation) else {
        throw errors.unavailable("cannot open a pipe: \(String(cString: strerror(errno)))", errno: errno)
      }
      defer { wake.close() }
      let tcp = try TCPByteStream(
        host: name, port: url.port ?? (scheme == "https" ? 443 : 80), errors: errors, wake: wake.readEnd,
        cancellation: cancellation, stallTimeout: stallTimeout, totalTimeout: totalTimeout)
      if scheme == "https" {
        var stream = try TLSByteStream(over: tcp, host: name, trustedCertificates: trustedCertificates)
        defer { stream.close() }
        return try exchange(url, over: &stream, limit: limit, errors: errors)
      }
      var stream = tcp
      defer { stream.close() }
      return try exchange(url, over: &stream, limit: limit, errors: errors)
    }

    /// Sends the GET for `url` and reads the answer.
    private static func exchange(
      _ url: URL, over stream: inout some HTTPByteStream, limit: Int, errors: FetchErrors
    ) throws(ReaderError) -> BoundedBody {
      try stream.write(request(url))
      var reader = HTTPResponseReader(source: stream, errors: errors)
      return try reader.readResponse(limit: limit)
    }

    /// The request's bytes: a GET of the URL's path and query, with the identity encoding and no
    /// persistent connection.
    static func request(_ url: URL) -> [UInt8] {
      var target = url.path(percentEncoded: true)
      if target.isEmpty { target = "/" }
      if let query = url.query(percentEncoded: true) { target += "?" + query }
      var host = url.host ?? ""
      if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }  // an IPv6 literal
      let authority = url.port.map { "\(host):\($0)" } ?? host
      return Array(
        ("GET \(target) HTTP/1.1\r\nHost: \(authority)\r\nUser-Agent: ReaderKit\r\nAccept-Encoding: identity\r\n"
          + "Connection: close\r\n\r\n").utf8)
    }
  }
#endif
