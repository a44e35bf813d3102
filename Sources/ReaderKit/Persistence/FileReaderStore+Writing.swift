import Foundation
import ReaderCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// MARK: - Writing

extension FileReaderStore {
  /// Runs `call` again for as long as it fails with `EINTR`.
  func retryingInterrupts<T>(_ call: () throws(Errno) -> T) throws(Errno) -> T {
    while true {
      do {
        return try call()
      } catch  where error.code == EINTR {
        continue
      }
    }
  }

  /// `mkdir -p` with mode 0700. Each directory created is flushed into its parent, so that the
  /// record saved inside it survives a power loss.
  func createDirectories(_ path: String, for paths: Paths) throws(ReaderError) {
    var failure = makeDirectory(path)
    if failure == ENOENT, let parent = Paths.parent(of: path) {
      try createDirectories(parent, for: paths)
      failure = makeDirectory(path)
    }
    guard var code = failure else { return try syncParent(of: path, for: paths) }
    if code == EEXIST {
      do {
        let info = try retryingInterrupts { () throws(Errno) in try fileSystem.info(atPath: path, followingLinks: true)
        }
        if info.kind == .directory { return }
        code = ENOTDIR
      } catch {
        code = error.code
      }
    }
    throw unavailable("cannot create the directory \(path)", errno: code, step: .createDirectory, path: paths.file)
  }

  /// `mkdir(2)` with mode 0700; the `errno` when it fails.
  private func makeDirectory(_ path: String) -> Int32? {
    do {
      try retryingInterrupts { () throws(Errno) in try fileSystem.makeDirectory(path, permissions: 0o700) }
      return nil
    } catch {
      return error.code
    }
  }

  /// Flushes the parent directory of a directory just created.
  private func syncParent(of path: String, for paths: Paths) throws(ReaderError) {
    guard let parent = Paths.parent(of: path) else { return }
    let descriptor: Int32
    do {
      descriptor = try retryingInterrupts { () throws(Errno) in try fileSystem.open(parent, .directory) }
    } catch {
      throw unavailable(
        "cannot open the directory \(parent)", errno: error.code, step: .createDirectory, path: paths.file)
    }
    defer { try? fileSystem.close(descriptor) }
    do {
      try retryingInterrupts { () throws(Errno) in try fileSystem.sync(descriptor) }
    } catch  where ![EINVAL, ENOTSUP, EOPNOTSUPP].contains(error.code) {
      throw unavailable(
        "cannot flush the directory \(parent)", errno: error.code, step: .createDirectory, path: paths.file)
    } catch {}
  }

  /// Opens the record's directory, for `fsync`, holding an exclusive `flock` until it is closed;
  /// `nil` when the directory does not exist.
  func openLockedDirectory(_ paths: Paths) throws(ReaderError) -> Int32? {
    let descriptor: Int32
    do {
      descriptor = try retryingInterrupts { () throws(Errno) in try fileSystem.open(paths.directory, .directory) }
    } catch {
      if error.code == ENOENT || error.code == ENOTDIR { return nil }
      throw unavailable("cannot open the directory", errno: error.code, step: .lockDirectory, path: paths.file)
    }
    do {
      try retryingInterrupts { () throws(Errno) in try fileSystem.lockExclusively(descriptor) }
    } catch {
      try? fileSystem.close(descriptor)
      throw unavailable("cannot lock the directory", errno: error.code, step: .lockDirectory, path: paths.file)
    }
    return descriptor
  }

  /// Best effort: removes temporary files left by saves that crashed. Runs under the lock, so no
  /// save in progress owns one.
  func removeStaleTemporaryFiles(_ paths: Paths) {
    guard
      let names = try? retryingInterrupts({ () throws(Errno) in try fileSystem.contentsOfDirectory(paths.directory) })
    else { return }
    for name in names where name.hasPrefix(paths.temporaryPrefix) {
      try? retryingInterrupts { () throws(Errno) in try fileSystem.unlink(paths.sibling(name)) }
    }
  }

  /// Writes `bytes` to a new temporary file beside the record, flushed and closed; returns its path.
  /// On failure the temporary file is removed.
  func writeTemporaryFile(_ bytes: [UInt8], _ paths: Paths) throws(ReaderError) -> String {
    var temporary = ""
    var descriptor: Int32 = -1
    var failure = Errno(EEXIST)
    for _ in 0..<8 {
      let suffix = String(UInt64.random(in: .min ... .max), radix: 16)
      temporary = paths.sibling(paths.temporaryPrefix + suffix)
      do {
        descriptor = try retryingInterrupts { () throws(Errno) in
          try fileSystem.open(temporary, .createExclusive(permissions: 0o600))
        }
        break
      } catch {
        failure = error
        if error.code != EEXIST { break }
      }
    }
    if descriptor == -1 {
      throw unavailable(
        "cannot create a temporary file", errno: failure.code, step: .createTemporaryFile, path: paths.file)
    }

    func fail(_ message: String, _ error: Errno, _ step: Step, closing: Bool = true) -> ReaderError {
      if closing { try? fileSystem.close(descriptor) }
      try? retryingInterrupts { () throws(Errno) in try fileSystem.unlink(temporary) }
      return unavailable(message, errno: error.code, step: step, path: paths.file)
    }

    var written = 0
    while written < bytes.count {
      do throws(Errno) {
        let n = try fileSystem.write(descriptor, bytes, from: written)
        // A write that takes nothing would loop for ever; the disk is full in all but name.
        if n <= 0 { throw Errno(ENOSPC) }
        written += n
      } catch {
        if error.code == EINTR { continue }
        throw fail("cannot write the saved reader", error, .write)
      }
    }
    do {
      try retryingInterrupts { () throws(Errno) in try fileSystem.sync(descriptor) }
    } catch {
      throw fail("cannot flush the saved reader", error, .syncFile)
    }
    do {
      try fileSystem.close(descriptor)
    } catch  where error.code != EINTR {
      // A failed close still releases the descriptor, so close(2) is never retried; after EINTR the
      // data is already flushed and the descriptor released (Linux), so the save goes on.
      throw fail("cannot close the saved reader", error, .closeFile, closing: false)
    } catch {}
    return temporary
  }

  /// Keeps the record's current bytes as `<name>.corrupt-<n>`, with the lowest free `n`. A hard link
  /// leaves the record in place until the rename replaces it; where hard links are not supported the
  /// file is renamed aside instead.
  func keepAside(_ paths: Paths) throws(ReaderError) {
    for n in 1...10_000 {
      let aside = "\(paths.file).corrupt-\(n)"
      let code: Int32
      do {
        try retryingInterrupts { () throws(Errno) in try fileSystem.link(paths.file, to: aside) }
        return
      } catch {
        code = error.code
      }
      if code == EEXIST { continue }
      guard [EPERM, ENOTSUP, EOPNOTSUPP, EMLINK, ENOSYS].contains(code) else {
        throw unavailable(
          "cannot keep the corrupt record aside", errno: code, step: .linkAside, path: paths.file)
      }
      if (try? retryingInterrupts({ () throws(Errno) in try fileSystem.info(atPath: aside, followingLinks: false) }))
        != nil
      {
        continue
      }
      do {
        try retryingInterrupts { () throws(Errno) in try fileSystem.rename(paths.file, to: aside) }
        return
      } catch {
        throw unavailable(
          "cannot keep the corrupt record aside", errno: error.code, step: .renameAside, path: paths.file)
      }
    }
    throw ReaderError(
      .storeUnavailable, "cannot keep the corrupt record aside: too many corrupt copies",
      context: ["path": paths.file, "reason": "too many corrupt copies", "step": "\(Step.linkAside)"])
  }

  /// Flushes the directory so a rename or removal survives a power loss. File systems that cannot
  /// flush directories (`EINVAL`, `ENOTSUP`) are accepted as they are.
  func syncDirectory(_ descriptor: Int32, _ paths: Paths) throws(ReaderError) {
    do {
      try retryingInterrupts { () throws(Errno) in try fileSystem.sync(descriptor) }
    } catch {
      let code = error.code
      if code == EINVAL || code == ENOTSUP || code == EOPNOTSUPP { return }
      throw unavailable(
        "the directory could not be flushed; the change may not survive a power loss", errno: code,
        step: .syncDirectory, path: paths.file)
    }
  }
}

// MARK: - Paths and errors

extension FileReaderStore {
  /// The file-system paths derived from `fileURL`.
  struct Paths: Sendable, Hashable {
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

  func usablePaths() throws(ReaderError) -> Paths {
    guard let paths else {
      throw ReaderError(
        .storeUnavailable, "the store's URL does not name a file: \(fileURL)",
        context: ["path": fileURL.absoluteString, "reason": "not a file URL naming a file"])
    }
    return paths
  }

  func unavailable(_ message: String, errno code: Int32, step: Step, path: String) -> ReaderError {
    var error = Self.unavailable(message, errno: code, path: path)
    error.context["step"] = "\(step)"
    return error
  }

  static func unavailable(_ message: String, errno code: Int32, path: String) -> ReaderError {
    let reason = String(cString: strerror(code))
    return ReaderError(
      .storeUnavailable, "\(message): \(reason)", context: ["path": path, "reason": reason, "errno": "\(code)"],
      cause: .errno(code))
  }

  /// `$HOME` when it is absolute, else the password database's home directory, else Foundation's.
  static func homeDirectory(_ environment: [String: String]) -> String {
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
