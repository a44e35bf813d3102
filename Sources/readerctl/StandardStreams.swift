import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The process's standard input, output and error, read and written with the system calls (through
/// `DescriptorWriter`), never through a buffer that could fail later or crash on a failed write.
///
/// A failed write to standard output (a full disk, a closed pipe, a closed descriptor) ends the
/// command at once with exit status 74 and one line on standard error saying why; a failed write to
/// standard error ends it with 74 and nothing more, since there is nowhere left to say it.
enum StandardStreams {
  /// What reading all of standard input gave.
  enum Input: Equatable {
    /// Everything, no more than the limit.
    case bytes([UInt8])
    /// More than the limit: reading stopped one chunk past it.
    case tooLarge
    /// A read failed with this errno.
    case failed(Int32)
  }

  private static let ending = Atomic<Bool>(false)

  /// Makes every write failure visible, before anything is written or opened.
  ///
  /// SIGPIPE is ignored, so a reader that went away (`readerctl demo | head -1`) is an `EPIPE` to
  /// report instead of a silent death mid-line. A standard descriptor the shell closed (`>&-`) is
  /// taken by `/dev/null`, opened the other way round (read-only for output, write-only for input):
  /// nothing opened later (a socket, a store file) can take its number, writes to it still fail with
  /// `EBADF`, and reads of a closed standard input see `EBADF` too.
  static func prepare() {
    _ = signal(SIGPIPE, SIG_IGN)
    for descriptor: Int32 in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
      guard fcntl(descriptor, F_GETFD) == -1, errno == EBADF else { continue }
      let placeholder = open("/dev/null", descriptor == STDIN_FILENO ? O_WRONLY : O_RDONLY)
      if placeholder >= 0, placeholder != descriptor {
        _ = dup2(placeholder, descriptor)
        _ = close(placeholder)
      }
    }
  }

  /// Writes `bytes` to standard output, or ends the command with exit status 74.
  static func output(_ bytes: some Collection<UInt8>) {
    guard let code = DescriptorWriter.write(bytes, to: STDOUT_FILENO) else { return }
    end(reporting: "readerctl: cannot write to standard output: \(DescriptorWriter.describe(code))\n")
  }

  /// Writes `bytes` to standard error, or ends the command with exit status 74.
  static func error(_ bytes: some Collection<UInt8>) {
    guard DescriptorWriter.write(bytes, to: STDERR_FILENO) != nil else { return }
    end(reporting: nil)
  }

  /// Ends the process with `ExitStatus.ioError` after writing `report` to standard error, if it can.
  ///
  /// `_exit`, not `exit`: another thread (a resize redraw, a signal handler) may be writing at the
  /// same moment, and nothing is buffered that exit handlers would have to flush. Only the first
  /// failure reports; a second thread failing meanwhile exits quietly.
  private static func end(reporting report: String?) -> Never {
    if !ending.exchange(true, ordering: .acquiringAndReleasing), let report {
      _ = DescriptorWriter.write(Array(report.utf8), to: STDERR_FILENO)
    }
    _exit(ExitStatus.ioError)
  }

  /// Reads all of standard input, stopping once it holds more than `limit` bytes.
  static func readInput(limit: Int) -> Input {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
      if count == 0 { return .bytes(bytes) }
      if count < 0 {
        switch errno {
        case EINTR: continue
        case EAGAIN, EWOULDBLOCK:
          var ready = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
          if poll(&ready, 1, -1) < 0, errno != EINTR { return .failed(errno) }
          continue
        case let code: return .failed(code)
        }
      }
      bytes += chunk[..<count]
      if bytes.count > limit { return .tooLarge }
    }
  }
}
