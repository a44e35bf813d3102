import Foundation
import ReaderCore
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs the Python `ndeflib` oracle scripts in `Tests/NFCKitTests/Oracle` with the package's `.venv`.
///
/// The child is always waited for, off the cooperative pool: its output is read to the end and its exit
/// awaited; one that runs past the timeout is killed (SIGTERM, then SIGKILL, which no signal mask can
/// block). The test runner's blocked signal mask is cleared around `run()` so the child does not
/// inherit it.
enum OracleRunner {
  /// The package root, from this file's path (Tests/NFCKitTests/OracleRunner.swift).
  static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// The venv's Python.
  static let python = packageRoot.appendingPathComponent(".venv/bin/python")

  /// The oracle scripts' folder.
  static let scripts = packageRoot.appendingPathComponent("Tests/NFCKitTests/Oracle")

  /// Whether `NFCKIT_SKIP_ORACLE=1` asks to skip the oracle tests.
  static let skipRequested = ProcessInfo.processInfo.environment["NFCKIT_SKIP_ORACLE"] == "1"

  /// Whether the oracle tests must run (`READERKIT_CI=1`, set by `.ci/run`): then a missing ndeflib, or
  /// `NFCKIT_SKIP_ORACLE=1`, fails them instead of skipping them.
  static let required = ProcessInfo.processInfo.environment["READERKIT_CI"] == "1"

  /// Whether the venv's Python imports ndeflib 0.3.3 (asked once).
  static let installed: Bool = {
    guard FileManager.default.isExecutableFile(atPath: python.path) else { return false }
    let check = Process()
    check.executableURL = python
    check.arguments = ["-c", #"import ndef, importlib.metadata as m; assert m.version("ndeflib") == "0.3.3""#]
    check.standardOutput = FileHandle.nullDevice
    check.standardError = FileHandle.nullDevice
    guard (try? check.runWithSignalsUnblocked()) != nil else { return false }
    // A `static let`, evaluated where nothing can wait asynchronously: bounded instead.
    guard (try? check.waitForExit(within: .seconds(30))) != nil else { return false }
    return check.terminationStatus == 0
  }()

  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  /// Whether the oracle tests run: ndeflib is installed and not skipped on purpose, or they are required.
  static let enabled = required || (installed && !skipRequested)

  /// The one line a skipped run prints: why, and how to enable the tests.
  static let skipNote: Comment =
    skipRequested
    ? "NFCKIT_SKIP_ORACLE=1 skips the ndeflib oracle checks"
    : "ndeflib is not installed in .venv: run `bash .ci/ndef-oracle.sh` (Python 3 and PyPI) to enable the ndeflib oracle checks"

  /// Fails with a clear message (not a skip) when the oracle must run but cannot, or is skipped on purpose.
  static func requireInstalled() throws {
    if required && skipRequested {
      throw Failure(
        description: "READERKIT_CI=1 requires the ndeflib oracle checks, but NFCKIT_SKIP_ORACLE=1 skips them")
    }
    guard installed else {
      throw Failure(
        description: """
          The ndeflib oracle is not installed: \(python.path) does not import ndeflib 0.3.3. Run \
          `bash .ci/ndef-oracle.sh` from the package root.
          """)
    }
  }

  /// Runs `script` with `arguments`, feeding `input` on stdin, and returns its stdout.
  static func run(script: String, arguments: [String] = [], input: String = "", timeout: Duration = .seconds(60))
    async throws -> String
  {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nfckit-oracle-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let inputFile = directory.appendingPathComponent("stdin.txt")
    let errorFile = directory.appendingPathComponent("stderr.txt")
    try Data(input.utf8).write(to: inputFile)
    _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)

    let process = Process(python: scripts.appendingPathComponent(script), arguments, interpreter: python)
    let stdin = try FileHandle(forReadingFrom: inputFile)
    let stderr = try FileHandle(forWritingTo: errorFile)
    defer {
      try? stdin.close()
      try? stderr.close()
    }
    let stdout = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr

    try process.runWithSignalsUnblocked()
    let output: Data
    do {
      output = try await process.readToEndAndExit(stdout, within: timeout)
    } catch is ChildProcessTimeout {
      throw Failure(description: "\(script) did not finish within \(timeout) and was killed")
    }
    guard process.terminationStatus == 0 else {
      let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
      throw Failure(description: "\(script) exited with status \(process.terminationStatus): \(errors)")
    }
    return String(decoding: output, as: UTF8.self)
  }

  /// Runs `script` and parses every non-empty stdout line as a JSON object.
  static func runJSONLines(script: String, arguments: [String] = [], input: String = "") async throws
    -> [[String: Any]]
  {
    try await run(script: script, arguments: arguments, input: input).split(separator: "\n").map { line in
      guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
        throw Failure(description: "\(script) printed a line that is not a JSON object: \(line)")
      }
      return object
    }
  }
}
