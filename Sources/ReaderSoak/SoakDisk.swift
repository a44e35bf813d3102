import ReaderCore
import ReaderKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The phone's disk in a soak: an in-memory POSIX file system that knows what is durable.
///
/// A file's bytes survive a power loss only once the file was synced, a name (created, renamed, linked
/// or removed) only once its directory was synced; `powerLoss()` drops everything else. A process that
/// dies (the app is killed) leaves the kernel's view as it is. Apps reach it through a
/// `SoakProcessFileSystem`, which stops at the app's death; checks read it directly.
final class SoakDisk: FileSystem, @unchecked Sendable {
  private struct Inode {
    var isDirectory: Bool
    var data: [UInt8] = []
    var durableData: [UInt8] = []
  }

  private struct State {
    var inodes: [Int: Inode] = [0: Inode(isDirectory: true)]
    var nextInode = 1
    /// Path to inode, as the running system sees it; the root is not listed.
    var names: [String: Int] = [:]
    /// Path to inode, as a power loss would leave it.
    var durableNames: [String: Int] = [:]
    var descriptors: [Int32: (inode: Int, path: String, position: Int)] = [:]
    var nextDescriptor: Int32 = 3
    /// Bumped by every call that changes something.
    var version = 0
  }

  private let state = Locked(State())

  /// A number that changes whenever the disk's contents or names change.
  var version: Int { state.withLock { $0.version } }

  /// The power goes: only what was synced is left, and every descriptor is gone.
  func powerLoss() {
    state.withLock { state in
      state.names = state.durableNames
      for (number, inode) in state.inodes { state.inodes[number]?.data = inode.durableData }
      state.descriptors = [:]
      state.version += 1
    }
  }

  /// A process died: its descriptors are released (every descriptor belongs to the one app).
  func releaseDescriptors() {
    state.withLock { $0.descriptors = [:] }
  }

  // MARK: FileSystem

  func open(_ path: String, _ mode: OpenMode) throws(Errno) -> Int32 {
    try state.withLock { (state) throws(Errno) -> Int32 in
      let inode: Int
      switch mode {
      case .readOnly:
        guard let found = Self.lookup(path, in: state) else { throw Errno(ENOENT) }
        inode = found
      case .directory:
        guard let found = Self.lookup(path, in: state) else { throw Errno(ENOENT) }
        guard state.inodes[found]?.isDirectory == true else { throw Errno(ENOTDIR) }
        inode = found
      case .createExclusive:
        try Self.requireDirectory(Self.parent(of: path), in: state)
        guard Self.lookup(path, in: state) == nil else { throw Errno(EEXIST) }
        inode = state.nextInode
        state.nextInode += 1
        state.inodes[inode] = Inode(isDirectory: false)
        state.names[path] = inode
        state.version += 1
      }
      let descriptor = state.nextDescriptor
      state.nextDescriptor += 1
      state.descriptors[descriptor] = (inode, path, 0)
      return descriptor
    }
  }

  func close(_ descriptor: Int32) throws(Errno) {
    try state.withLock { (state) throws(Errno) in
      guard state.descriptors.removeValue(forKey: descriptor) != nil else { throw Errno(EBADF) }
    }
  }

  func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
    try state.withLock { (state) throws(Errno) -> Int in
      guard let open = state.descriptors[descriptor], let inode = state.inodes[open.inode] else { throw Errno(EBADF) }
      if inode.isDirectory { throw Errno(EISDIR) }
      let count = min(buffer.count, max(0, inode.data.count - open.position))
      for index in 0..<count { buffer[index] = inode.data[open.position + index] }
      state.descriptors[descriptor]?.position += count
      return count
    }
  }

  func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
    try state.withLock { (state) throws(Errno) -> Int in
      guard let open = state.descriptors[descriptor], var data = state.inodes[open.inode]?.data else {
        throw Errno(EBADF)
      }
      if data.count < open.position { data += [UInt8](repeating: 0, count: open.position - data.count) }
      let end = min(data.count, open.position + buffer.count)
      data.replaceSubrange(open.position..<end, with: buffer)
      state.inodes[open.inode]?.data = data
      state.descriptors[descriptor]?.position += buffer.count
      state.version += 1
      return buffer.count
    }
  }

  func sync(_ descriptor: Int32) throws(Errno) {
    try state.withLock { (state) throws(Errno) in
      guard let open = state.descriptors[descriptor], let inode = state.inodes[open.inode] else { throw Errno(EBADF) }
      state.inodes[open.inode]?.durableData = inode.data
      guard inode.isDirectory else { return }
      // A directory's sync makes its entries durable: the names directly under it, as they are now.
      let prefix = open.path == "/" ? "/" : open.path + "/"
      let isChild = { (path: String) in path.hasPrefix(prefix) && !path.dropFirst(prefix.count).contains("/") }
      state.durableNames = state.durableNames.filter { !isChild($0.key) }
      for (path, number) in state.names where isChild(path) { state.durableNames[path] = number }
    }
  }

  func info(_ descriptor: Int32) throws(Errno) -> FileInfo {
    try state.withLock { (state) throws(Errno) -> FileInfo in
      guard let open = state.descriptors[descriptor], let inode = state.inodes[open.inode] else { throw Errno(EBADF) }
      return FileInfo(kind: inode.isDirectory ? .directory : .regular, size: inode.data.count)
    }
  }

  func info(atPath path: String, followingLinks: Bool) throws(Errno) -> FileInfo {
    try state.withLock { (state) throws(Errno) -> FileInfo in
      guard let number = Self.lookup(path, in: state), let inode = state.inodes[number] else { throw Errno(ENOENT) }
      return FileInfo(kind: inode.isDirectory ? .directory : .regular, size: inode.data.count)
    }
  }

  func makeDirectory(_ path: String, permissions: mode_t) throws(Errno) {
    try state.withLock { (state) throws(Errno) in
      try Self.requireDirectory(Self.parent(of: path), in: state)
      guard Self.lookup(path, in: state) == nil else { throw Errno(EEXIST) }
      state.inodes[state.nextInode] = Inode(isDirectory: true)
      state.names[path] = state.nextInode
      state.nextInode += 1
      state.version += 1
    }
  }

  func rename(_ source: String, to destination: String) throws(Errno) {
    try state.withLock { (state) throws(Errno) in
      guard let number = state.names[source] else { throw Errno(ENOENT) }
      try Self.requireDirectory(Self.parent(of: destination), in: state)
      if let existing = state.names[destination], state.inodes[existing]?.isDirectory == true { throw Errno(EISDIR) }
      state.names[source] = nil
      state.names[destination] = number
      state.version += 1
    }
  }

  func link(_ source: String, to destination: String) throws(Errno) {
    try state.withLock { (state) throws(Errno) in
      guard let number = state.names[source] else { throw Errno(ENOENT) }
      try Self.requireDirectory(Self.parent(of: destination), in: state)
      guard state.names[destination] == nil else { throw Errno(EEXIST) }
      state.names[destination] = number
      state.version += 1
    }
  }

  func unlink(_ path: String) throws(Errno) {
    try state.withLock { (state) throws(Errno) in
      guard let number = state.names[path] else { throw Errno(ENOENT) }
      if state.inodes[number]?.isDirectory == true { throw Errno(EISDIR) }
      state.names[path] = nil
      state.version += 1
    }
  }

  func lockExclusively(_ descriptor: Int32) throws(Errno) {
    try state.withLock { (state) throws(Errno) in
      guard state.descriptors[descriptor] != nil else { throw Errno(EBADF) }
    }
  }

  func contentsOfDirectory(_ path: String) throws(Errno) -> [String] {
    try state.withLock { (state) throws(Errno) -> [String] in
      try Self.requireDirectory(path, in: state)
      let prefix = path == "/" ? "/" : path + "/"
      return state.names.keys.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") }
        .map { String($0.dropFirst(prefix.count)) }.sorted()
    }
  }

  // MARK: Paths

  private static func lookup(_ path: String, in state: State) -> Int? {
    path == "/" ? 0 : state.names[path]
  }

  private static func parent(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
    return String(path[..<slash])
  }

  private static func requireDirectory(_ path: String, in state: State) throws(Errno) {
    guard let number = lookup(path, in: state) else { throw Errno(ENOENT) }
    guard state.inodes[number]?.isDirectory == true else { throw Errno(ENOTDIR) }
  }
}
