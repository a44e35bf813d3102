#if canImport(Glibc)
  import Glibc
  import ReaderCore

  /// A pipe that becomes readable when a `CatalogCancellation` is cancelled, so a `poll(2)` on a
  /// socket and on it wakes at once for either.
  ///
  /// `close()` unhooks the cancellation before closing the pipe: once it returns, nothing writes to
  /// the descriptors any more (which the system may then reuse).
  struct WakeUpPipe {
    /// The end to poll for `POLLIN`.
    let readEnd: Int32
    private let writeEnd: Int32
    private let cancellation: CatalogCancellation
    private let token: UInt64?

    /// A pipe hooked to `cancellation`; `nil` when the system has no descriptors left.
    init?(_ cancellation: CatalogCancellation) {
      var ends: [Int32] = [-1, -1]
      // pipe2(2) is not visible to Swift here; the flags are set right after.
      guard pipe(&ends) == 0 else { return nil }
      for end in ends {
        _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
      }
      readEnd = ends[0]
      writeEnd = ends[1]
      self.cancellation = cancellation
      let writeEnd = ends[1]
      token = cancellation.onCancel {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
      }
    }

    /// Unhooks the cancellation and closes both ends.
    func close() {
      cancellation.removeHandler(token)
      _ = Glibc.close(readEnd)
      _ = Glibc.close(writeEnd)
    }
  }
#endif
