import Foundation
import ReaderCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A `ReaderStore` that keeps the last connected reader in one small JSON file; the default store on
/// Linux.
///
/// The file holds one versioned record,
/// `{"deviceType":"stripeM2","locationId":"tml_1","serialNumber":"STRM2-0001","version":1}` (plus
/// `"simulated":true` for a simulated reader; a record without it is real hardware), and lives by
/// default under the XDG data directory (see `defaultLocation(environment:)`).
///
/// The rules, which together mean a record, once saved, is never lost — not to a failed call, a crash
/// or a power loss at any point of a save:
/// - **Saves replace atomically.** The new record is written to a temporary file in the same
///   directory (`last-reader.json.tmp-<random>`), flushed with `fsync`, renamed over the old file
///   with `rename(2)`, and the directory is flushed. A directory the save creates is flushed into its
///   parent too. A save that fails or is interrupted by a crash or a power loss before the rename
///   leaves the old record in place; leftover temporary files are never read, and the next save
///   removes them.
/// - **Loading never modifies anything.** A record that cannot be decoded (garbage, truncated,
///   empty, wrong types, larger than `maximumFileSize`, or written by a newer ReaderKit with a record
///   version this build does not know) throws `storeCorrupt` and stays exactly as it is.
/// - **A corrupt record is never overwritten with nothing.** `saveLastReader(_:)` and
///   `clearLastReader()` over a corrupt file first keep its bytes for diagnosis as
///   `last-reader.json.corrupt-<n>` beside it (the lowest free `n`, from 1), then write or remove the
///   record. A file that cannot be read at all (`storeUnavailable`, e.g. a directory at the path) is
///   not replaced: the save fails.
/// - Writers in this and other processes are serialized with `flock(2)` on the directory.
/// - Interrupted calls (`EINTR`) are retried and short writes continued; any other failed call fails
///   the operation with `storeUnavailable`, its `errno` as the error's `cause`.
///
/// ```swift
/// let store = FileReaderStore(fileURL: FileReaderStore.defaultLocation())
/// try store.saveLastReader(SavedReader(serialNumber: "STRM2-0001", locationId: "tml_1"))
/// let reader = try store.loadLastReader()  // the record above
/// ```
public struct FileReaderStore: ReaderStore {
  /// The largest file `loadLastReader()` reads, in bytes; a larger file is reported as `storeCorrupt`
  /// without being read into memory. A real record is under 1 KiB.
  public static let maximumFileSize = SavedReaderRecord.maximumSize

  /// The file that holds the record.
  public let fileURL: URL

  /// A step of a save or clear, named in the error's `context["step"]` when it fails.
  package enum Step: String, Sendable, Hashable, CustomStringConvertible {
    case createDirectory, lockDirectory, createTemporaryFile, write, syncFile, closeFile
    case linkAside, renameAside, rename, remove, syncDirectory

    package var description: String { rawValue }
  }

  let paths: Paths?
  let fileSystem: any FileSystem

  /// Creates a store over the file at `fileURL`, which must be a `file:` URL naming a file.
  ///
  /// Nothing is touched until the first call; a URL that cannot name a file makes every call throw
  /// `storeUnavailable`.
  public init(fileURL: URL) {
    self.init(fileURL: fileURL, fileSystem: LiveFileSystem())
  }

  /// Creates a store that makes its system calls through `fileSystem`.
  package init(fileURL: URL, fileSystem: any FileSystem) {
    self.fileURL = fileURL
    self.paths = Paths(fileURL)
    self.fileSystem = fileSystem
  }

  /// Where the record lives by default, following the XDG Base Directory specification:
  /// `$XDG_DATA_HOME/readerkit/last-reader.json`, or `$HOME/.local/share/readerkit/last-reader.json`
  /// when `XDG_DATA_HOME` is unset, empty or not an absolute path (the specification says relative
  /// paths are invalid and must be ignored). A missing or relative `HOME` is replaced by the user's
  /// home directory from the password database.
  /// - Parameter environment: the variables to read; the process environment by default.
  public static func defaultLocation(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> URL {
    let dataHome: String
    if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
      dataHome = xdg
    } else {
      dataHome = homeDirectory(environment) + "/.local/share"
    }
    return URL(fileURLWithPath: dataHome, isDirectory: true)
      .appendingPathComponent("readerkit", isDirectory: true)
      .appendingPathComponent("last-reader.json", isDirectory: false)
  }

  /// The saved reader, or `nil` when the file does not exist. Never modifies anything.
  ///
  /// - Throws: `storeCorrupt` when the file exists but holds no valid record: empty, not JSON
  ///   (`context["offset"]` is the byte offset of the first syntax error), not a JSON object, a
  ///   missing, mistyped or invalid field (`context["field"]`: an empty or blank `serialNumber` or
  ///   `locationId`, a `deviceType` that names no model this build knows — `context["value"]`), an
  ///   unknown record version (`context["version"]`), or more than
  ///   `maximumFileSize` bytes (`context["size"]`). `storeUnavailable` when it cannot be read
  ///   (`context["errno"]`), e.g. permission denied or a directory at the path. Every error carries
  ///   `context["path"]` and `context["reason"]`.
  public func loadLastReader() throws(ReaderError) -> SavedReader? {
    let paths = try usablePaths()
    switch try inspect(paths.file) {
    case .missing: return nil
    case .record(let reader): return reader
    case .corrupt(let error): throw error
    }
  }

  /// Replaces the saved reader atomically, creating the missing parent directories (mode 0700), as
  /// the default location under the XDG data directory needs on a fresh machine.
  ///
  /// A corrupt existing file is first kept aside as `last-reader.json.corrupt-<n>`.
  /// - Throws: `storeUnavailable` when the record cannot be written (`context["errno"]`,
  ///   `context["step"]`) — the old record, valid or corrupt, is then left as it was (a corrupt one
  ///   may already have its `.corrupt-<n>` copy) — or when the existing file cannot be read, in
  ///   which case it is not replaced. In the one case where the rename succeeded but flushing the
  ///   directory failed (`context["step"] == "syncDirectory"`), the new record is in place but may
  ///   not survive a power loss.
  public func saveLastReader(_ reader: SavedReader) throws(ReaderError) {
    let paths = try usablePaths()
    let bytes = try SavedReaderRecord.encode(reader, path: paths.file)
    try createDirectories(paths.directory, for: paths)
    guard let directory = try openLockedDirectory(paths) else {
      throw unavailable("the directory vanished", errno: ENOENT, step: .lockDirectory, path: paths.file)
    }
    defer { try? fileSystem.close(directory) }

    let existing = try inspect(paths.file)
    removeStaleTemporaryFiles(paths)
    let temporary = try writeTemporaryFile(bytes, paths)
    do throws(ReaderError) {
      if case .corrupt = existing { try keepAside(paths) }
      do {
        try retryingInterrupts { () throws(Errno) in try fileSystem.rename(temporary, to: paths.file) }
      } catch {
        throw unavailable("cannot replace the saved reader", errno: error.code, step: .rename, path: paths.file)
      }
    } catch {
      try? retryingInterrupts { () throws(Errno) in try fileSystem.unlink(temporary) }
      throw error
    }
    try syncDirectory(directory, paths)
  }

  /// Checks, without changing anything, that `saveLastReader(_:)` could write here, so that a caller
  /// can fail before a long operation whose result it wants to save.
  ///
  /// The path must not be a directory or another kind of non-regular file, and the record's
  /// directory — or, when it does not exist yet, the nearest existing directory above it, where the
  /// missing ones would be created — must accept a new file: a probe file is created there and
  /// removed at once. An existing record, valid or corrupt, is not read beyond its type.
  /// - Throws: `storeUnavailable` (`context["path"]`, `context["reason"]`, and `context["errno"]`
  ///   when a system call failed) when a save would fail for one of these reasons.
  public func checkCanSave() throws(ReaderError) {
    let paths = try usablePaths()
    if let info = try? retryingInterrupts({ () throws(Errno) in
      try fileSystem.info(atPath: paths.file, followingLinks: false)
    }),
      info.kind != .regular && info.kind != .symbolicLink
    {
      let what = info.kind == .directory ? "a directory" : "not a regular file"
      throw ReaderError(
        .storeUnavailable, "cannot save the reader: the path is \(what)",
        context: ["path": paths.file, "reason": "the path is \(what)"])
    }
    var directory = paths.directory
    var info: FileInfo
    while true {
      do {
        info = try retryingInterrupts { () throws(Errno) in
          try fileSystem.info(atPath: directory, followingLinks: true)
        }
        break
      } catch {
        guard error.code == ENOENT, let parent = Paths.parent(of: directory) else {
          throw Self.unavailable(
            "cannot save the reader: cannot inspect \(directory)", errno: error.code, path: paths.file)
        }
        directory = parent
      }
    }
    guard info.kind == .directory else {
      throw Self.unavailable(
        "cannot save the reader: \(directory) is not a directory", errno: ENOTDIR, path: paths.file)
    }
    let probe =
      (directory == "/" ? "" : directory) + "/\(paths.temporaryPrefix)probe-"
      + String(UInt64.random(in: .min ... .max), radix: 16)
    do {
      let descriptor = try retryingInterrupts { () throws(Errno) in
        try fileSystem.open(probe, .createExclusive(permissions: 0o600))
      }
      try? fileSystem.close(descriptor)
      try? fileSystem.unlink(probe)
    } catch {
      throw Self.unavailable(
        "cannot save the reader: cannot create files in \(directory)", errno: error.code, path: paths.file)
    }
  }

  /// Forgets the saved reader by removing the file; succeeds when there is none.
  ///
  /// A corrupt file is first kept aside as `last-reader.json.corrupt-<n>`.
  /// - Throws: `storeUnavailable` when the file cannot be removed (e.g. a directory at the path).
  public func clearLastReader() throws(ReaderError) {
    let paths = try usablePaths()
    guard let directory = try openLockedDirectory(paths) else {
      return  // no directory, so no record
    }
    defer { try? fileSystem.close(directory) }

    // A file that cannot be read is removed anyway: clearing is an explicit request.
    if case .corrupt? = try? inspect(paths.file) { try keepAside(paths) }
    do {
      try retryingInterrupts { () throws(Errno) in try fileSystem.unlink(paths.file) }
    } catch {
      // ENOENT: nothing saved, or the corrupt file was renamed aside.
      if error.code != ENOENT {
        throw unavailable("cannot remove the saved reader", errno: error.code, step: .remove, path: paths.file)
      }
    }
    try syncDirectory(directory, paths)
  }
}

// MARK: - Reading

extension FileReaderStore {
  /// Reads and decodes the file at `path` without modifying anything.
  /// - Throws: `storeUnavailable` when the file exists but cannot be read.
  func inspect(_ path: String) throws(ReaderError) -> SavedReaderRecord.Found {
    let descriptor: Int32
    do {
      descriptor = try retryingInterrupts { () throws(Errno) in try fileSystem.open(path, .readOnly) }
    } catch {
      if error.code == ENOENT { return .missing }
      throw Self.unavailable("cannot open the saved reader", errno: error.code, path: path)
    }
    defer { try? fileSystem.close(descriptor) }

    let info: FileInfo
    do {
      info = try retryingInterrupts { () throws(Errno) in try fileSystem.info(descriptor) }
    } catch {
      throw Self.unavailable("cannot inspect the saved reader", errno: error.code, path: path)
    }
    guard info.kind == .regular else {
      let what = info.kind == .directory ? "a directory" : "not a regular file"
      throw ReaderError(
        .storeUnavailable, "cannot read the saved reader: the path is \(what)",
        context: ["path": path, "reason": "the path is \(what)"])
    }
    let context = ["path": path]
    if info.size > Self.maximumFileSize {
      return .corrupt(SavedReaderRecord.tooLarge(size: info.size, context: context))
    }

    // Read at most one byte more than the limit, in case the file grows under us; never more than
    // the file's size plus that byte is allocated.
    var buffer = [UInt8](repeating: 0, count: Swift.min(info.size, Self.maximumFileSize) + 1)
    var count = 0
    while count < buffer.count {
      let n: Int
      do {
        n = try fileSystem.read(descriptor, into: &buffer, at: count)
      } catch {
        if error.code == EINTR { continue }
        throw Self.unavailable("cannot read the saved reader", errno: error.code, path: path)
      }
      if n == 0 { break }
      count += n
      if count == buffer.count && count <= Self.maximumFileSize {
        buffer.append(contentsOf: repeatElement(0, count: Swift.min(4096, Self.maximumFileSize + 1 - count)))
      }
    }
    return SavedReaderRecord.classify(buffer[..<count], context: context)
  }
}
