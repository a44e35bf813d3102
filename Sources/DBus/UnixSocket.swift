#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The few socket calls the connection makes, with their failures as `DBusError`s carrying `errno`.
enum UnixSocket {
  /// A connected stream socket to `address`, with send and receive timeouts of `timeout`.
  static func connect(_ address: DBusAddress, timeout: Duration) throws(DBusError) -> Int32 {
    #if canImport(Glibc)
      let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    #else
      let fd = socket(AF_UNIX, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw failure(DBusError.noServer, "socket() failed") }
    var storage = sockaddr_un()
    storage.sun_family = sa_family_t(AF_UNIX)
    let (bytes, abstract): ([UInt8], Bool) =
      switch address {
      case .unixPath(let path): (Array(path.utf8), false)
      case .unixAbstract(let name): (Array(name.utf8), true)
      }
    let capacity = MemoryLayout.size(ofValue: storage.sun_path)
    guard bytes.count + 1 <= capacity else {
      close(fd)
      throw DBusError(name: DBusError.noServer, message: "the socket path of \(address) is too long")
    }
    withUnsafeMutableBytes(of: &storage.sun_path) { raw in
      let start = abstract ? 1 : 0
      for (index, byte) in bytes.enumerated() { raw[start + index] = byte }
    }
    let length =
      abstract
      ? MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + 1 + bytes.count : MemoryLayout<sockaddr_un>.size
    do {
      try setReceiveTimeout(fd, timeout)
      try setSendTimeout(fd, timeout)
    } catch {
      close(fd)
      throw error
    }
    let result = withUnsafePointer(to: &storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(length)) }
    }
    guard result == 0 else {
      let error = failure(DBusError.noServer, "cannot connect to \(address)")
      close(fd)
      throw error
    }
    return fd
  }

  private static func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    #if canImport(Glibc)
      Glibc.connect(fd, address, length)
    #else
      Darwin.connect(fd, address, length)
    #endif
  }

  static func setReceiveTimeout(_ fd: Int32, _ timeout: Duration) throws(DBusError) {
    try setTimeout(fd, SO_RCVTIMEO, timeout)
  }

  static func setSendTimeout(_ fd: Int32, _ timeout: Duration) throws(DBusError) {
    try setTimeout(fd, SO_SNDTIMEO, timeout)
  }

  private static func setTimeout(_ fd: Int32, _ option: Int32, _ timeout: Duration) throws(DBusError) {
    let (seconds, attoseconds) = timeout.components
    var value = timeval(tv_sec: Int(max(seconds, 0)), tv_usec: Int(max(attoseconds, 0) / 1_000_000_000_000))
    if seconds == 0 && attoseconds > 0 && value.tv_usec == 0 { value.tv_usec = 1 }
    guard setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
      throw failure(DBusError.disconnected, "setsockopt failed")
    }
  }

  /// Writes every byte, retrying after `EINTR` and continuing short writes.
  static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(DBusError) {
    var written = 0
    while written < bytes.count {
      let result = bytes.withUnsafeBytes { raw in
        #if canImport(Glibc)
          send(fd, raw.baseAddress! + written, raw.count - written, Int32(MSG_NOSIGNAL))
        #else
          send(fd, raw.baseAddress! + written, raw.count - written, 0)
        #endif
      }
      if result < 0 {
        if errno == EINTR { continue }
        throw failure(DBusError.disconnected, "writing to the bus failed")
      }
      written += result
    }
  }

  /// Reads what is there (at most `capacity` bytes) into `buffer`; 0 is end of stream.
  static func read(_ fd: Int32, into buffer: inout [UInt8], capacity: Int) throws(DBusError) -> Int {
    var chunk = [UInt8](repeating: 0, count: capacity)
    while true {
      let result = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, capacity, 0) }
      if result >= 0 {
        buffer.append(contentsOf: chunk[0..<result])
        return result
      }
      if errno == EINTR { continue }
      if errno == EAGAIN || errno == EWOULDBLOCK {
        throw DBusError(name: DBusError.noReply, message: "the bus did not answer in time", errno: errno)
      }
      throw failure(DBusError.disconnected, "reading from the bus failed")
    }
  }

  static func shutdown(_ fd: Int32) {
    #if canImport(Glibc)
      _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    #else
      _ = Darwin.shutdown(fd, SHUT_RDWR)
    #endif
  }

  static func close(_ fd: Int32) {
    #if canImport(Glibc)
      _ = Glibc.close(fd)
    #else
      _ = Darwin.close(fd)
    #endif
  }

  private static func failure(_ name: String, _ message: String) -> DBusError {
    let code = errno
    return DBusError(name: name, message: "\(message): \(String(cString: strerror(code)))", errno: code)
  }
}
