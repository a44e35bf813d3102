#if canImport(Glibc)
  import Foundation
  import Glibc
  import ReaderCore
  import Testing

  @testable import ReaderKit

  /// What HTTPS adds to the catalog's fetches on Linux (TLS over libssl): the certificate is verified —
  /// its chain, its dates, the host name — and a refusal names why; the handshake stops for the stall
  /// timeout and for a cancellation like any other wait. The catalog server's HTTPS ports present a
  /// certificate for localhost from a CA made for the run, the same expired, and a self-signed one.
  /// What HTTP and HTTPS share (bodies, bounds, stalls, cancels) runs over both in
  /// `HTTPUpdateCatalogTests` and `HTTPFetchInterruptionTests`.
  @Suite(.timeLimit(.minutes(1)), .enabled(if: CatalogScheme.available.contains(.https)))
  struct HTTPSCatalogTests {
    /// Fetches the manifest at `url` and returns the error; records an issue if there is none.
    private func refusal(_ url: URL, trusting authority: URL?) -> ReaderError? {
      let catalog = HTTPUpdateCatalog(
        manifestURL: url, stallTimeout: .seconds(5), totalTimeout: .seconds(10), trustedCertificates: authority)
      let error = #expect(throws: ReaderError.self) { try catalog.manifest() }
      #expect(error?.code == .updateCatalogUnavailable, "\(String(describing: error))")
      #expect(error?.context["url"] == url.absoluteString)
      return error
    }

    @Test func aCertificateForAnotherHostIsRefusedNamingTheMismatch() throws {
      try withCatalogServer(.https) { server in
        try ManifestFixture().write(to: server.root)
        let tls = try server.tls()
        // The certificate names DNS:localhost only; 127.0.0.1 is the same server under another name.
        let url = URL(string: "https://127.0.0.1:\(tls.port)\(server.url("manifest.json").path)")!
        let error = refusal(url, trusting: tls.certificateAuthority)
        #expect(error?.context["verification"] == "IP address mismatch", "\(String(describing: error))")
        #expect(error?.cause == .other("certificate verify failed: IP address mismatch"))
      }
    }

    @Test func aCertificateFromAnUntrustedAuthorityIsRefusedWithoutTheTrustedCertificatesOption() throws {
      try withCatalogServer(.https) { server in
        try ManifestFixture().write(to: server.root)
        let error = refusal(server.url("manifest.json"), trusting: nil)
        #expect(error?.context["verification"] == "unable to get local issuer certificate")
        let trusted = HTTPUpdateCatalog(
          manifestURL: server.url("manifest.json"), trustedCertificates: server.trustedCertificates)
        #expect(try trusted.manifest().releases.isEmpty == false, "the same server, its CA trusted")
      }
    }

    @Test func aSelfSignedCertificateIsRefused() throws {
      try withCatalogServer(.https) { server in
        let tls = try server.tls()
        let url = URL(string: "https://localhost:\(tls.selfSignedPort)\(server.url("manifest.json").path)")!
        let error = refusal(url, trusting: tls.certificateAuthority)
        #expect(error?.context["verification"] == "self-signed certificate", "\(String(describing: error))")
        #expect(error?.cause == .other("certificate verify failed: self-signed certificate"))
      }
    }

    @Test func anExpiredCertificateIsRefused() throws {
      try withCatalogServer(.https) { server in
        let tls = try server.tls()
        let url = URL(string: "https://localhost:\(tls.expiredPort)\(server.url("manifest.json").path)")!
        let error = refusal(url, trusting: tls.certificateAuthority)
        #expect(error?.context["verification"] == "certificate has expired", "\(String(describing: error))")
      }
    }

    @Test func anUnreadableTrustedCertificatesFileIsUnavailableNamingIt() throws {
      try withCatalogServer(.https) { server in
        let missing = URL(fileURLWithPath: "/nonexistent/ca.pem")
        let error = refusal(server.url("manifest.json"), trusting: missing)
        #expect(
          error?.context["reason"]?.hasPrefix("cannot load the trusted certificates in /nonexistent/ca.pem") == true)
      }
    }

    // MARK: The handshake's waits

    @Test func aServerSilentDuringTheHandshakeEndsInTheStallTimeout() throws {
      try withSilentTLSPeer { port, _ in
        let url = URL(string: "https://localhost:\(port)/manifest.json")!
        let catalog = HTTPUpdateCatalog(manifestURL: url, stallTimeout: .milliseconds(300), totalTimeout: .seconds(10))
        let error = #expect(throws: ReaderError.self) { try catalog.manifest() }
        #expect(error?.code == .updateCatalogTimedOut, "\(String(describing: error))")
        #expect(error?.context["timeout"] == "0.3")
      }
    }

    @Test func aCancellationStopsTheHandshakeAtOnceAndClosesTheSocket() throws {
      try withSilentTLSPeer { port, accept in
        let url = URL(string: "https://127.0.0.1:\(port)/manifest.json")!
        let catalog = HTTPUpdateCatalog(manifestURL: url, stallTimeout: .seconds(20), totalTimeout: .seconds(30))
        let stop = CatalogCancellation()
        let outcome = Locked<Result<UpdateManifest, ReaderError>?>(nil)
        let thread = Thread {
          let result = Result { () throws(ReaderError) in try catalog.manifest(cancellation: stop) }
          outcome.withLock { $0 = result }
        }
        thread.start()
        // The client is in the handshake once its ClientHello has arrived.
        let peer = try accept()
        defer { close(peer) }
        var ready = [pollfd(fd: peer, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&ready, 1, 10_000) == 1, "no ClientHello")
        var hello = [UInt8](repeating: 0, count: 4096)
        #expect(recv(peer, &hello, hello.count, 0) > 0)
        #expect(hello.first == 0x16, "a TLS handshake record")
        #expect(outcome.withLock { $0 } == nil)
        let cancelledAt = ContinuousClock.now
        stop.cancel()
        let end = cancelledAt + .seconds(5)
        while outcome.withLock({ $0 }) == nil, ContinuousClock.now < end { usleep(1000) }
        let stoppedWithin = ContinuousClock.now - cancelledAt
        #expect(stoppedWithin < .milliseconds(500), "stopped after \(stoppedWithin)")
        let result = try #require(outcome.withLock { $0 })
        #expect(result.failure?.code == .canceled, "\(result)")
        // The socket is closed once the call has returned: the peer reads the end of the stream. The end
        // may reach the peer a little later: a child that another test is starting at that moment holds a
        // copy of every descriptor from its fork until its exec closes the close-on-exec ones.
        var closed = [pollfd(fd: peer, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&closed, 1, 2_000) == 1, "the client's socket is still open")
        #expect(recv(peer, &hello, hello.count, Int32(MSG_DONTWAIT)) == 0)
      }
    }
  }

  /// Runs `body` with a port on 127.0.0.1 that accepts TCP connections and never answers: `accept`
  /// takes the next connection (waiting at most 10 s).
  private func withSilentTLSPeer<T>(_ body: (Int, () throws -> Int32) throws -> T) throws -> T {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw CatalogServer.Failure(description: "socket: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
        bind(fd, socketAddress, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, socketAddress, &length) == 0
      }
    }
    guard bound else { throw CatalogServer.Failure(description: "bind/listen: errno \(errno)") }
    let accept = { () throws -> Int32 in
      var ready = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
      guard poll(&ready, 1, 10_000) == 1 else { throw CatalogServer.Failure(description: "no connection") }
      let peer = Glibc.accept(fd, nil, nil)
      guard peer >= 0 else { throw CatalogServer.Failure(description: "accept: errno \(errno)") }
      return peer
    }
    return try body(Int(UInt16(bigEndian: address.sin_port)), accept)
  }
#endif
