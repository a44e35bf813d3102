import Foundation
import ReaderCore
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs the built `readerctl` as a child process and collects what it printed and its exit status.
///
/// Output goes to files rather than pipes, so a chatty child never blocks on a full pipe; a child that
/// outlives `timeout` is killed (SIGTERM, then SIGKILL); the test runner's blocked signal mask is
/// cleared around the spawn so the child starts with a normal one.
struct ReaderctlProcess {
  struct Result {
    var status: Int32
    var stdout: String
    var stderr: String
    /// How long the process took to end after `interruptWhen` sent it SIGINT.
    var stoppedAfterInterrupt: Duration?
    /// How long the process ran, from its start to its end (not counting the wait for its turn).
    var elapsed: Duration

    /// Whether this is how a usage error ends a command: status 64, nothing on standard output, and on
    /// standard error exactly two lines, the error and `see 'readerctl <command> --help'`.
    func isUsageError(of command: String) -> Bool {
      let lines = stderr.split(separator: "\n", omittingEmptySubsequences: false)
      return status == 64 && stdout.isEmpty && lines.count == 3 && lines[0].hasPrefix("readerctl: ")
        && lines[1] == "see '\(["readerctl", command].filter { !$0.isEmpty }.joined(separator: " ")) --help'"
        && lines[2].isEmpty
    }

    /// Standard output's lines, without the trailing empty one.
    var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
  }

  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  /// The `readerctl` executable built beside the test bundle, or the one `READERCTL_EXECUTABLE` names
  /// (to run these tests against another build).
  static let executable: URL = {
    if let path = ProcessInfo.processInfo.environment["READERCTL_EXECUTABLE"], !path.isEmpty {
      return URL(fileURLWithPath: path)
    }
    let candidates = [
      URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(), Bundle.main.bundleURL,
      Bundle.main.bundleURL.deletingLastPathComponent(),
    ]
    let found = candidates.map { $0.appendingPathComponent("readerctl") }.first {
      FileManager.default.isExecutableFile(atPath: $0.path)
    }
    return found ?? candidates[0].appendingPathComponent("readerctl")
  }()

  /// Runs `readerctl arguments…` with `input` on standard input; with `interruptAfter`, sends SIGINT
  /// (Ctrl-C) once standard output contains that text; with `interruptWhen`, once that holds (asked
  /// every `checkingEvery`).
  /// `standardOutput` and `standardError` replace the files that collect them (`/dev/full`, a pipe
  /// nobody reads); the descriptors in `closing` are closed when `readerctl` starts (`>&-`), through
  /// `/bin/sh`.
  ///
  /// The whole run (its turn, the start, the polls for the marker or the condition, the wait for the
  /// exit) happens on a thread of its own, so it never holds a thread of the cooperative pool; runs
  /// take turns through `gate` (`ChildProcessGate.shared`: as many at once as there are cores); a run that
  /// outlives `timeout` seconds is killed (SIGTERM, then SIGKILL) and throws a `Failure` naming it. Once
  /// a run was killed so, the runs after it get `ChildProcessGate.limitAfterAnOverrun` at most.
  /// `timeout` starts when the child starts: the wait for a turn is not counted by it, nor by a
  /// suite's `workTimeLimit`. Cancelling the calling task (a time limit that ran out) kills the child
  /// and throws `CancellationError`.
  static func run(
    _ arguments: [String], input: [UInt8] = [], environment: [String: String] = [:], timeout: Double = 60,
    interruptAfter marker: String? = nil, interruptWhen ready: (@Sendable () -> Bool)? = nil,
    checkingEvery interval: Duration = .milliseconds(10), standardOutput: FileHandle? = nil,
    standardError: FileHandle? = nil,
    closing: [Int32] = [], asNobody: Bool = false, program: String = "readerctl", gate: ChildProcessGate = .shared
  ) async throws -> Result {
    try await gate.withTurn(killedOnCancel: { child in
      try runNow(
        arguments, input: input, environment: environment, timeout: timeout, interruptAfter: marker,
        interruptWhen: ready, checkingEvery: interval, standardOutput: standardOutput, standardError: standardError,
        closing: closing, asNobody: asNobody, program: program, gate: gate, child: child)
    })
  }

  /// `run`, on the calling thread, which is a thread of its own: it polls and waits.
  private static func runNow(
    _ arguments: [String], input: [UInt8], environment: [String: String], timeout: Double,
    interruptAfter marker: String?, interruptWhen ready: (@Sendable () -> Bool)?, checkingEvery interval: Duration,
    standardOutput: FileHandle?, standardError: FileHandle?, closing: [Int32], asNobody: Bool, program: String,
    gate: ChildProcessGate, child: CancellableChild
  ) throws -> Result {
    let executable = Self.executable.deletingLastPathComponent().appendingPathComponent(program)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readerctl-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let files = ["stdin", "stdout", "stderr"].map { directory.appendingPathComponent($0) }
    try Data(input).write(to: files[0])
    for file in files.dropFirst() { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
    let handles = [
      try FileHandle(forReadingFrom: files[0]), try FileHandle(forWritingTo: files[1]),
      try FileHandle(forWritingTo: files[2]),
    ]
    defer { for handle in handles { try? handle.close() } }

    let process = Process()
    if asNobody, getuid() == 0 {
      // Root reads every file whatever its mode; `nobody` meets the permissions a user would.
      process.executableURL = URL(fileURLWithPath: setpriv)
      process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", executable.path] + arguments
    } else if closing.isEmpty {
      process.executableURL = executable
      process.arguments = arguments
    } else {
      process.executableURL = URL(fileURLWithPath: "/bin/sh")
      let redirections = closing.map { "\($0)>&-" }.joined(separator: " ")
      process.arguments = ["-c", "exec \"$0\" \"$@\" \(redirections)", executable.path] + arguments
    }
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardInput = handles[0]
    process.standardOutput = standardOutput ?? handles[1]
    process.standardError = standardError ?? handles[2]
    do {
      try process.runWithSignalsUnblocked()
    } catch {
      throw Failure(description: "cannot start \(executable.path): \(error)")
    }
    child.started(process)
    defer { child.ended() }
    let pid = process.processIdentifier
    let started = ContinuousClock.now
    let (limit, shortened) = gate.limit(.seconds(timeout))
    let grace = gate.grace()
    let deadline = started + limit
    if let marker {
      // Polls the output file: the child writes it unbuffered, so the marker shows up as it is printed.
      while process.isRunning, ContinuousClock.now < deadline {
        if let text = try? String(contentsOf: files[1], encoding: .utf8), text.contains(marker) {
          kill(pid, SIGINT)
          break
        }
        usleep(20_000)
      }
    }
    var interruptedAt: ContinuousClock.Instant?
    if let ready {
      let pause = useconds_t(
        interval.components.attoseconds / 1_000_000_000_000 + interval.components.seconds * 1_000_000)
      while process.isRunning, ContinuousClock.now < deadline, !ready() { usleep(pause) }
      interruptedAt = .now
      kill(pid, SIGINT)
    }
    do {
      try process.waitForExit(within: max(deadline - .now, .zero), grace: grace)
    } catch is ChildProcessTimeout {
      let command = "readerctl \(arguments.joined(separator: " "))"
      gate.noteOverrun(of: command)
      throw Failure(description: "\(command) was killed after \(limit)" + (shortened.map { " (\($0))" } ?? ""))
    }
    let ended = ContinuousClock.now
    return Result(
      status: process.terminationStatus, stdout: try String(contentsOf: files[1], encoding: .utf8),
      stderr: try String(contentsOf: files[2], encoding: .utf8),
      stoppedAfterInterrupt: interruptedAt.map { ended - $0 }, elapsed: ended - started)
  }

  /// `setpriv` (util-linux), which runs `readerctl` as `nobody` for `asNobody` when the tests run as root.
  static let setpriv = Process.setpriv

  /// Whether a run `asNobody` meets file permissions: the tests do not run as root, or can leave it.
  static var canMeetFilePermissions: Bool {
    getuid() != 0 || FileManager.default.isExecutableFile(atPath: setpriv)
  }

  /// Parses every line of `output` as a JSON object.
  static func jsonLines(_ output: String) throws -> [[String: Any]] {
    try output.split(separator: "\n").map { line in
      guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
        throw Failure(description: "not a JSON object: \(line)")
      }
      return object
    }
  }

  /// A fresh temporary directory, removed by the caller.
  static func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("readerctl-store-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }
}
