import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs the built `readerctl` in a pseudo-terminal of a given size, as a person would in a terminal
/// window: it is the session leader with the terminal as its controlling terminal, so a resize sends it
/// SIGWINCH and a Ctrl-C byte sends it SIGINT.
///
/// The terminal is driven by a small Python script (standard library only: `pty`, `termios`): Python
/// is there wherever the NDEF oracle is, and it needs no compiler or package. The script records every
/// byte the program wrote and where in that stream each step happened, so a test can replay the bytes
/// through `VirtualScreen` and look at the screen at any step.
enum PseudoTerminal {
  /// One thing to do while the program runs.
  enum Step {
    /// Waits until the output written since the previous step matches the regular expression.
    case wait(String, timeout: Double = 30)
    /// Resizes the terminal (the program gets SIGWINCH).
    case resize(Size)
    /// Types `text` (`"\u{3}"` is Ctrl-C).
    case send(String)
    /// Names this point of the output, for `Run.screen(at:)`.
    case mark(String)

    fileprivate var json: [String: Any] {
      switch self {
      case .wait(let pattern, let timeout): ["wait": pattern, "timeout": timeout]
      case .resize(let size): ["resize": [size.rows, size.columns]]
      case .send(let text): ["send": text]
      case .mark(let name): ["mark": name]
      }
    }
  }

  /// The rows and columns of a terminal.
  struct Size: Hashable, Sendable {
    var rows: Int
    var columns: Int
  }

  /// What a run wrote, and when each step happened in it.
  struct Run {
    /// Every byte the program wrote to the terminal (with the terminal's `\n` → `\r\n`).
    var output: [UInt8]
    /// The size the terminal started with.
    var size: Size
    /// Each step's offset in `output`, and the step.
    var steps: [(offset: Int, step: Step)]
    /// The exit status, or 128 + the signal that ended it.
    var status: Int32

    /// The screen after everything up to the mark `name` (or to the end), resizes applied where they
    /// happened.
    func screen(at name: String? = nil) throws -> VirtualScreen {
      var screen = VirtualScreen(rows: size.rows, columns: size.columns)
      var position = 0
      for (offset, step) in steps {
        if case .resize(let size) = step {
          screen.feed(output[position..<offset])
          position = offset
          screen.resize(rows: size.rows, columns: size.columns)
        }
        if case .mark(let marked) = step, marked == name {
          screen.feed(output[position..<offset])
          return screen
        }
      }
      if let name { throw Failure(description: "no mark \(name)") }
      screen.feed(output[position...])
      return screen
    }

    /// The output as text, escape codes and all.
    var text: String { String(decoding: output, as: UTF8.self) }
  }

  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  /// `python3` on the `PATH`, if any.
  static let python: String? = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/python3" }.first { FileManager.default.isExecutableFile(atPath: $0) }
  }()

  /// Whether these tests must run: CI sets `READERKIT_CI=1`, and there a missing tool is a failure.
  static let required = ProcessInfo.processInfo.environment["READERKIT_CI"] == "1"

  /// Whether the pseudo-terminal tests can run here (or must, and then fail).
  static let enabled = python != nil || required

  /// Runs `readerctl arguments…` in a `size` terminal with `TERM=xterm` (unless `environment` says
  /// otherwise), performing `steps`, then waits for it to exit.
  static func run(
    _ arguments: [String], size: Size, environment: [String: String] = [:], steps: [Step] = [],
    timeout: Double = 90
  ) async throws -> Run {
    guard let python else {
      throw Failure(
        description: "python3 is not on the PATH; the pseudo-terminal tests need it (READERKIT_CI=1 requires them)")
    }
    var variables = ProcessInfo.processInfo.environment
    variables["TERM"] = "xterm"
    variables.removeValue(forKey: "COLUMNS")
    variables.removeValue(forKey: "LINES")
    variables.merge(environment) { $1 }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    let stdout = Pipe()
    process.standardOutput = stdout
    process.standardInput = FileHandle.nullDevice
    // The script gives readerctl its limit; it gets some more of its own to report. Runs take turns with the
    // other readerctl runs, and get a short limit once one of them was killed at its own.
    let spec: [String: Any] = [
      "argv": [ReaderctlProcess.executable.path] + arguments, "env": variables, "rows": size.rows,
      "cols": size.columns, "steps": steps.map(\.json),
    ]
    let specText = String(decoding: try JSONSerialization.data(withJSONObject: spec), as: UTF8.self)
    let (data, limit, shortened) = try await ChildProcessGate.shared.withTurn(killedOnCancel: { child in
      let (limit, shortened) = ChildProcessGate.shared.limit(.seconds(timeout))
      let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
      process.arguments = ["-c", script, specText, String(seconds)]
      try process.runWithSignalsUnblocked()
      child.started(process)
      defer { child.ended() }
      var data = Data()
      try process.bounded(within: limit + .seconds(30)) {
        data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
      }
      return (data, limit, shortened)
    })
    guard process.terminationStatus == 0,
      let report = try JSONSerialization.jsonObject(with: data) as? [String: Any],
      let encoded = report["output"] as? String, let output = Data(base64Encoded: encoded),
      let marks = report["steps"] as? [Int], let status = report["status"] as? Int
    else {
      throw Failure(
        description:
          "the pseudo-terminal script failed (\(process.terminationStatus)): \(String(decoding: data, as: UTF8.self))")
    }
    if let failed = report["failedWait"] as? String {
      throw Failure(
        description: "never saw /\(failed)/ in: \(String(decoding: output, as: UTF8.self).debugDescription)")
    }
    if report["timedOut"] as? Bool == true {
      ChildProcessGate.shared.noteOverrun(of: "readerctl \(arguments.joined(separator: " "))")
      throw Failure(
        description:
          "readerctl did not exit within \(limit)\(shortened.map { " (\($0))" } ?? ""); it wrote: \(String(decoding: output, as: UTF8.self).debugDescription)"
      )
    }
    return Run(
      output: Array(output), size: size, steps: Array(zip(marks, steps)), status: Int32(status))
  }

  /// The driver: a pty of the given size, the program as session leader on it, the steps, every byte.
  private static let script = #"""
    import base64, errno, fcntl, json, os, re, select, signal, struct, sys, termios, time

    spec = json.loads(sys.argv[1])
    master, slave = os.openpty()

    def set_size(rows, cols):
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    set_size(spec["rows"], spec["cols"])
    pid = os.fork()
    if pid == 0:
        try:
            os.close(master)
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            for fd in (0, 1, 2):
                os.dup2(slave, fd)
            if slave > 2:
                os.close(slave)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            for number in (signal.SIGPIPE, signal.SIGINT, signal.SIGXFSZ):
                signal.signal(number, signal.SIG_DFL)
            os.execve(spec["argv"][0], spec["argv"], spec["env"])
        finally:
            os._exit(127)
    os.close(slave)

    output = bytearray()
    eof = False
    deadline = time.monotonic() + float(sys.argv[2])

    def pump(until):
        global eof
        remaining = until - time.monotonic()
        if eof or remaining <= 0:
            return
        ready, _, _ = select.select([master], [], [], min(remaining, 0.05))
        if not ready:
            return
        try:
            chunk = os.read(master, 65536)
        except OSError as error:
            if error.errno != errno.EIO:
                raise
            chunk = b""
        if chunk:
            output.extend(chunk)
        else:
            eof = True

    offsets = []
    failed = None
    since = 0
    for step in spec["steps"]:
        if "wait" in step:
            pattern = re.compile(step["wait"].encode())
            limit = min(deadline, time.monotonic() + step["timeout"])
            while not pattern.search(output, since) and not eof and time.monotonic() < limit:
                pump(limit)
            if not pattern.search(output, since):
                failed = step["wait"]
                break
            offsets.append(len(output))
        else:
            offsets.append(len(output))
            if "resize" in step:
                set_size(*step["resize"])
            elif "send" in step:
                os.write(master, step["send"].encode())
            since = len(output)

    while not eof and time.monotonic() < deadline:
        pump(deadline)
    timed_out = not eof
    if timed_out or failed:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    print(json.dumps({
        "output": base64.b64encode(bytes(output)).decode(),
        "steps": offsets, "status": code if code >= 0 else 128 - code,
        "timedOut": timed_out, "failedWait": failed,
    }))
    """#
}
