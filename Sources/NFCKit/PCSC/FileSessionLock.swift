internal import ReaderCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `NFCSessionLock` with files in a directory: a FIFO line that a crashed process leaves by itself.
///
/// Joining the line takes a ticket: a file `ticket-<number>-<pid>` created and `flock`ed under the
/// directory's own lock, its number one more than any ticket there. It is a holder's turn when every
/// ticket with a smaller number is gone: a ticket whose lock can be taken belongs to a process that
/// left (or died: the kernel releases a dead process's locks) and is removed on the way. Leaving
/// removes the ticket and closes it. Every call is a handful of non-blocking system calls.
package final class FileSessionLock: NFCSessionLock, Sendable {
  private struct Ticket {
    var number: UInt64
    var descriptor: Int32
    var path: String
  }

  /// The directory the tickets are in.
  package let directory: String
  private let ticket = Locked<Ticket?>(nil)

  package init(directory: String) {
    self.directory = directory
  }

  deinit {
    release()
  }

  package func tryAcquire() -> NFCSessionLockAttempt {
    ticket.withLock { ticket in
      if ticket == nil {
        switch takeTicket() {
        case .taken(let taken): ticket = taken
        case .failed(let failure): return failure
        }
      }
      guard let mine = ticket else { return .failed(.other("no ticket"), path: directory) }
      // Shared with other scans, exclusive of a ticket being made: a ticket is never seen unlocked
      // between its creation and its lock.
      let guardPath = directory + "/line.lock"
      let line = open(guardPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
      guard line >= 0, flock(line, LOCK_SH) == 0 else {
        let code = errno
        if line >= 0 { close(line) }
        return .failed(.errno(code), path: guardPath)
      }
      defer { close(line) }
      for (number, name) in tickets() where number < mine.number {
        let path = directory + "/" + name
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { continue }  // Gone since the listing.
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
          return .heldElsewhere(holder: String(name.split(separator: "-").last ?? "?"))
        }
        unlink(path)  // Its process left without removing it.
      }
      return .acquired
    }
  }

  package func release() {
    ticket.withLock { ticket in
      guard let mine = ticket else { return }
      unlink(mine.path)
      close(mine.descriptor)
      ticket = nil
    }
  }

  private enum Taking {
    case taken(Ticket)
    case failed(NFCSessionLockAttempt)
  }

  /// Creates and locks a ticket numbered after every ticket in the directory.
  private func takeTicket() -> Taking {
    if mkdir(directory, 0o700) != 0 && errno != EEXIST {
      return .failed(.failed(.errno(errno), path: directory))
    }
    let guardPath = directory + "/line.lock"
    let line = open(guardPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard line >= 0 else { return .failed(.failed(.errno(errno), path: guardPath)) }
    defer { close(line) }
    guard flock(line, LOCK_EX) == 0 else { return .failed(.failed(.errno(errno), path: guardPath)) }
    let number = (tickets().last?.number ?? 0) + 1
    let digits = String(number)
    let path =
      directory + "/ticket-" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + "-"
      + String(getpid())
    let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return .failed(.failed(.errno(errno), path: path)) }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      let code = errno
      close(descriptor)
      unlink(path)
      return .failed(.failed(.errno(code), path: path))
    }
    return .taken(Ticket(number: number, descriptor: descriptor, path: path))
  }

  /// The tickets in the directory, by number.
  private func tickets() -> [(number: UInt64, name: String)] {
    guard let stream = opendir(directory) else { return [] }
    defer { closedir(stream) }
    var found: [(number: UInt64, name: String)] = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      let parts = name.split(separator: "-")
      guard parts.count == 3, parts[0] == "ticket", let number = UInt64(parts[1]) else { continue }
      found.append((number, name))
    }
    return found.sorted { $0.number < $1.number }
  }
}
