import Foundation
import ReaderCore
import TestSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `python3 -m http.server` serving a directory on 127.0.0.1, on a port the system picks.
///
/// The test runner blocks SIGTERM for its threads and a spawned child inherits that mask, so the mask
/// is cleared around the spawn; `stop()` then ends the server with SIGTERM (SIGKILL if it lingers).
final class LocalHTTPServer: Sendable {
  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  private let process: Process
  private let stopped = Locked(false)
  /// The port it listens on.
  let port: Int

  /// The server's URL for `path` (relative to the served directory).
  func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

  private init(process: Process, port: Int) {
    self.process = process
    self.port = port
  }

  /// Starts serving `directory`; returns once the server listens (it says so within 20 s), having
  /// waited off the cooperative pool.
  static func start(serving directory: URL) async throws -> LocalHTTPServer {
    guard let python = PseudoTerminal.python else {
      throw Failure(description: "python3 is not on the PATH; the HTTP catalog tests need it")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = ["-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", directory.path, "0"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.runWithSignalsUnblocked()
    // "Serving HTTP on 127.0.0.1 port 43215 (http://127.0.0.1:43215/) ..."
    let text = try await offPool {
      var text = ""
      let deadline = Date().addingTimeInterval(20)
      while Date() < deadline, !text.contains(") ..."), process.isRunning {
        text += String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
      }
      return text
    }
    guard let match = text.firstMatch(of: /port (\d+)/), let port = Int(match.1) else {
      try? await process.exit(within: .zero)
      throw Failure(description: "the HTTP server did not say its port: \(text.debugDescription)")
    }
    return LocalHTTPServer(process: process, port: port)
  }

  /// Ends the server: SIGTERM now; a thread of its own waits for the exit (SIGKILL after 5 s), so a
  /// test never blocks a thread of the cooperative pool on it. Idempotent.
  func stop() {
    let first = stopped.withLock { stopped in
      defer { stopped = true }
      return !stopped
    }
    guard first, process.isRunning else { return }
    process.terminate()
    process.exitInBackground(within: .seconds(5))
  }

  deinit { stop() }
}

/// A TCP port on 127.0.0.1 that accepts connections (the kernel completes them) and never answers.
final class SilentPort: Sendable {
  private let socketDescriptor: Int32
  /// The port.
  let port: Int

  init() throws {
    #if canImport(Glibc)
      let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(descriptor, pointer, length) == 0 && listen(descriptor, 8) == 0
          && getsockname(descriptor, pointer, &length) == 0
      }
    }
    socketDescriptor = descriptor
    guard descriptor >= 0, bound else {
      if descriptor >= 0 { close(descriptor) }
      throw LocalHTTPServer.Failure(description: "cannot listen on 127.0.0.1: errno \(errno)")
    }
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  deinit { close(socketDescriptor) }

  /// Whether a connection is waiting to be accepted (the kernel has completed it), asked without
  /// waiting.
  var hasPendingConnection: Bool {
    var poller = pollfd(fd: socketDescriptor, events: Int16(POLLIN), revents: 0)
    return poll(&poller, 1, 0) > 0
  }

  /// A port on 127.0.0.1 that nothing listens on: taken from the system, then let go.
  static func closedPort() throws -> Int {
    try SilentPort().port
  }
}
