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
final class CatalogTestServer {
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

  init() throws {
    guard let python = PseudoTerminal.python else {
      throw Failure(description: "python3 is not on the PATH; the HTTP catalog tests need it")
    }
    process = Process(python: Self.script, interpreter: URL(fileURLWithPath: python))
    input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.runWithSignalsUnblocked()
    // "port N root PATH"
    var line = Data()
    let deadline = Date().addingTimeInterval(20)
    while !line.contains(UInt8(ascii: "\n")), Date() < deadline, process.isRunning {
      line.append(output.fileHandleForReading.availableData)
    }
    let words = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace).map(String.init)
    guard words.count == 4, words[0] == "port", let port = Int(words[1]) else {
      process.terminate()
      throw Failure(description: "the catalog server did not announce itself: \(words)")
    }
    self.port = port
    root = URL(fileURLWithPath: words[3], isDirectory: true)
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

  /// Ends the server and waits for it.
  func stop() {
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
  }

  deinit { stop() }
}
