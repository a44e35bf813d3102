import Foundation
import ReaderCore
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A real HTTP server on 127.0.0.1 for the catalog tests (`Server/catalog_server.py`), started once
/// per test process and shared: each test gets its own directory in it (`CatalogSite`).
///
/// The server exits, removing its files, when its standard input closes, which happens when this
/// process ends however it ends, so no server outlives the test run. The test runner's blocked signal
/// mask is cleared around the spawn so signals reach the child normally, and a server that does not
/// announce its port within 10 s is killed.
final class CatalogServer: Sendable {
  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  /// The directory it serves.
  let root: URL
  /// The port it listens on.
  let port: Int
  /// Its HTTPS ports and the CA that issued their certificates; `nil` without the openssl tool.
  let tls: TLS?

  /// The HTTPS side: the same files and misbehaviours over TLS.
  struct TLS: Sendable {
    /// Presents a certificate for DNS:localhost issued by `certificateAuthority`.
    let port: Int
    /// Presents the same, expired.
    let expiredPort: Int
    /// Presents a self-signed certificate for DNS:localhost.
    let selfSignedPort: Int
    /// The PEM file of the CA the server made for this run.
    let certificateAuthority: URL
  }
  /// Held open for the life of the process; the server exits when it closes.
  private let input: FileHandle
  private let process: Process

  private init(root: URL, port: Int, tls: TLS?, input: FileHandle, process: Process) {
    self.root = root
    self.port = port
    self.tls = tls
    self.input = input
    self.process = process
  }

  /// The server, started on first use.
  static let shared: Result<CatalogServer, Failure> = Result { () throws(Failure) in try start() }

  private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Server/catalog_server.py")

  private static func start() throws(Failure) -> CatalogServer {
    let process = Process(python: script, ["--tls"])
    let stdin = Pipe()
    let stdout = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    do {
      try process.runWithSignalsUnblocked()
    } catch {
      throw Failure(description: "cannot start \(script.path): \(error)")
    }
    try? stdin.fileHandleForReading.close()

    // The first line is "port N root PATH"; a server that says nothing within 10 s is killed, which
    // ends the read.
    let pid = process.processIdentifier
    let announced = Locked(false)
    DispatchQueue.global().asyncAfter(deadline: .now() + 10) {
      if !announced.withLock({ $0 }) { kill(pid, SIGKILL) }
    }
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
      let chunk = stdout.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      line.append(chunk)
    }
    announced.withLock { $0 = true }
    let words = String(decoding: line, as: UTF8.self).split(separator: " ").map {
      $0.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    // "port N root R", or "port N tls T expired E self-signed S ca CA root R".
    var fields: [String: String] = [:]
    for index in stride(from: 0, to: words.count - 1, by: 2) { fields[words[index]] = words[index + 1] }
    guard words.count == 4 || words.count == 12, let port = fields["port"].flatMap({ Int($0) }),
      let root = fields["root"]
    else {
      kill(pid, SIGKILL)
      try? process.waitForExit(within: .seconds(5))
      throw Failure(description: "the catalog server did not announce itself (printed \"\(words)\")")
    }
    var tls: TLS?
    if let tlsPort = fields["tls"].flatMap({ Int($0) }), let expired = fields["expired"].flatMap({ Int($0) }),
      let selfSigned = fields["self-signed"].flatMap({ Int($0) }), let authority = fields["ca"]
    {
      tls = TLS(
        port: tlsPort, expiredPort: expired, selfSignedPort: selfSigned,
        certificateAuthority: URL(fileURLWithPath: authority))
    }
    return CatalogServer(
      root: URL(fileURLWithPath: root, isDirectory: true), port: port, tls: tls, input: stdin.fileHandleForWriting,
      process: process)
  }
}

/// How a test reaches the catalog server.
enum CatalogScheme: String, Sendable, CustomTestStringConvertible {
  /// `http://127.0.0.1:port/`.
  case http
  /// `https://localhost:port/`, with the server's CA trusted.
  case https

  var testDescription: String { rawValue }

  /// The schemes the tests run over: `https` too where the server could make certificates, or where
  /// `READERKIT_CI=1` requires it (then its tests fail without it); else says once why it is left out.
  static let available: [CatalogScheme] = {
    let server = try? CatalogServer.shared.get()
    if server?.tls != nil || ProcessInfo.processInfo.environment["READERKIT_CI"] == "1" { return [.http, .https] }
    print("skipping the https catalog tests: the catalog server has no https (the openssl tool is missing)")
    return [.http]
  }()
}

/// One test's part of the shared catalog server: a directory of its own and the URLs under it.
struct CatalogSite {
  /// The directory served at `url("")`.
  let root: URL
  /// The CA to trust for `url(_:)` (`https:` sites), else `nil`.
  let trustedCertificates: URL?
  /// The part of the server's URLs before `name`.
  private let origin: String
  private let name: String
  private let server: CatalogServer

  fileprivate init(server: CatalogServer, name: String, scheme: CatalogScheme) throws {
    root = server.root.appendingPathComponent(name, isDirectory: true)
    self.name = name
    self.server = server
    switch scheme {
    case .http:
      origin = "http://127.0.0.1:\(server.port)"
      trustedCertificates = nil
    case .https:
      let tls = try server.requireTLS()
      origin = "https://localhost:\(tls.port)"
      trustedCertificates = tls.certificateAuthority
    }
  }

  /// The URL of `path` in this test's directory; also `stall`, `endless`, `endless-progress`, `huge` and
  /// `status/N`, which misbehave as `Server/catalog_server.py` describes.
  func url(_ path: String) -> URL { URL(string: "\(origin)/\(name)/\(path)")! }

  /// The URL of `path` over plain HTTP, whatever the site's scheme (for asking the server questions).
  func plainURL(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(server.port)/\(name)/\(path)")! }

  /// The server's HTTPS side.
  func tls() throws -> CatalogServer.TLS { try server.requireTLS() }
}

extension CatalogServer {
  /// The HTTPS side; throws (naming why) where the server could not make certificates.
  func requireTLS() throws -> TLS {
    guard let tls else {
      throw Failure(description: "the catalog server has no https: the openssl command-line tool is missing")
    }
    return tls
  }
}

extension CatalogSite {
  /// A fresh directory on the shared catalog server; the caller removes `root`.
  static func fresh() throws -> CatalogSite {
    try fresh(.http)
  }

  /// A fresh directory on the shared catalog server reached over `scheme`; the caller removes `root`.
  static func fresh(_ scheme: CatalogScheme) throws -> CatalogSite {
    let site = try CatalogSite(server: try CatalogServer.shared.get(), name: UUID().uuidString, scheme: scheme)
    try FileManager.default.createDirectory(at: site.root, withIntermediateDirectories: true)
    return site
  }
}

/// Runs `body` with a fresh directory on the shared catalog server, reached over `scheme`, removed
/// afterwards.
func withCatalogServer<T>(_ scheme: CatalogScheme = .http, _ body: (CatalogSite) throws -> T) throws -> T {
  let site = try CatalogSite.fresh(scheme)
  defer { try? FileManager.default.removeItem(at: site.root) }
  return try body(site)
}

/// Runs `body` with a port on 127.0.0.1 that refuses connections: a socket is bound to it but never
/// listens, so the port cannot be taken by anyone else meanwhile.
func withRefusingPort<T>(_ body: (Int) throws -> T) throws -> T {
  #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
  #endif
  guard fd >= 0 else { throw CatalogServer.Failure(description: "socket: errno \(errno)") }
  defer { close(fd) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  address.sin_port = 0
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let bound = withUnsafeMutablePointer(to: &address) { pointer in
    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
      bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
    }
  }
  guard bound else { throw CatalogServer.Failure(description: "bind: errno \(errno)") }
  return try body(Int(UInt16(bigEndian: address.sin_port)))
}

/// `withCatalogServer` for async tests.
func withCatalogServer<T>(_ scheme: CatalogScheme = .http, _ body: (CatalogSite) async throws -> T) async throws
  -> T
{
  let site = try CatalogSite.fresh(scheme)
  defer { try? FileManager.default.removeItem(at: site.root) }
  return try await body(site)
}
