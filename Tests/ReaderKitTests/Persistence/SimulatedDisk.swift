import ReaderCore

@testable import ReaderKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An in-memory POSIX file system that knows what is durable: a file's bytes survive a power loss only
/// once the file was synced, a name (a created, renamed, linked or removed entry) only once its
/// directory was synced. `powerCycle()` drops everything else, as the strictest disk may.
///
/// Faults, each counted in system calls from the disk's creation or the last `resetCounter()`:
/// - `cutPower(afterCalls:)`: the machine loses power once that many calls have run; every later
///   call fails with `EIO` without effect, until `powerCycle()`.
/// - `failCall(_:errno:)`: call number `n` (from 1) fails with `errno`, without effect.
/// - `interruptEveryCall`: every call first fails once with `EINTR`, without effect.
/// - `maximumWrite`: a write stores at most that many bytes (short writes).
final class SimulatedDisk: FileSystem, @unchecked Sendable {
  private struct Inode {
    var isDirectory: Bool
    var data: [UInt8] = []
    var durableData: [UInt8] = []
    var entries: [String: Int] = [:]
    var durableEntries: [String: Int] = [:]
  }

  private struct Open {
    var inode: Int
    var position = 0
  }

  private struct State {
    var inodes: [Int: Inode] = [0: Inode(isDirectory: true)]
    var nextInode = 1
    var descriptors: [Int32: Open] = [:]
    var nextDescriptor: Int32 = 3
    var calls = 0
    var powerCutAfter: Int?
    var failing: (call: Int, errno: Int32)?
    var interruptEveryCall = false
    var interrupted = false
    var maximumWrite = Int.max
    var failedCall: String?
  }

  private let state = Locked(State())

  init() {}

  // MARK: Faults

  func cutPower(afterCalls count: Int) { state.withLock { $0.powerCutAfter = $0.calls + count } }
  func failCall(_ number: Int, errno: Int32) { state.withLock { $0.failing = ($0.calls + number, errno) } }
  func resetCounter() { state.withLock { $0.calls = 0 } }
  var interruptEveryCall: Bool {
    get { state.withLock { $0.interruptEveryCall } }
    set { state.withLock { $0.interruptEveryCall = newValue } }
  }
  var maximumWrite: Int {
    get { state.withLock { $0.maximumWrite } }
    set { state.withLock { $0.maximumWrite = newValue } }
  }
  /// The calls made since the counter was last reset.
  var callCount: Int { state.withLock { $0.calls } }
  var isPoweredOff: Bool { state.withLock { s in s.powerCutAfter.map { s.calls >= $0 } ?? false } }

  /// Power comes back: only what was synced is left, every descriptor is gone and faults are cleared.
  func powerCycle() {
    state.withLock { state in
      for (number, inode) in state.inodes {
        state.inodes[number]!.data = inode.durableData
        state.inodes[number]!.entries = inode.durableEntries
      }
      state.descriptors = [:]
      state.powerCutAfter = nil
      state.failing = nil
    }
  }

  /// Makes everything durable, as a clean shutdown would.
  func syncEverything() {
    state.withLock { state in
      for (number, inode) in state.inodes {
        state.inodes[number]!.durableData = inode.data
        state.inodes[number]!.durableEntries = inode.entries
      }
    }
  }

  /// The process died: its descriptors are released; the kernel's view of the disk stays.
  func processDied() {
    state.withLock {
      $0.descriptors = [:]; $0.powerCutAfter = nil; $0.failing = nil
    }
  }

  // MARK: Inspection

  /// The bytes of the file at `path`, as the running system sees them.
  func contents(_ path: String) -> [UInt8]? {
    state.withLock { state in
      guard let inode = Self.resolve(path, in: state), !state.inodes[inode]!.isDirectory else { return nil }
      return state.inodes[inode]!.data
    }
  }

  /// Writes a file outright and makes it durable (setting up a disk for a test).
  func place(_ bytes: [UInt8], at path: String) {
    state.withLock { state in
      let (parent, name) = Self.split(path)
      var directory = 0
      for component in parent.split(separator: "/").map(String.init) {
        if let next = state.inodes[directory]!.entries[component] {
          directory = next
        } else {
          let number = state.nextInode
          state.nextInode += 1
          state.inodes[number] = Inode(isDirectory: true)
          state.inodes[directory]!.entries[component] = number
          directory = number
        }
      }
      let number = state.inodes[directory]!.entries[name] ?? state.nextInode
      if number == state.nextInode { state.nextInode += 1 }
      state.inodes[number] = Inode(isDirectory: false, data: bytes)
      state.inodes[directory]!.entries[name] = number
    }
    syncEverything()
  }

  // MARK: FileSystem

  private func perform<T>(_ name: StaticString = #function, _ body: (inout State) throws(Errno) -> T) throws(Errno) -> T
  {
    try state.withLock { (state) throws(Errno) -> T in
      if let cut = state.powerCutAfter, state.calls >= cut { throw Errno(EIO) }
      if state.interruptEveryCall && !state.interrupted {
        state.interrupted = true
        throw Errno(EINTR)
      }
      state.interrupted = false
      state.calls += 1
      if let failing = state.failing, failing.call == state.calls {
        state.failedCall = "\(name)"
        throw Errno(failing.errno)
      }
      return try body(&state)
    }
  }

  /// The call `failCall(_:errno:)` failed, once it has.
  var failedCall: String? { state.withLock { $0.failedCall } }

  func open(_ path: String, _ mode: OpenMode) throws(Errno) -> Int32 {
    try perform { (state) throws(Errno) in
      let inode: Int
      switch mode {
      case .readOnly:
        guard let found = Self.resolve(path, in: state) else { throw Errno(ENOENT) }
        inode = found
      case .directory:
        guard let found = Self.resolve(path, in: state) else { throw Errno(ENOENT) }
        guard state.inodes[found]!.isDirectory else { throw Errno(ENOTDIR) }
        inode = found
      case .createExclusive:
        let (parentPath, name) = Self.split(path)
        guard let parent = Self.resolve(parentPath, in: state) else { throw Errno(ENOENT) }
        guard state.inodes[parent]!.isDirectory else { throw Errno(ENOTDIR) }
        guard state.inodes[parent]!.entries[name] == nil else { throw Errno(EEXIST) }
        inode = state.nextInode
        state.nextInode += 1
        state.inodes[inode] = Inode(isDirectory: false)
        state.inodes[parent]!.entries[name] = inode
      }
      let descriptor = state.nextDescriptor
      state.nextDescriptor += 1
      state.descriptors[descriptor] = Open(inode: inode)
      return descriptor
    }
  }

  func close(_ descriptor: Int32) throws(Errno) {
    // A dead machine's descriptors are gone anyway.
    state.withLock { _ = $0.descriptors.removeValue(forKey: descriptor) }
    try perform { _ in }
  }

  func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
    try perform { (state) throws(Errno) in
      guard let open = state.descriptors[descriptor] else { throw Errno(EBADF) }
      let inode = state.inodes[open.inode]!
      if inode.isDirectory { throw Errno(EISDIR) }
      let count = min(buffer.count, max(0, inode.data.count - open.position))
      for index in 0..<count { buffer[index] = inode.data[open.position + index] }
      state.descriptors[descriptor]!.position += count
      return count
    }
  }

  func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
    try perform { (state) throws(Errno) in
      guard let open = state.descriptors[descriptor] else { throw Errno(EBADF) }
      let count = min(buffer.count, state.maximumWrite)
      var data = state.inodes[open.inode]!.data
      if data.count < open.position { data += [UInt8](repeating: 0, count: open.position - data.count) }
      data.replaceSubrange(open.position..<min(data.count, open.position + count), with: buffer[..<count])
      state.inodes[open.inode]!.data = data
      state.descriptors[descriptor]!.position += count
      return count
    }
  }

  func sync(_ descriptor: Int32) throws(Errno) {
    try perform { (state) throws(Errno) in
      guard let open = state.descriptors[descriptor] else { throw Errno(EBADF) }
      state.inodes[open.inode]!.durableData = state.inodes[open.inode]!.data
      state.inodes[open.inode]!.durableEntries = state.inodes[open.inode]!.entries
    }
  }

  func info(_ descriptor: Int32) throws(Errno) -> FileInfo {
    try perform { (state) throws(Errno) in
      guard let open = state.descriptors[descriptor] else { throw Errno(EBADF) }
      return Self.info(state.inodes[open.inode]!)
    }
  }

  func info(atPath path: String, followingLinks: Bool) throws(Errno) -> FileInfo {
    try perform { (state) throws(Errno) in
      guard let inode = Self.resolve(path, in: state) else { throw Errno(ENOENT) }
      return Self.info(state.inodes[inode]!)
    }
  }

  func makeDirectory(_ path: String, permissions: mode_t) throws(Errno) {
    try perform { (state) throws(Errno) in
      let (parentPath, name) = Self.split(path)
      guard let parent = Self.resolve(parentPath, in: state) else { throw Errno(ENOENT) }
      guard state.inodes[parent]!.isDirectory else { throw Errno(ENOTDIR) }
      guard state.inodes[parent]!.entries[name] == nil else { throw Errno(EEXIST) }
      let inode = state.nextInode
      state.nextInode += 1
      state.inodes[inode] = Inode(isDirectory: true)
      state.inodes[parent]!.entries[name] = inode
    }
  }

  func rename(_ source: String, to destination: String) throws(Errno) {
    try perform { (state) throws(Errno) in
      let (fromPath, fromName) = Self.split(source)
      let (toPath, toName) = Self.split(destination)
      guard let from = Self.resolve(fromPath, in: state), let inode = state.inodes[from]!.entries[fromName] else {
        throw Errno(ENOENT)
      }
      guard let to = Self.resolve(toPath, in: state) else { throw Errno(ENOENT) }
      if let existing = state.inodes[to]!.entries[toName], state.inodes[existing]!.isDirectory {
        throw Errno(EISDIR)
      }
      state.inodes[from]!.entries[fromName] = nil
      state.inodes[to]!.entries[toName] = inode
    }
  }

  func link(_ source: String, to destination: String) throws(Errno) {
    try perform { (state) throws(Errno) in
      guard let inode = Self.resolve(source, in: state) else { throw Errno(ENOENT) }
      let (toPath, toName) = Self.split(destination)
      guard let to = Self.resolve(toPath, in: state) else { throw Errno(ENOENT) }
      guard state.inodes[to]!.entries[toName] == nil else { throw Errno(EEXIST) }
      state.inodes[to]!.entries[toName] = inode
    }
  }

  func unlink(_ path: String) throws(Errno) {
    try perform { (state) throws(Errno) in
      let (parentPath, name) = Self.split(path)
      guard let parent = Self.resolve(parentPath, in: state), let inode = state.inodes[parent]!.entries[name] else {
        throw Errno(ENOENT)
      }
      if state.inodes[inode]!.isDirectory { throw Errno(EISDIR) }
      state.inodes[parent]!.entries[name] = nil
    }
  }

  func lockExclusively(_ descriptor: Int32) throws(Errno) {
    try perform { (state) throws(Errno) in
      guard state.descriptors[descriptor] != nil else { throw Errno(EBADF) }
    }
  }

  func contentsOfDirectory(_ path: String) throws(Errno) -> [String] {
    try perform { (state) throws(Errno) in
      guard let inode = Self.resolve(path, in: state) else { throw Errno(ENOENT) }
      guard state.inodes[inode]!.isDirectory else { throw Errno(ENOTDIR) }
      return state.inodes[inode]!.entries.keys.sorted()
    }
  }

  // MARK: Paths

  private static func split(_ path: String) -> (String, String) {
    let slash = path.lastIndex(of: "/")!
    let parent = slash == path.startIndex ? "/" : String(path[..<slash])
    return (parent, String(path[path.index(after: slash)...]))
  }

  private static func resolve(_ path: String, in state: State) -> Int? {
    var inode = 0
    for component in path.split(separator: "/") {
      guard state.inodes[inode]!.isDirectory, let next = state.inodes[inode]!.entries[String(component)] else {
        return nil
      }
      inode = next
    }
    return inode
  }

  private static func info(_ inode: Inode) -> FileInfo {
    FileInfo(kind: inode.isDirectory ? .directory : .regular, size: inode.data.count)
  }
}
