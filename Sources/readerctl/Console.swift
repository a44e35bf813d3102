import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where `readerctl` writes: standard output and standard error, unbuffered, so that output appears
/// as it happens and interleaves exactly in the order it was produced.
struct Console: Sendable {
  /// Whether standard output is a terminal (live tables redraw in place; pacing is on by default).
  let isTerminal: Bool

  /// The process's standard output and error.
  static let standard = Console(isTerminal: isatty(STDOUT_FILENO) == 1)

  /// Writes `line` and a newline to standard output.
  func line(_ line: String = "") { write(line + "\n") }

  /// Writes `text` to standard output as it is.
  func write(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }

  /// Writes `bytes` to standard output as they are.
  func write(bytes: [UInt8]) { FileHandle.standardOutput.write(Data(bytes)) }

  /// Writes `text` to standard error as it is.
  func error(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }

  /// Reads all of standard input, up to `limit` bytes; `nil` when there is more than that.
  func readInput(limit: Int) -> [UInt8]? {
    var bytes: [UInt8] = []
    while let chunk = try? FileHandle.standardInput.read(upToCount: 64 * 1024), !chunk.isEmpty {
      bytes += chunk
      if bytes.count > limit { return nil }
    }
    return bytes
  }
}
