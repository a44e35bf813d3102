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
/// `"simulated":true` for a simulated reader; a record without it is real hardware), and lives by default under the XDG data directory (see `defaultLocation(environment:)`).
///
/// The rules, which together mean a record, once saved, is never lost:
/// - **Saves replace atomically.** The new record is written to a temporary file in the same
///   directory (`last-reader.json.tmp-<random>`), flushed with `fsync`, renamed over the old file
///   with `rename(2)`, and the directory is flushed. A save that fails or is interrupted by a crash
///   before the rename leaves the old record in place; leftover temporary files are never read, and
///   the next save removes them.
/// - **Loading never modifies anything.** A record that cannot be decoded (garbage, truncated,
///   empty, wrong types, larger than `maximumFileSize`, or written by a newer ReaderKit with a record
///   version this build does not know) throws `storeCorrupt` and stays exactly as it is.
/// - **A corrupt record is never overwritten with nothing.** `saveLastReader(_:)` and
///   `clearLastReader()` over a corrupt file first keep its bytes for diagnosis as
///   `last-reader.json.corrupt-<n>` beside it (the lowest free `n`, from 1), then write or remove the
///   record. A file that cannot be read at all (`storeUnavailable`, e.g. a directory at the path) is
///   not replaced: the save fails.
/// - Writers in this and other processes are serialized with `flock(2)` on the directory.
///
/// ```swift
/// let store = FileReaderStore(fileURL: FileReaderStore.defaultLocation())
/// try store.saveLastReader(SavedReader(serialNumber: "STRM2-0001", locationId: "tml_1"))
/// let reader = try store.loadLastReader()  // the record above
/// ```
public struct FileReaderStore: ReaderStore {
  /// The largest file `loadLastReader()` reads, in bytes; a larger file is reported as `storeCorrupt`
  /// without being read into memory. A real record is under 1 KiB.
  public static let maximumFileSize = 64 * 1024

  /// The file that holds the record.
  public let fileURL: URL

  /// A step of a save or clear, named so tests can make it fail (`fault`).
  enum Step: Sendable, Hashable {
    case createDirectory, lockDirectory, createTemporaryFile, write, syncFile, closeFile
    case linkAside, renameAside, rename, remove, syncDirectory
  }

  /// A failure injected by tests.
  enum Fault: Sendable, Hashable {
    /// The system call of `step` fails with `errno`; a failing `write` fails after half the bytes.
    case fail(Step, errno: Int32)
    /// The process "dies" after writing half the temporary file: the save stops at once, leaving the
    /// half-written temporary file behind and the lock released, as a real crash would.
    case crashDuringWrite
  }

  /// Test seam: when set, makes one step of every save and clear fail.
  var fault: Fault?

  private let paths: Paths?

  /// Creates a store over the file at `fileURL`, which must be a `file:` URL naming a file.
  ///
  /// Nothing is touched until the first call; a URL that cannot name a file makes every call throw
  /// `storeUnavailable`.
  public init(fileURL: URL) {
    self.fileURL = fileURL
    self.paths = Paths(fileURL)
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
    switch try Self.inspect(paths.file) {
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
    let bytes = try Format.encode(reader, path: paths.file)
    try createDirectories(paths.directory, for: paths)
    guard let directory = try openLockedDirectory(paths) else {
      throw unavailable("the directory vanished", errno: ENOENT, step: .lockDirectory, path: paths.file)
    }
    defer { _ = close(directory) }

    let existing = try Self.inspect(paths.file)
    removeStaleTemporaryFiles(paths)
    let temporary = try writeTemporaryFile(bytes, paths)
    do throws(ReaderError) {
      if case .corrupt = existing { try keepAside(paths) }
      if call(.rename, { rename(temporary, paths.file) }) != 0 {
        throw unavailable("cannot replace the saved reader", errno: errno, step: .rename, path: paths.file)
      }
    } catch {
      _ = unlink(temporary)
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
    var info = stat()
    if lstat(paths.file, &info) == 0 {
      let kind = info.st_mode & mode_t(S_IFMT)
      if kind == mode_t(S_IFDIR) || (kind != mode_t(S_IFREG) && kind != mode_t(S_IFLNK)) {
        let what = kind == mode_t(S_IFDIR) ? "a directory" : "not a regular file"
        throw ReaderError(
          .storeUnavailable, "cannot save the reader: the path is \(what)",
          context: ["path": paths.file, "reason": "the path is \(what)"])
      }
    }
    var directory = paths.directory
    while stat(directory, &info) != 0 {
      let code = errno
      guard code == ENOENT, let parent = Paths.parent(of: directory) else {
        throw Self.unavailable("cannot save the reader: cannot inspect \(directory)", errno: code, path: paths.file)
      }
      directory = parent
    }
    guard info.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) else {
      throw Self.unavailable(
        "cannot save the reader: \(directory) is not a directory", errno: ENOTDIR, path: paths.file)
    }
    let probe =
      (directory == "/" ? "" : directory) + "/\(paths.temporaryPrefix)probe-"
      + String(UInt64.random(in: .min ... .max), radix: 16)
    let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd != -1 else {
      throw Self.unavailable(
        "cannot save the reader: cannot create files in \(directory)", errno: errno, path: paths.file)
    }
    _ = close(fd)
    _ = unlink(probe)
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
    defer { _ = close(directory) }

    // A file that cannot be read is removed anyway: clearing is an explicit request.
    if case .corrupt? = try? Self.inspect(paths.file) { try keepAside(paths) }
    if call(.remove, { unlink(paths.file) }) != 0 {
      let code = errno
      // ENOENT: nothing saved, or the corrupt file was renamed aside.
      if code != ENOENT {
        throw unavailable("cannot remove the saved reader", errno: code, step: .remove, path: paths.file)
      }
    }
    try syncDirectory(directory, paths)
  }
}

// MARK: - Reading

extension FileReaderStore {
  /// What is at the record's path.
  private enum Existing {
    case missing
    case record(SavedReader)
    case corrupt(ReaderError)
  }

  /// Reads and decodes the file at `path` without modifying anything.
  /// - Throws: `storeUnavailable` when the file exists but cannot be read.
  private static func inspect(_ path: String) throws(ReaderError) -> Existing {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)  // O_NONBLOCK: never hang on a FIFO
    if fd == -1 {
      let code = errno
      if code == ENOENT { return .missing }
      throw unavailable("cannot open the saved reader", errno: code, path: path)
    }
    defer { _ = close(fd) }

    var info = stat()
    if fstat(fd, &info) != 0 {
      throw unavailable("cannot inspect the saved reader", errno: errno, path: path)
    }
    let kind = info.st_mode & mode_t(S_IFMT)
    guard kind == mode_t(S_IFREG) else {
      let what = kind == mode_t(S_IFDIR) ? "a directory" : "not a regular file"
      throw ReaderError(
        .storeUnavailable, "cannot read the saved reader: the path is \(what)",
        context: ["path": path, "reason": "the path is \(what)"])
    }
    if info.st_size > maximumFileSize {
      return .corrupt(tooLarge(size: Int(info.st_size), path: path))
    }

    // Read at most one byte more than the limit, in case the file grows under us.
    var buffer = [UInt8](repeating: 0, count: maximumFileSize + 1)
    var count = 0
    while count < buffer.count {
      let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
      if n == 0 { break }
      if n < 0 {
        let code = errno
        if code == EINTR { continue }
        throw unavailable("cannot read the saved reader", errno: code, path: path)
      }
      count += n
    }
    if count > maximumFileSize {
      return .corrupt(tooLarge(size: count, path: path))
    }
    switch Format.decode(buffer[..<count]) {
    case .success(let reader):
      return .record(reader)
    case .failure(let failure):
      var context = failure.context
      context["path"] = path
      return .corrupt(
        ReaderError(.storeCorrupt, "the saved reader is corrupt: \(failure.reason)", context: context))
    }
  }

  private static func tooLarge(size: Int, path: String) -> ReaderError {
    let reason = "the file is \(size) bytes, more than the limit of \(maximumFileSize)"
    return ReaderError(
      .storeCorrupt, "the saved reader is corrupt: \(reason)",
      context: ["path": path, "reason": reason, "size": "\(size)", "limit": "\(maximumFileSize)"])
  }
}

// MARK: - Writing

extension FileReaderStore {
  /// Runs one system call of a save or clear, or fails it as `fault` says. Returns the call's result;
  /// on failure (`-1`) `errno` is set.
  private func call(_ step: Step, _ body: () -> Int32) -> Int32 {
    if case .fail(step, let code) = fault {
      errno = code
      return -1
    }
    return body()
  }

  /// `mkdir -p` with mode 0700.
  private func createDirectories(_ path: String, for paths: Paths) throws(ReaderError) {
    if call(.createDirectory, { mkdir(path, 0o700) }) == 0 { return }
    var code = errno
    if code == ENOENT, let parent = Paths.parent(of: path) {
      try createDirectories(parent, for: paths)
      if call(.createDirectory, { mkdir(path, 0o700) }) == 0 { return }
      code = errno
    }
    if code == EEXIST {
      var info = stat()
      if stat(path, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) { return }
      code = ENOTDIR
    }
    throw unavailable(
      "cannot create the directory \(path)", errno: code, step: .createDirectory, path: paths.file)
  }

  /// Opens the record's directory, for `fsync`, holding an exclusive `flock` until it is closed;
  /// `nil` when the directory does not exist.
  private func openLockedDirectory(_ paths: Paths) throws(ReaderError) -> Int32? {
    let fd = call(.lockDirectory) { open(paths.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    if fd == -1 {
      let code = errno
      if code == ENOENT || code == ENOTDIR { return nil }
      throw unavailable("cannot open the directory", errno: code, step: .lockDirectory, path: paths.file)
    }
    while flock(fd, LOCK_EX) != 0 {
      let code = errno
      if code == EINTR { continue }
      _ = close(fd)
      throw unavailable("cannot lock the directory", errno: code, step: .lockDirectory, path: paths.file)
    }
    return fd
  }

  /// Best effort: removes temporary files left by saves that crashed. Runs under the lock, so no
  /// save in progress owns one.
  private func removeStaleTemporaryFiles(_ paths: Paths) {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: paths.directory) else { return }
    for name in names where name.hasPrefix(paths.temporaryPrefix) {
      _ = unlink(paths.sibling(name))
    }
  }

  /// Writes `bytes` to a new temporary file beside the record, flushed and closed; returns its path.
  /// On failure the temporary file is removed (except in a simulated crash).
  private func writeTemporaryFile(_ bytes: [UInt8], _ paths: Paths) throws(ReaderError) -> String {
    var temporary = ""
    var fd: Int32 = -1
    for _ in 0..<8 {
      let suffix = String(UInt64.random(in: .min ... .max), radix: 16)
      temporary = paths.sibling(paths.temporaryPrefix + suffix)
      fd = call(.createTemporaryFile) { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
      if fd != -1 || errno != EEXIST { break }
    }
    if fd == -1 {
      throw unavailable(
        "cannot create a temporary file", errno: errno, step: .createTemporaryFile, path: paths.file)
    }

    func fail(_ message: String, _ code: Int32, _ step: Step, closing: Bool = true) -> ReaderError {
      if closing { _ = close(fd) }
      _ = unlink(temporary)
      return unavailable(message, errno: code, step: step, path: paths.file)
    }

    var limit = bytes.count
    var writeFailure: Int32?
    switch fault {
    case .fail(.write, let code):
      limit = bytes.count / 2
      writeFailure = code
    case .crashDuringWrite:
      limit = bytes.count / 2
    default:
      break
    }
    var written = 0
    while written < limit {
      let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, limit - written) }
      if n < 0 {
        let code = errno
        if code == EINTR { continue }
        throw fail("cannot write the saved reader", code, .write)
      }
      written += n
    }
    if fault == .crashDuringWrite {
      _ = close(fd)
      throw ReaderError(
        .storeUnavailable, "simulated crash while writing the saved reader",
        context: ["path": paths.file, "reason": "simulated crash", "step": "\(Step.write)"])
    }
    if let writeFailure { throw fail("cannot write the saved reader", writeFailure, .write) }
    if call(.syncFile, { Self.sync(fd) }) != 0 {
      throw fail("cannot flush the saved reader", errno, .syncFile)
    }
    if call(.closeFile, { close(fd) }) != 0 {
      let code = errno
      // A real failed close still releases the descriptor; only an injected one leaves it open.
      var injected = false
      if case .fail(.closeFile, _) = fault { injected = true }
      throw fail("cannot close the saved reader", code, .closeFile, closing: injected)
    }
    return temporary
  }

  /// Keeps the record's current bytes as `<name>.corrupt-<n>`, with the lowest free `n`. A hard link
  /// leaves the record in place until the rename replaces it; where hard links are not supported the
  /// file is renamed aside instead.
  private func keepAside(_ paths: Paths) throws(ReaderError) {
    for n in 1...10_000 {
      let aside = "\(paths.file).corrupt-\(n)"
      if call(.linkAside, { link(paths.file, aside) }) == 0 { return }
      let code = errno
      if code == EEXIST { continue }
      guard [EPERM, ENOTSUP, EOPNOTSUPP, EMLINK, ENOSYS].contains(code) else {
        throw unavailable(
          "cannot keep the corrupt record aside", errno: code, step: .linkAside, path: paths.file)
      }
      var info = stat()
      if lstat(aside, &info) == 0 { continue }
      if call(.renameAside, { rename(paths.file, aside) }) == 0 { return }
      throw unavailable(
        "cannot keep the corrupt record aside", errno: errno, step: .renameAside, path: paths.file)
    }
    throw ReaderError(
      .storeUnavailable, "cannot keep the corrupt record aside: too many corrupt copies",
      context: ["path": paths.file, "reason": "too many corrupt copies", "step": "\(Step.linkAside)"])
  }

  /// Flushes the directory so a rename or removal survives a power loss. File systems that cannot
  /// flush directories (`EINVAL`, `ENOTSUP`) are accepted as they are.
  private func syncDirectory(_ fd: Int32, _ paths: Paths) throws(ReaderError) {
    if call(.syncDirectory, { Self.sync(fd) }) == 0 { return }
    let code = errno
    if code == EINVAL || code == ENOTSUP || code == EOPNOTSUPP { return }
    throw unavailable(
      "the directory could not be flushed; the change may not survive a power loss", errno: code,
      step: .syncDirectory, path: paths.file)
  }

  /// `fsync`, or on Apple platforms `F_FULLFSYNC`, which also flushes the drive's cache.
  private static func sync(_ fd: Int32) -> Int32 {
    #if canImport(Darwin)
      if fcntl(fd, F_FULLFSYNC) == 0 { return 0 }
    #endif
    return fsync(fd)
  }
}

// MARK: - Paths and errors

extension FileReaderStore {
  /// The file-system paths derived from `fileURL`.
  private struct Paths: Sendable, Hashable {
    /// The record file.
    var file: String
    /// Its directory.
    var directory: String
    /// Its last path component.
    var name: String

    /// `nil` when `url` does not name a file.
    init?(_ url: URL) {
      guard url.isFileURL,
        let path = url.withUnsafeFileSystemRepresentation({ $0.map { String(cString: $0) } }),
        path.hasPrefix("/"), !path.hasSuffix("/"),
        let slash = path.lastIndex(of: "/")
      else { return nil }
      let name = String(path[path.index(after: slash)...])
      guard name != ".", name != ".." else { return nil }
      file = path
      directory = slash == path.startIndex ? "/" : String(path[..<slash])
      self.name = name
    }

    /// The prefix of this record's temporary files.
    var temporaryPrefix: String { name + ".tmp-" }

    /// A file beside the record.
    func sibling(_ name: String) -> String {
      directory == "/" ? "/" + name : directory + "/" + name
    }

    /// The parent directory of an absolute path, or `nil` for `/`.
    static func parent(of path: String) -> String? {
      let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
      guard let slash = trimmed.lastIndex(of: "/"), !trimmed.isEmpty else { return nil }
      return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
  }

  private func usablePaths() throws(ReaderError) -> Paths {
    guard let paths else {
      throw ReaderError(
        .storeUnavailable, "the store's URL does not name a file: \(fileURL)",
        context: ["path": fileURL.absoluteString, "reason": "not a file URL naming a file"])
    }
    return paths
  }

  private func unavailable(_ message: String, errno code: Int32, step: Step, path: String) -> ReaderError {
    var error = Self.unavailable(message, errno: code, path: path)
    error.context["step"] = "\(step)"
    return error
  }

  private static func unavailable(_ message: String, errno code: Int32, path: String) -> ReaderError {
    let reason = String(cString: strerror(code))
    return ReaderError(
      .storeUnavailable, "\(message): \(reason)", context: ["path": path, "reason": reason, "errno": "\(code)"])
  }

  /// `$HOME` when it is absolute, else the password database's home directory, else Foundation's.
  private static func homeDirectory(_ environment: [String: String]) -> String {
    if let home = environment["HOME"], home.hasPrefix("/") { return home }
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    let size = 16 * 1024
    var buffer = [CChar](repeating: 0, count: size)
    let status = getpwuid_r(getuid(), &entry, &buffer, size, &result)
    if status == 0, let directory = result?.pointee.pw_dir {
      let home = String(cString: directory)
      if home.hasPrefix("/") { return home }
    }
    return NSHomeDirectory()  // available on every platform, unlike homeDirectoryForCurrentUser
  }
}

// MARK: - Record format

extension FileReaderStore {
  /// The record's JSON encoding, version 1. `UserDefaultsReaderStore` stores the same bytes.
  enum Format {
    /// The record version this build writes and reads.
    static let version = 1

    /// Read first, to tell an unknown version from a corrupt record. `Double`, so a fractional version
    /// is reported against its field on every platform (Linux's `JSONDecoder` reports a fraction
    /// decoded as `Int` as invalid JSON).
    private struct Envelope: Decodable {
      var version: Double
    }

    private struct RecordV1: Codable {
      var version: Int
      var serialNumber: String
      var locationId: String
      var deviceType: String?
      /// Written only for simulated readers, so a real reader's record reads as before.
      var simulated: Bool?
    }

    /// Why bytes are not a valid record.
    struct Failure: Error, Hashable {
      /// A sentence for people.
      var reason: String
      /// `reason` plus `offset`, `field` or `version` where known.
      var context: [String: String]
    }

    /// The record as JSON with sorted keys and a final newline.
    static func encode(_ reader: SavedReader, path: String) throws(ReaderError) -> [UInt8] {
      let record = RecordV1(
        version: version, serialNumber: reader.serialNumber, locationId: reader.locationId,
        deviceType: reader.deviceType?.rawValue, simulated: reader.simulated ? true : nil)
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      do {
        return Array(try encoder.encode(record)) + [UInt8(ascii: "\n")]
      } catch {
        throw ReaderError(
          .storeUnavailable, "cannot encode the reader: \(error)", context: ["path": path, "reason": "\(error)"])
      }
    }

    /// Decodes a record, or says precisely why the bytes are not one.
    static func decode(_ bytes: some Collection<UInt8>) -> Result<SavedReader, Failure> {
      let data = Data(bytes)
      if data.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
        let reason = data.isEmpty ? "the record is empty" : "the record holds only white space"
        return .failure(Failure(reason: reason, context: ["reason": reason, "offset": "\(data.count)"]))
      }
      let decoder = JSONDecoder()
      let envelope: Envelope
      do {
        envelope = try decoder.decode(Envelope.self, from: data)
      } catch {
        return .failure(failure(error, data))
      }
      guard let found = Int(exactly: envelope.version) else {
        let reason = "the field version is not an integer"
        return .failure(Failure(reason: reason, context: ["reason": reason, "field": "version"]))
      }
      guard found == version else {
        let reason =
          found > version
          ? "record version \(found) was written by a newer ReaderKit; this one reads version \(version)"
          : "record version \(found) is invalid"
        return .failure(
          Failure(reason: reason, context: ["reason": reason, "field": "version", "version": "\(found)"]))
      }
      let record: RecordV1
      do {
        record = try decoder.decode(RecordV1.self, from: data)
      } catch {
        return .failure(failure(error, data))
      }
      // The same rule as a connection's location id: a record that could never be reconnected is corrupt.
      for (field, value) in [("serialNumber", record.serialNumber), ("locationId", record.locationId)]
      where value.allSatisfy(\.isWhitespace) {
        let reason = "the field \(field) is \(value.isEmpty ? "empty" : "blank")"
        return .failure(Failure(reason: reason, context: ["reason": reason, "field": field]))
      }
      var deviceType: DeviceType?
      if let name = record.deviceType {
        guard let known = DeviceType(rawValue: name) else {
          let reason = "the field deviceType names no known reader model"
          return .failure(
            Failure(reason: reason, context: ["reason": reason, "field": "deviceType", "value": name]))
        }
        deviceType = known
      }
      return .success(
        SavedReader(
          serialNumber: record.serialNumber, locationId: record.locationId, deviceType: deviceType,
          simulated: record.simulated ?? false))
    }

    /// What a field of `type` holds, in JSON's words rather than Swift's.
    private static func jsonKind(of type: Any.Type) -> String {
      switch type {
      case is String.Type: "a string"
      case is Bool.Type: "true or false"
      case is Int.Type, is Double.Type: "a number"
      default: "of the expected JSON type"
      }
    }

    private static func failure(_ error: any Error, _ data: Data) -> Failure {
      func make(_ reason: String, _ extra: [String: String] = [:]) -> Failure {
        Failure(reason: reason, context: extra.merging(["reason": reason]) { $1 })
      }
      guard let error = error as? DecodingError else { return make("cannot decode: \(error)") }
      switch error {
      case .dataCorrupted(let context) where context.codingPath.isEmpty:
        guard let offset = JSONSyntax.firstErrorOffset(in: Array(data)) else {
          return make("the record could not be decoded (invalid UTF-8, a number out of range, or nested too deeply)")
        }
        return make("the record is not valid JSON (error at byte \(offset))", ["offset": "\(offset)"])
      case .typeMismatch(_, let context) where context.codingPath.isEmpty,
        .valueNotFound(_, let context) where context.codingPath.isEmpty:
        return make("the record is not a JSON object")
      case .keyNotFound(let key, let context):
        let field = (context.codingPath + [key]).map(\.stringValue).joined(separator: ".")
        return make("the field \(field) is missing", ["field": field])
      case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
        let field = context.codingPath.map(\.stringValue).joined(separator: ".")
        return make("the field \(field) is not \(jsonKind(of: type))", ["field": field])
      case .dataCorrupted(let context):
        let field = context.codingPath.map(\.stringValue).joined(separator: ".")
        return make("the field \(field) is invalid", ["field": field])
      @unknown default:
        return make("cannot decode: \(error)")
      }
    }
  }

  /// A JSON syntax checker (RFC 8259) that finds the byte offset of the first error, used only to
  /// explain why `JSONDecoder` rejected a record.
  struct JSONSyntax {
    private let bytes: [UInt8]
    private var index = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The byte offset of the first syntax error, or `nil` when `bytes` are one JSON value (nested at
    /// most 512 deep) with only white space around it.
    static func firstErrorOffset(in bytes: [UInt8]) -> Int? {
      var scanner = JSONSyntax(bytes)
      scanner.skipWhiteSpace()
      guard scanner.value(depth: 0) else { return scanner.index }
      scanner.skipWhiteSpace()
      return scanner.index == bytes.count ? nil : scanner.index
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhiteSpace() {
      while let byte = current, [0x20, 0x09, 0x0A, 0x0D].contains(byte) { index += 1 }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
      guard current == byte else { return false }
      index += 1
      return true
    }

    /// Scans one value; on `false`, `index` is the offset of the error.
    private mutating func value(depth: Int) -> Bool {
      guard let byte = current else { return false }
      switch byte {
      case UInt8(ascii: "{"): return container(close: UInt8(ascii: "}"), depth: depth, keyed: true)
      case UInt8(ascii: "["): return container(close: UInt8(ascii: "]"), depth: depth, keyed: false)
      case UInt8(ascii: "\""): return string()
      case UInt8(ascii: "t"): return literal("true")
      case UInt8(ascii: "f"): return literal("false")
      case UInt8(ascii: "n"): return literal("null")
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
      default: return false
      }
    }

    private mutating func container(close: UInt8, depth: Int, keyed: Bool) -> Bool {
      guard depth < 512 else { return false }
      index += 1
      skipWhiteSpace()
      if consume(close) { return true }
      while true {
        skipWhiteSpace()
        if keyed {
          guard current == UInt8(ascii: "\""), string() else { return false }
          skipWhiteSpace()
          guard consume(UInt8(ascii: ":")) else { return false }
          skipWhiteSpace()
        }
        guard value(depth: depth + 1) else { return false }
        skipWhiteSpace()
        if consume(close) { return true }
        guard consume(UInt8(ascii: ",")) else { return false }
      }
    }

    private mutating func string() -> Bool {
      index += 1
      while let byte = current {
        switch byte {
        case UInt8(ascii: "\""):
          index += 1
          return true
        case UInt8(ascii: "\\"):
          index += 1
          guard let escaped = current else { return false }
          if escaped == UInt8(ascii: "u") {
            for _ in 0..<4 {
              index += 1
              guard let hex = current, hex.isHexDigit else { return false }
            }
          } else if !Array("\"\\/bfnrt".utf8).contains(escaped) {
            return false
          }
          index += 1
        case 0..<0x20:
          return false
        default:
          index += 1
        }
      }
      return false
    }

    private mutating func number() -> Bool {
      _ = consume(UInt8(ascii: "-"))
      if !consume(UInt8(ascii: "0")) {
        guard digits() else { return false }
      }
      if consume(UInt8(ascii: ".")) {
        guard digits() else { return false }
      }
      if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
        if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
        guard digits() else { return false }
      }
      return true
    }

    /// One or more decimal digits.
    private mutating func digits() -> Bool {
      let start = index
      while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
      return index > start
    }

    private mutating func literal(_ word: StaticString) -> Bool {
      for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
        guard consume(expected) else { return false }
      }
      return true
    }
  }
}

extension UInt8 {
  fileprivate var isHexDigit: Bool {
    (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
  }
}
