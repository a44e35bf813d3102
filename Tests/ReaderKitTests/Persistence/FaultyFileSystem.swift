import ReaderCore

@testable import ReaderKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A file system that passes calls to `base` and injects one fault: a call that fails with an
/// `errno`, or the process dying at a call.
final class FaultyFileSystem: FileSystem, @unchecked Sendable {
  enum Fault: Sendable {
    /// The `occurrence`-th call (from 1) that `matches` fails with `errno`, without effect (a failed
    /// `close` still releases the descriptor, as close(2) does).
    case fail(errno: Int32, occurrence: Int = 1, matches: @Sendable (FileSystemCall) -> Bool)
    /// The process dies at the first call that `matches`: a write there stores half its bytes, and
    /// from then on every call fails with `EIO` without effect — but descriptors are still released,
    /// as the kernel releases a dead process's files and locks.
    case die(matches: @Sendable (FileSystemCall) -> Bool)
  }

  private struct State {
    var descriptors: [Int32: (path: String, isDirectory: Bool)] = [:]
    var seen = 0
    var dead = false
    var log: [FileSystemCall] = []
  }

  private let base: any FileSystem
  private let fault: Fault?
  private let state = Locked(State())

  init(base: any FileSystem = LiveFileSystem(), _ fault: Fault?) {
    self.base = base
    self.fault = fault
  }

  /// Fails the first call the store names `step` with `errno`.
  static func failing(_ step: FileReaderStore.Step, errno: Int32) -> FaultyFileSystem {
    FaultyFileSystem(.fail(errno: errno) { $0.isStep(step) })
  }

  /// Every call made so far.
  var log: [FileSystemCall] { state.withLock { $0.log } }

  /// Whether the process "died".
  var isDead: Bool { state.withLock { $0.dead } }

  private enum Verdict { case pass, fail(Int32), halfWrite }

  private func verdict(_ call: FileSystemCall) -> Verdict {
    state.withLock { state in
      state.log.append(call)
      if state.dead { return .fail(EIO) }
      switch fault {
      case .fail(let code, let occurrence, let matches)? where matches(call):
        state.seen += 1
        return state.seen == occurrence ? .fail(code) : .pass
      case .die(let matches)? where matches(call):
        state.dead = true
        if case .write = call { return .halfWrite }
        return .fail(EIO)
      default:
        return .pass
      }
    }
  }

  private func path(of descriptor: Int32) -> String {
    state.withLock { $0.descriptors[descriptor]?.path ?? "fd\(descriptor)" }
  }

  private func isDirectory(_ descriptor: Int32) -> Bool {
    state.withLock { $0.descriptors[descriptor]?.isDirectory ?? false }
  }

  private func check(_ call: FileSystemCall) throws(Errno) {
    if case .fail(let code) = verdict(call) { throw Errno(code) }
  }

  func open(_ path: String, _ mode: OpenMode) throws(Errno) -> Int32 {
    try check(.open(path, mode))
    let descriptor = try base.open(path, mode)
    state.withLock { $0.descriptors[descriptor] = (path, mode == .directory) }
    return descriptor
  }

  func close(_ descriptor: Int32) throws(Errno) {
    let verdict = verdict(.close(path(of: descriptor)))
    state.withLock { _ = $0.descriptors.removeValue(forKey: descriptor) }
    try base.close(descriptor)
    if case .fail(let code) = verdict { throw Errno(code) }
  }

  func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
    try check(.read(path(of: descriptor)))
    return try base.read(descriptor, into: buffer)
  }

  func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
    switch verdict(.write(path(of: descriptor))) {
    case .pass: return try base.write(descriptor, from: buffer)
    case .fail(let code): throw Errno(code)
    case .halfWrite:
      _ = try? base.write(descriptor, from: UnsafeRawBufferPointer(rebasing: buffer[..<(buffer.count / 2)]))
      throw Errno(EIO)
    }
  }

  func sync(_ descriptor: Int32) throws(Errno) {
    try check(.sync(path(of: descriptor), isDirectory: isDirectory(descriptor)))
    try base.sync(descriptor)
  }

  func info(_ descriptor: Int32) throws(Errno) -> FileInfo {
    try check(.info(path(of: descriptor)))
    return try base.info(descriptor)
  }

  func info(atPath path: String, followingLinks: Bool) throws(Errno) -> FileInfo {
    try check(.info(path))
    return try base.info(atPath: path, followingLinks: followingLinks)
  }

  func makeDirectory(_ path: String, permissions: mode_t) throws(Errno) {
    try check(.makeDirectory(path))
    try base.makeDirectory(path, permissions: permissions)
  }

  func rename(_ source: String, to destination: String) throws(Errno) {
    try check(.rename(source, destination))
    try base.rename(source, to: destination)
  }

  func link(_ source: String, to destination: String) throws(Errno) {
    try check(.link(source, destination))
    try base.link(source, to: destination)
  }

  func unlink(_ path: String) throws(Errno) {
    try check(.unlink(path))
    try base.unlink(path)
  }

  func lockExclusively(_ descriptor: Int32) throws(Errno) {
    try check(.lock(path(of: descriptor)))
    try base.lockExclusively(descriptor)
  }

  func contentsOfDirectory(_ path: String) throws(Errno) -> [String] {
    try check(.list(path))
    return try base.contentsOfDirectory(path)
  }
}
