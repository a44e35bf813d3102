import Foundation
import Synchronization
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

  @Test func onceAChildWasKilledAtItsLimitTheNextOnesGetTheShortLimitAndSaySo() async throws {
    let gate = ChildProcessGate(width: 2)
    #expect(gate.limit(.seconds(60)) == (.seconds(60), nil))
    #expect(gate.grace() == .seconds(2))
    // `discover --timeout 0` runs until it is interrupted.
    let hanging = ["discover", "--timeout", "0", "--speed", "50"]
    await #expect(throws: ReaderctlProcess.Failure.self) {
      try await ReaderctlProcess.run(hanging, timeout: 1, gate: gate)
    }
    let (limit, reason) = gate.limit(.seconds(60))
    #expect(limit == ChildProcessGate.limitAfterAnOverrun)
    #expect(reason?.contains("readerctl discover --timeout 0 --speed 50 was killed at its limit") == true)
    #expect(gate.limit(.seconds(2)) == (.seconds(2), nil), "a limit shorter than the short one stays")
    #expect(gate.grace() == ChildProcessGate.graceAfterAnOverrun)
    let started = ContinuousClock.now
    let error = await #expect(throws: ReaderctlProcess.Failure.self) {
      try await ReaderctlProcess.run(hanging, timeout: 60, gate: gate)
    }
    #expect(ContinuousClock.now - started < .seconds(30))
    #expect(error?.description.contains("shortened from 60") == true, "\(String(describing: error))")
    // A child that ends within the short limit still passes.
    let quick = try await ReaderctlProcess.run(["ndef", "encode", "--text", "hi", "--hex"], timeout: 60, gate: gate)
    #expect(quick.status == 0)
  }

  @Test func cancellingTheWaitingTaskKillsTheChildAtOnce() async throws {
    let gate = ChildProcessGate(width: 2)
    let running = Atomic<Bool>(false)
    let started = ContinuousClock.now
    let run = Task {
      // `discover --timeout 0` runs until it is interrupted; `interruptWhen` is asked once it runs.
      try await ReaderctlProcess.run(
        ["discover", "--timeout", "0", "--speed", "50"], timeout: 60,
        interruptWhen: {
          running.store(true, ordering: .relaxed)
          return false
        }, gate: gate)
    }
    #expect(await eventually(within: .seconds(30)) { running.load(ordering: .relaxed) })
    run.cancel()
    await #expect(throws: CancellationError.self) { try await run.value }
    #expect(ContinuousClock.now - started < .seconds(30), "the child was killed, not waited for to its limit")
    // Cancelled before its child starts: the child is killed as it starts.
    let early = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await ReaderctlProcess.run(["discover", "--timeout", "0", "--speed", "50"], timeout: 60, gate: gate)
    }
    await #expect(throws: CancellationError.self) { try await early.value }
    #expect(ContinuousClock.now - started < .seconds(45))
  }

  @Test func aChildThatEndsInTimeIsNotSignalled() async throws {
    let child = try shell("exit 3")
    try await child.exit(within: .seconds(30))
    #expect(child.terminationReason == .exit && child.terminationStatus == 3)
  }

  #if os(Linux)
    @Test func childrenAreStartedToBeKilledWhenTheTestProcessEnds() async throws {
      // The child reads its own parent-death signal (prctl PR_GET_PDEATHSIG = 2).
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = [
        "python3", "-c", "import ctypes; v = ctypes.c_int(); ctypes.CDLL(None).prctl(2, ctypes.byref(v)); print(v.value)",
      ]
      let out = Pipe()
      process.standardOutput = out
      try process.runWithSignalsUnblocked()
      let said = try await process.readToEndAndExit(out, within: .seconds(30))
      #expect(String(decoding: said, as: UTF8.self) == "\(SIGKILL)\n")
      #expect(process.commandLine.hasPrefix("env python3 -c import ctypes"))
    }

    @Test func aChildStartedFromAThreadThatEndsOutlivesThatThread() async throws {
      // The kernel's parent of a child is the thread that spawned it: spawned by the calling thread, the
      // child would be killed as that thread ends, as the pools' idle threads do. The thread below ends
      // once the child is up (its death signal set before it said so).
      struct Started: @unchecked Sendable { let process: Process }
      let child = try await offPool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import time; print('up', flush=True); time.sleep(30)"]
        let out = Pipe()
        process.standardOutput = out
        try process.runWithSignalsUnblocked()
        var said = Data()
        while !said.contains(UInt8(ascii: "\n")) {
          let more = out.fileHandleForReading.availableData
          if more.isEmpty { break }
          said += more
        }
        return Started(process: process)
      }.process
      await #expect(throws: ChildProcessTimeout.self) {
        try await child.exit(within: .milliseconds(500), grace: .seconds(5))
      }
      // Still running when the wait gave up, it was ended by the wait's SIGTERM, not by a SIGKILL before.
      #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGTERM)
    }

    @Test func aMissingProgramStillThrowsWhenStarted() {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/nonexistent/program")
      #expect(throws: (any Error).self) { try process.runWithSignalsUnblocked() }
    }
  #endif
}
