import Foundation
import TestSupport

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The catalog tests' HTTP server (`Tests/ReaderKitTests/Updates/Server/catalog_server.py`), one per
/// test: files under `root`, and the misbehaving paths the script describes — `stall`, `trickle/MS`,
/// `raw/NAME` (hostile answers), `count/PATH`, `open`.
///
/// The server exits, removing its files, when its standard input closes: at `stop()`, or when the test
/// process ends however it ends. The test runner's blocked signal mask is cleared around the spawn.
final class CatalogTestServer: Sendable {
  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  /// The directory it serves.
  let root: URL
  /// The port it listens on.
  let port: Int
  private let process: Process
  private let input: Pipe

  private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("ReaderKitTests/Updates/Server/catalog_server.py")

  private init(process: Process, input: Pipe, port: Int, root: URL) {
    self.process = process
    self.input = input
    self.port = port
    self.root = root
  }

  /// Starts a server and waits, off the cooperative pool, until it says its port (at most 20 s).
  static func start() async throws -> CatalogTestServer {
    guard let python = PseudoTerminal.python else {
      throw Failure(description: "python3 is not on the PATH; the HTTP catalog tests need it")
    }
    let process = Process(python: Self.script, interpreter: URL(fileURLWithPath: python))
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.runWithSignalsUnblocked()
    // "port N root PATH"
    let line = try await offPool {
      var line = Data()
      let deadline = Date().addingTimeInterval(20)
      while !line.contains(UInt8(ascii: "\n")), Date() < deadline, process.isRunning {
        line.append(output.fileHandleForReading.availableData)
      }
      return line
    }
    let words = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace).map(String.init)
    guard words.count == 4, words[0] == "port", let port = Int(words[1]) else {
      try? input.fileHandleForWriting.close()
      try? await process.exit(within: .zero)
      throw Failure(description: "the catalog server did not announce itself: \(words)")
    }
    return CatalogTestServer(
      process: process, input: input, port: port, root: URL(fileURLWithPath: words[3], isDirectory: true))
  }

  /// The server's URL for `path`.
  func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

  /// How many requests `path` has had.
  func requests(_ path: String) throws -> Int {
    let text = try String(contentsOf: URL(string: url("count/" + path))!, encoding: .utf8)
    guard let count = Int(text.dropFirst(6).trimmingCharacters(in: .whitespacesAndNewlines)) else {
      throw Failure(description: "unreadable count: \(text)")
    }
    return count
  }

  /// How many stall and trickle connections under `prefix` the server still holds open.
  func openConnections(_ prefix: String) throws -> Int {
    let text = try String(contentsOf: URL(string: url(prefix + "/open"))!, encoding: .utf8)
    guard let count = Int(text.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines)) else {
      throw Failure(description: "unreadable open count: \(text)")
    }
    return count
  }

  /// Ends the server: it exits when its standard input closes; a thread of its own waits for that
  /// (and kills it if it takes more than 10 s), so a test's last reference never blocks a thread of the
  /// cooperative pool.
  deinit {
    try? input.fileHandleForWriting.close()
    process.exitInBackground(within: .seconds(10))
  }
}
