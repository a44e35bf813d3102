import ReaderKit

@testable import ReaderKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One system call the store made, with what it named: what fault-injecting file systems match on.
enum FileSystemCall: Sendable, Hashable, CustomStringConvertible {
  case open(String, OpenMode)
  case close(String)
  case read(String)
  case write(String)
  /// `sync` of a file (`isDirectory` false) or a directory.
  case sync(String, isDirectory: Bool)
  case info(String)
  case makeDirectory(String)
  case rename(String, String)
  case link(String, String)
  case unlink(String)
  case lock(String)
  case list(String)

  var description: String {
    switch self {
    case .open(let path, let mode): "open(\(path), \(mode))"
    case .close(let path): "close(\(path))"
    case .read(let path): "read(\(path))"
    case .write(let path): "write(\(path))"
    case .sync(let path, _): "sync(\(path))"
    case .info(let path): "info(\(path))"
    case .makeDirectory(let path): "mkdir(\(path))"
    case .rename(let from, let to): "rename(\(from), \(to))"
    case .link(let from, let to): "link(\(from), \(to))"
    case .unlink(let path): "unlink(\(path))"
    case .lock(let path): "lock(\(path))"
    case .list(let path): "list(\(path))"
    }
  }

  /// Whether this is the call the store names `step` in its errors.
  func isStep(_ step: FileReaderStore.Step) -> Bool {
    switch (step, self) {
    case (.createDirectory, .makeDirectory): true
    case (.lockDirectory, .open(_, .directory)): true
    case (.createTemporaryFile, .open(let path, .createExclusive)): path.contains(".tmp-") && !path.contains("probe")
    case (.write, .write): true
    case (.syncFile, .sync(_, isDirectory: false)): true
    case (.closeFile, .close(let path)): path.contains(".tmp-")
    case (.linkAside, .link): true
    case (.renameAside, .rename(_, let to)): to.contains(".corrupt-")
    case (.rename, .rename(let from, _)): from.contains(".tmp-")
    case (.remove, .unlink(let path)): !path.contains(".tmp-")
    case (.syncDirectory, .sync(_, isDirectory: true)): true
    default: false
    }
  }
}
