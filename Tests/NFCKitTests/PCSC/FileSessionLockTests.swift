import Foundation
import NFCKit
import Testing

@Suite(.timeLimit(.minutes(1))) struct FileSessionLockTests {
  private func directory() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("readerkit-line-\(UUID())").path
  }

  @Test func holdersTakeTheirTurnsInTheOrderTheyJoined() {
    let path = directory()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let locks = (0..<3).map { _ in FileSessionLock(directory: path) }
    #expect(locks[0].tryAcquire() == .acquired)
    #expect(locks[2].tryAcquire() != .acquired)
    #expect(locks[1].tryAcquire() != .acquired)
    locks[0].release()
    // The second to join goes next, though the third asked first.
    #expect(locks[1].tryAcquire() != .acquired)
    #expect(locks[2].tryAcquire() == .acquired)
    locks[2].release()
    #expect(locks[1].tryAcquire() == .acquired)
    #expect(locks[0].tryAcquire() != .acquired)
  }

  @Test func aHolderThatDiedWithoutLeavingIsSkipped() throws {
    let path = directory()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let waiting = FileSessionLock(directory: path)
    do {
      let dead = FileSessionLock(directory: path)
      #expect(dead.tryAcquire() == .acquired)
      #expect(waiting.tryAcquire() != .acquired)
      // What a crash leaves: the ticket file, with nobody holding its lock.
      let ticket = try #require(
        try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix("ticket-") }.sorted().first)
      try FileManager.default.copyItem(atPath: path + "/" + ticket, toPath: path + "/keep")
      dead.release()
      try FileManager.default.moveItem(atPath: path + "/keep", toPath: path + "/" + ticket)
    }
    #expect(waiting.tryAcquire() == .acquired)
    #expect(try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix("ticket-") }.count == 1)
  }

  @Test func aDirectoryThatCannotBeMadeIsAFailureNamingIt() {
    let lock = FileSessionLock(directory: "/proc/readerkit-cannot-be-here")
    guard case .failed(let cause, let failedPath) = lock.tryAcquire() else {
      Issue.record("a lock under /proc was taken")
      return
    }
    #expect(failedPath == "/proc/readerkit-cannot-be-here")
    #expect(cause == .errno(ENOENT))
  }
}
