#if canImport(Glibc)
  import CLibssl
  import Foundation
  import Glibc
  import ReaderCore

  /// TLS (OpenSSL's libssl) over a `TCPByteStream`: the transport of `https:` on Linux.
  ///
  /// The server must present a certificate chain that verifies against the system's trust store
  /// (OpenSSL's default paths; on Debian /etc/ssl/certs) or the extra `trustedCertificates` PEM file,
  /// and that names the host: a DNS name is checked against the certificate's names and sent as SNI,
  /// an IP literal against its IP addresses. TLS 1.2 is the oldest version accepted.
  ///
  /// The socket stays non-blocking: whenever libssl wants to read or write (`SSL_ERROR_WANT_READ`,
  /// `SSL_ERROR_WANT_WRITE`), during the handshake as while reading the answer, the stream waits as
  /// the TCP stream does, so the fetch's deadlines, stall timeout and cancellation hold throughout.
  struct TLSByteStream: HTTPByteStream {
    private let tcp: TCPByteStream
    private let context: OpaquePointer
    private let ssl: OpaquePointer

    /// Performs the handshake over `tcp` for `host`; takes ownership of `tcp` (closed by `close()`, or
    /// here when the handshake fails).
    /// - Throws: `updateCatalogUnavailable` when the certificate does not verify (its cause
    ///   `.other("certificate verify failed: …")` names OpenSSL's reason, also in
    ///   `context["verification"]`), when the handshake fails otherwise, or when `trustedCertificates`
    ///   cannot be read; `updateCatalogTimedOut`, `canceled` as the TCP stream's waits.
    init(over tcp: TCPByteStream, host: String, trustedCertificates: URL?) throws(ReaderError) {
      let errors = tcp.errors
      guard let context = SSL_CTX_new(TLS_client_method()) else {
        tcp.close()
        throw errors.unavailable("cannot create a TLS context: \(Self.lastError())")
      }
      let made: OpaquePointer?
      do throws(ReaderError) {
        try Self.configure(context, trustedCertificates: trustedCertificates, errors: errors)
        made = SSL_new(context)
      } catch {
        SSL_CTX_free(context)
        tcp.close()
        throw error
      }
      guard let ssl = made else {
        SSL_CTX_free(context)
        tcp.close()
        throw errors.unavailable("cannot create a TLS connection: \(Self.lastError())")
      }
      self.tcp = tcp
      self.context = context
      self.ssl = ssl
      do throws(ReaderError) {
        try configure(host: host)
        try handshake()
      } catch {
        close()
        throw error
      }
    }

    func close() {
      SSL_free(ssl)
      SSL_CTX_free(context)
      tcp.close()
    }

    // MARK: Handshake

    /// Sets what every connection made from `context` inherits: TLS 1.2 at least, a verified peer, the
    /// trusted certificates.
    private static func configure(_ context: OpaquePointer, trustedCertificates: URL?, errors: FetchErrors)
      throws(ReaderError)
    {
      ERR_clear_error()
      guard readerkit_ssl_ctx_require_tls12(context) == 1 else {
        throw errors.unavailable("cannot require TLS 1.2: \(Self.lastError())")
      }
      readerkit_ssl_ctx_set_stream_options(context)
      SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
      guard SSL_CTX_set_default_verify_paths(context) == 1 else {
        throw errors.unavailable("cannot load the system's trusted certificates: \(Self.lastError())")
      }
      if let file = trustedCertificates {
        guard SSL_CTX_load_verify_locations(context, file.path, nil) == 1 else {
          throw errors.unavailable("cannot load the trusted certificates in \(file.path): \(Self.lastError())")
        }
      }
    }

    /// Names the host the certificate must be for, and the socket.
    private func configure(host: String) throws(ReaderError) {
      let errors = tcp.errors
      if Self.isIPAddress(host) {
        guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else {
          throw errors.unavailable("cannot check the certificate for \(host): \(Self.lastError())")
        }
      } else {
        guard SSL_set1_host(ssl, host) == 1, readerkit_ssl_set_server_name(ssl, host) == 1 else {
          throw errors.unavailable("cannot check the certificate for \(host): \(Self.lastError())")
        }
      }
      guard SSL_set_fd(ssl, tcp.fd) == 1 else {
        throw errors.unavailable("cannot attach TLS to the socket: \(Self.lastError())")
      }
    }

    private func handshake() throws(ReaderError) {
      while true {
        ERR_clear_error()
        let result = SSL_connect(ssl)
        if result == 1 { return }
        try waitOrThrow(result, doing: "the TLS handshake failed")
      }
    }

    // MARK: Writing and reading

    func write(_ bytes: [UInt8]) throws(ReaderError) {
      var sent = 0
      while sent < bytes.count {
        ERR_clear_error()
        let result = bytes.withUnsafeBytes { buffer in
          SSL_write(ssl, buffer.baseAddress! + sent, Int32(clamping: buffer.count - sent))
        }
        if result > 0 {
          sent += Int(result)
        } else {
          try waitOrThrow(result, doing: "cannot send the request")
        }
      }
    }

    /// Decrypts what the server sent next, waiting for it as the TCP stream does; 0 once the server
    /// has closed the connection.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(ReaderError) -> Int {
      while true {
        ERR_clear_error()
        let result = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if result > 0 { return Int(result) }
        if SSL_get_error(ssl, result) == SSL_ERROR_ZERO_RETURN { return 0 }
        try waitOrThrow(result, doing: "the connection failed")
      }
    }

    // MARK: Errors

    /// Waits for what libssl wants after `result` of an SSL call, or throws the failure it reports.
    private func waitOrThrow(_ result: Int32, doing what: String) throws(ReaderError) {
      let errors = tcp.errors
      let code = SSL_get_error(ssl, result)
      switch code {
      case SSL_ERROR_WANT_READ: try tcp.wait(for: Int16(POLLIN))
      case SSL_ERROR_WANT_WRITE: try tcp.wait(for: Int16(POLLOUT))
      case SSL_ERROR_SYSCALL where errno == EINTR: return
      default:
        let verification = SSL_get_verify_result(ssl)
        if verification != X509_V_OK {
          let reason = String(cString: X509_verify_cert_error_string(verification))
          throw errors.untrusted(reason, code: Int(verification))
        }
        if code == SSL_ERROR_SYSCALL, errno != 0 {
          throw errors.unavailable("\(what): \(String(cString: strerror(errno)))", errno: errno)
        }
        throw errors.unavailable("\(what): \(Self.lastError())")
      }
    }

    /// OpenSSL's last queued error, worded; "closed by the server" when the queue is empty.
    private static func lastError() -> String {
      let code = ERR_get_error()
      guard code != 0 else { return "closed by the server" }
      var text = [CChar](repeating: 0, count: 256)
      ERR_error_string_n(code, &text, text.count)
      return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func isIPAddress(_ host: String) -> Bool {
      var buffer = in6_addr()
      return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }
  }
#endif
