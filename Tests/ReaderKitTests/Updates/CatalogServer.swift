import Foundation
import ReaderCore

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
  /// Held open for the life of the process; the server exits when it closes.
  private let input: FileHandle
  private let process: Process

  private init(root: URL, port: Int, input: FileHandle, process: Process) {
    self.root = root
    self.port = port
    self.input = input
    self.process = process
  }

  /// The server, started on first use.
  static let shared: Result<CatalogServer, Failure> = Result { () throws(Failure) in try start() }

  private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Server/catalog_server.py")

  private static func start() throws(Failure) -> CatalogServer {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path]
    process.environment = ProcessInfo.processInfo.environment.merging(["PYTHONDONTWRITEBYTECODE": "1"]) { $1 }
    let stdin = Pipe()
    let stdout = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    var empty = sigset_t()
    var previous = sigset_t()
    sigemptyset(&empty)
    pthread_sigmask(SIG_SETMASK, &empty, &previous)
    do {
      try process.run()
      pthread_sigmask(SIG_SETMASK, &previous, nil)
    } catch {
      pthread_sigmask(SIG_SETMASK, &previous, nil)
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
    guard words.count == 4, words[0] == "port", let port = Int(words[1]), words[2] == "root" else {
      kill(pid, SIGKILL)
      process.waitUntilExit()
      throw Failure(description: "the catalog server did not announce itself (printed \"\(words)\")")
    }
    return CatalogServer(
      root: URL(fileURLWithPath: words[3], isDirectory: true), port: port, input: stdin.fileHandleForWriting,
      process: process)
  }
}

/// One test's part of the shared catalog server: a directory of its own and the URLs under it.
struct CatalogSite {
  /// The directory served at `url("")`.
  let root: URL
  private let base: String

  fileprivate init(server: CatalogServer, name: String) {
    root = server.root.appendingPathComponent(name, isDirectory: true)
    base = "http://127.0.0.1:\(server.port)/\(name)/"
  }

  /// The URL of `path` in this test's directory; also `stall`, `endless`, `endless-progress`, `huge` and
  /// `status/N`, which misbehave as `Server/catalog_server.py` describes.
  func url(_ path: String) -> URL { URL(string: base + path)! }
}

extension CatalogSite {
  /// A fresh directory on the shared catalog server; the caller removes `root`.
  static func fresh() throws -> CatalogSite {
    let site = CatalogSite(server: try CatalogServer.shared.get(), name: UUID().uuidString)
    try FileManager.default.createDirectory(at: site.root, withIntermediateDirectories: true)
    return site
  }
}

/// Runs `body` with a fresh directory on the shared catalog server, removed afterwards.
func withCatalogServer<T>(_ body: (CatalogSite) throws -> T) throws -> T {
  let site = CatalogSite(server: try CatalogServer.shared.get(), name: UUID().uuidString)
  try FileManager.default.createDirectory(at: site.root, withIntermediateDirectories: true)
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
func withCatalogServer<T>(_ body: (CatalogSite) async throws -> T) async throws -> T {
  let site = CatalogSite(server: try CatalogServer.shared.get(), name: UUID().uuidString)
  try FileManager.default.createDirectory(at: site.root, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: site.root) }
  return try await body(site)
}
