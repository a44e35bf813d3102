import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where `readerctl` writes: standard output and standard error, unbuffered, so that output appears
/// as it happens and interleaves exactly in the order it was produced. Every write goes through
/// `StandardStreams`, which ends the command with exit status 74 when one fails.
struct Console: Sendable {
  /// Whether standard output is a terminal (a person is watching: pacing is on by default).
  let isTerminal: Bool
  /// Whether standard output is a terminal that understands cursor movement, so live tables can
  /// redraw in place: not with `TERM` unset, empty or `dumb`.
  let supportsCursor: Bool

  /// The process's standard output and error.
  static let standard: Console = {
    let isTerminal = isatty(STDOUT_FILENO) == 1
    let term = ProcessInfo.processInfo.environment["TERM"] ?? ""
    return Console(isTerminal: isTerminal, supportsCursor: isTerminal && !term.isEmpty && term != "dumb")
  }()

  /// Writes `line` and a newline to standard output.
  func line(_ line: String = "") { write(line + "\n") }

  /// Writes `text` to standard output as it is; a failed write ends the command (`StandardStreams`).
  func write(_ text: String) { StandardStreams.output(text.utf8) }

  /// Writes `bytes` to standard output as they are; a failed write ends the command.
  func write(bytes: [UInt8]) { StandardStreams.output(bytes) }

  /// Writes `text` to standard error as it is; a failed write ends the command.
  func error(_ text: String) { StandardStreams.error(text.utf8) }

  /// Reads all of standard input, up to `limit` bytes.
  func readInput(limit: Int) -> StandardStreams.Input { StandardStreams.readInput(limit: limit) }

  /// The size of the terminal on standard output now; `COLUMNS` and `LINES`, or 80×24, when the
  /// terminal does not say.
  func terminalSize() -> TerminalSize {
    var size = winsize()
    if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 {
      return TerminalSize(rows: Int(size.ws_row), columns: Int(size.ws_col))
    }
    let environment = ProcessInfo.processInfo.environment
    return TerminalSize(
      rows: environment["LINES"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? 24,
      columns: environment["COLUMNS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? 80)
  }
}

/// The rows and columns of a terminal, or of the part of it a live table may use.
struct TerminalSize: Sendable, Hashable {
  var rows: Int
  var columns: Int
}
