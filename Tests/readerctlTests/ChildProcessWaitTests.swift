import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The waits every process-driving test uses (`Process.exit(within:)` in TestSupport): they hold no
/// thread of the cooperative pool, and a child that outlives its limit is killed, never waited for
/// without end.
@Suite(.timeLimit(.minutes(1))) struct ChildProcessWaitTests {
  /// A started `/bin/sh -c script`.
  private func shell(_ script: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script]
    try process.runWithSignalsUnblocked()
    return process
  }

  @Test func tasksWaitingForChildrenLeaveThePoolToTheOtherTasks() async throws {
    // More waiters than the pool has threads, each for a child that runs until it is killed: a wait
    // that held its thread would leave the probe below no thread until a child ended.
    let children = try (0..<(ProcessInfo.processInfo.activeProcessorCount + 2)).map { _ in try shell("exec sleep 30") }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for child in children { group.addTask { try? await child.exit(within: .seconds(40)) } }
      let resumed = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) { continuation.resume(returning: true) }
      }
      let running = children.filter(\.isRunning).count
      for child in children { kill(child.processIdentifier, SIGKILL) }
      try await group.waitForAll()
      #expect(
        resumed && running == children.count, "the probe ran only once \(children.count - running) children ended")
    }
  }

  @Test func aChildThatOutlivesItsLimitIsTerminatedAndTheWaitSaysWhich() async throws {
    let child = try shell("exec sleep 30")
    let error = await #expect(throws: ChildProcessTimeout.self) {
      try await child.exit(within: .milliseconds(200), grace: .seconds(5))
    }
    #expect(
      error?.description == "sh -c exec sleep 30 did not exit within 0.2 seconds and was killed (SIGTERM, then SIGKILL)"
    )
    // SIGTERM ended it; SIGKILL was not needed.
    #expect(!child.isRunning && child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGTERM)
  }

  @Test func aChildThatIgnoresSIGTERMIsKilled() async throws {
    let child = try shell("trap '' TERM; while :; do sleep 0.05; done")
    await #expect(throws: ChildProcessTimeout.self) {
      try await child.exit(within: .milliseconds(200), grace: .milliseconds(300))
    }
    #expect(!child.isRunning && child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL)
  }

  @Test func aChildThatEndsInTimeIsNotSignalled() async throws {
    let child = try shell("exit 3")
    try await child.exit(within: .seconds(30))
    #expect(child.terminationReason == .exit && child.terminationStatus == 3)
  }
}
