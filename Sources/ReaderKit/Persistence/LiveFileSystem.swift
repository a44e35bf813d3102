#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The real system calls.
package struct LiveFileSystem: FileSystem {
  package init() {}

  package func open(_ path: String, _ mode: OpenMode) throws(Errno) -> Int32 {
    let descriptor: Int32
    switch mode {
    case .readOnly: descriptor = posixOpen(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0)
    case .createExclusive(let permissions):
      descriptor = posixOpen(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
    case .directory: descriptor = posixOpen(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
    }
    if descriptor == -1 { throw Errno(errno) }
    return descriptor
  }

  package func close(_ descriptor: Int32) throws(Errno) {
    if posixClose(descriptor) != 0 { throw Errno(errno) }
  }

  package func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
    let count = posixRead(descriptor, buffer.baseAddress, buffer.count)
    if count < 0 { throw Errno(errno) }
    return count
  }

  package func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
    let count = posixWrite(descriptor, buffer.baseAddress, buffer.count)
    if count < 0 { throw Errno(errno) }
    return count
  }

  package func sync(_ descriptor: Int32) throws(Errno) {
    #if canImport(Darwin)
      if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
    #endif
    if fsync(descriptor) != 0 { throw Errno(errno) }
  }

  package func info(_ descriptor: Int32) throws(Errno) -> FileInfo {
    var status = stat()
    if fstat(descriptor, &status) != 0 { throw Errno(errno) }
    return Self.info(status)
  }

  package func info(atPath path: String, followingLinks: Bool) throws(Errno) -> FileInfo {
    var status = stat()
    let result = followingLinks ? stat(path, &status) : lstat(path, &status)
    if result != 0 { throw Errno(errno) }
    return Self.info(status)
  }

  package func makeDirectory(_ path: String, permissions: mode_t) throws(Errno) {
    if mkdir(path, permissions) != 0 { throw Errno(errno) }
  }

  package func rename(_ source: String, to destination: String) throws(Errno) {
    if posixRename(source, destination) != 0 { throw Errno(errno) }
  }

  package func link(_ source: String, to destination: String) throws(Errno) {
    if posixLink(source, destination) != 0 { throw Errno(errno) }
  }

  package func unlink(_ path: String) throws(Errno) {
    if posixUnlink(path) != 0 { throw Errno(errno) }
  }

  package func lockExclusively(_ descriptor: Int32) throws(Errno) {
    if flock(descriptor, LOCK_EX) != 0 { throw Errno(errno) }
  }

  package func contentsOfDirectory(_ path: String) throws(Errno) -> [String] {
    guard let directory = opendir(path) else { throw Errno(errno) }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafePointer(to: entry.pointee.d_name) {
        $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  private static func info(_ status: stat) -> FileInfo {
    let kind: FileInfo.Kind =
      switch status.st_mode & mode_t(S_IFMT) {
      case mode_t(S_IFREG): .regular
      case mode_t(S_IFDIR): .directory
      case mode_t(S_IFLNK): .symbolicLink
      default: .other
      }
    return FileInfo(kind: kind, size: Int(status.st_size))
  }
}

// The method names above shadow the C functions inside the type; these reach the C ones.
private func posixOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func posixClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
private func posixRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
  read(descriptor, buffer, count)
}
private func posixWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
  write(descriptor, buffer, count)
}
private func posixRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }
private func posixLink(_ source: String, _ destination: String) -> Int32 { link(source, destination) }
private func posixUnlink(_ path: String) -> Int32 { unlink(path) }
