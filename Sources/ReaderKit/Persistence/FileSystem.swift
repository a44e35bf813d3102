#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A failed system call's `errno`.
package struct Errno: Error, Sendable, Hashable {
  /// The `errno` value, e.g. `ENOENT`.
  package var code: Int32

  package init(_ code: Int32) { self.code = code }
}

/// What `stat(2)` says about a file, as far as the stores need it.
package struct FileInfo: Sendable, Hashable {
  /// The kind of file.
  package enum Kind: Sendable, Hashable {
    case regular, directory, symbolicLink, other
  }

  package var kind: Kind
  /// The size in bytes.
  package var size: Int

  package init(kind: Kind, size: Int) {
    self.kind = kind
    self.size = size
  }
}

/// How `FileSystem.open(_:_:)` opens a path.
package enum OpenMode: Sendable, Hashable {
  /// For reading, without blocking (a FIFO at the path never hangs the caller).
  case readOnly
  /// A new file for writing, failing with `EEXIST` when the path exists (`O_CREAT | O_EXCL`).
  case createExclusive(permissions: mode_t)
  /// A directory, for `sync` and `lock` (`O_DIRECTORY`).
  case directory
}

/// The system calls the file store makes, one method each, so that the store's rules can be tested
/// against faults a real disk rarely shows: a call that fails with any `errno`, a short write, an
/// `EINTR`, a crash or a power loss between any two calls.
///
/// `LiveFileSystem` makes the real calls. Every method reports failure by throwing the call's `errno`;
/// nothing retries: `EINTR` and short writes reach the caller, which handles them.
package protocol FileSystem: Sendable {
  /// `open(2)`; returns the descriptor.
  func open(_ path: String, _ mode: OpenMode) throws(Errno) -> Int32
  /// `close(2)`. The descriptor is released even when it fails.
  func close(_ descriptor: Int32) throws(Errno)
  /// `read(2)` into `buffer`; returns the count, 0 at the end of the file.
  func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int
  /// `write(2)` from `buffer`; returns the count, which may be short.
  func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(Errno) -> Int
  /// Makes a file's data, or a directory's entries, durable: `fsync(2)`, or `F_FULLFSYNC` on Apple
  /// platforms, which also flushes the drive's cache.
  func sync(_ descriptor: Int32) throws(Errno)
  /// `fstat(2)`.
  func info(_ descriptor: Int32) throws(Errno) -> FileInfo
  /// `stat(2)`, or `lstat(2)` when `followingLinks` is false.
  func info(atPath path: String, followingLinks: Bool) throws(Errno) -> FileInfo
  /// `mkdir(2)`.
  func makeDirectory(_ path: String, permissions: mode_t) throws(Errno)
  /// `rename(2)`: atomically replaces `destination`.
  func rename(_ source: String, to destination: String) throws(Errno)
  /// `link(2)`: a second name for `source`.
  func link(_ source: String, to destination: String) throws(Errno)
  /// `unlink(2)`.
  func unlink(_ path: String) throws(Errno)
  /// `flock(2)` with `LOCK_EX`, held until the descriptor is closed.
  func lockExclusively(_ descriptor: Int32) throws(Errno)
  /// The names in a directory, without `.` and `..`.
  func contentsOfDirectory(_ path: String) throws(Errno) -> [String]
}

extension FileSystem {
  /// `write(2)` of `bytes[offset...]`; returns the count, which may be short.
  package func write(_ descriptor: Int32, _ bytes: [UInt8], from offset: Int) throws(Errno) -> Int {
    try bytes.withUnsafeBytes { raw in
      Result { () throws(Errno) in try write(descriptor, from: UnsafeRawBufferPointer(rebasing: raw[offset...])) }
    }.get()
  }

  /// `read(2)` into `buffer[offset...]`; returns the count, 0 at the end of the file.
  package func read(_ descriptor: Int32, into buffer: inout [UInt8], at offset: Int) throws(Errno) -> Int {
    try buffer.withUnsafeMutableBytes { raw in
      Result { () throws(Errno) in try read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: raw[offset...])) }
    }.get()
  }
}
