import Dispatch
import Foundation
import NFCKit
import ReaderCore
import ReaderSimulator
import Synchronization

/// Benchmarks NFC reader sessions on the simulator (with no simulated latency, so only the software
/// is measured); every number is a rate measured in this run against a bare baseline doing the same
/// amount of work in the same run, so runs on different machines compare by their ratios.
///
/// - `lifecycle`: `sessions` sessions, one after another, each begun, made active, invalidated and
///   reported to its delegate; against the same number of steps (four per session: begin, start,
///   polling, invalidate) through a plain FIFO of closures.
/// - `queue`: `queued` sessions begun at once from many threads (`concurrentPerform`) while the system
///   waits, then run through the line — each is invalidated as it becomes active; against the same
///   number of items pushed from the same threads into a lock-guarded FIFO and then popped in order.
///   Run for each size in `queued`: the cost per session must not grow with the length of the line.
///
/// Keys: `lifecycle.sessionsPerSecond`, `lifecycle.fifoStepsPerSecond`, `lifecycle.toFIFO`, and per size
/// `queue.<n>.sessionsPerSecond`, `queue.<n>.fifoItemsPerSecond`, `queue.<n>.toFIFO`, plus
/// `queue.costGrowth` (cost per session at the largest size over that at the smallest; flat is 1).
func runNFCBenchmark(sessions: Int, queued: [Int]) -> [String: Double] {
  var results: [String: Double] = [:]
  let count = max(1, sessions)
  let lifecycle = BenchTimer.seconds { NFCLifecycle.run(sessions: count) }
  let steps = 4 * count
  let fifo = BenchTimer.seconds { PlainFIFO.run(items: steps) }
  results["lifecycle.sessionsPerSecond"] = Double(count) / lifecycle
  results["lifecycle.fifoStepsPerSecond"] = Double(steps) / fifo
  results["lifecycle.toFIFO"] = results["lifecycle.sessionsPerSecond"]! / (results["lifecycle.fifoStepsPerSecond"]! / 4)

  let sizes = queued.map { max(1, $0) }
  for size in sizes {
    let line = BenchTimer.seconds { NFCLine.run(sessions: size) }
    let bare = BenchTimer.seconds { PlainFIFO.runConcurrently(items: size) }
    results["queue.\(size).sessionsPerSecond"] = Double(size) / line
    results["queue.\(size).fifoItemsPerSecond"] = Double(size) / bare
    results["queue.\(size).toFIFO"] = bare / line
  }
  if let small = sizes.min(), let large = sizes.max(), small != large {
    results["queue.costGrowth"] =
      results["queue.\(small).sessionsPerSecond"]! / results["queue.\(large).sessionsPerSecond"]!
  }
  return results
}

/// Runs the NFC benchmark as `reader-bench nfc` does: 20,000 sessions one after another, and lines of
/// 1,000 and 100,000 sessions begun at once.
func runNFCBenchmarkAndPrint() {
  let (sessions, queued) = (20_000, [1_000, 100_000])
  printNFCBenchmark(runNFCBenchmark(sessions: sessions, queued: queued), sessions: sessions, queued: queued)
}

/// Prints the NFC benchmark's results, ratios last.
func printNFCBenchmark(_ results: [String: Double], sessions: Int, queued: [Int]) {
  var lines = [
    "NFC benchmark: best of \(BenchTimer.runs) runs, simulated radio without latency",
    "  sessions opened and closed, one after another: \(rate(results["lifecycle.sessionsPerSecond"]!)) sessions/s "
      + "(\(sessions) sessions); plain FIFO: \(rate(results["lifecycle.fifoStepsPerSecond"]!)) steps/s",
  ]
  for size in queued.map({ max(1, $0) }) {
    lines.append(
      "  \(size) sessions begun concurrently, through the line: \(rate(results["queue.\(size).sessionsPerSecond"]!)) "
        + "sessions/s; locked FIFO: \(rate(results["queue.\(size).fifoItemsPerSecond"]!)) items/s")
  }
  var ratios = ["lifecycle / FIFO = \(String(format: "%.4f", results["lifecycle.toFIFO"]!))"]
  for size in queued.map({ max(1, $0) }) {
    ratios.append("queue(\(size)) / FIFO = \(String(format: "%.4f", results["queue.\(size).toFIFO"]!))")
  }
  if let growth = results["queue.costGrowth"] {
    ratios.append("cost per session, largest / smallest line = \(String(format: "%.2f", growth)) (flat: 1)")
  }
  lines.append("  ratios: " + ratios.joined(separator: ", "))
  print(lines.joined(separator: "\n"))
}

private func rate(_ value: Double) -> String {
  value >= 1e6
    ? String(format: "%.2fM", value / 1e6)
    : value >= 1e3 ? String(format: "%.1fk", value / 1e3) : String(format: "%.1f", value)
}

/// Sessions one after another: begin, active, invalidate, reported.
private enum NFCLifecycle {
  static func run(sessions: Int) {
    let (system, radio) = NFCReaderSystem.simulated(
      seed: 1, policy: NFCSystemPolicy(sessionTimeout: nil), timing: .instant)
    let delegate = CountingDelegate()
    for _ in 0..<sessions {
      let session = NFCNDEFReaderSession(delegate: delegate, queue: nil, invalidateAfterFirstRead: true, system: system)
      session.begin()
      radio.clock.runUntilIdle()
      session.invalidate()
      radio.clock.runUntilIdle()
    }
    precondition(delegate.ended.load(ordering: .relaxed) == sessions, "every session ended")
  }
}

/// Sessions begun concurrently, then run through the line. Each session is invalidated as it becomes
/// active by an observer of the system's events (no delegate), so the measure is the line itself.
private enum NFCLine {
  static func run(sessions: Int) {
    let (system, radio) = NFCReaderSystem.simulated(
      seed: 1, policy: NFCSystemPolicy(sessionTimeout: nil), timing: .instant)
    let made = (0..<sessions).map { _ in NFCNDEFReaderSession(invalidateAfterFirstRead: true, system: system) }
    let first = made.first?.identifier ?? 0
    let ended = Atomic<Int>(0)
    system.addEventObserver { event in
      switch event.kind {
      case .didBecomeActive: made[Int(event.session - first)].invalidate()
      case .didInvalidate: ended.add(1, ordering: .relaxed)
      default: break
      }
    }
    DispatchQueue.concurrentPerform(iterations: sessions) { made[$0].begin() }
    while ended.load(ordering: .relaxed) < sessions { radio.clock.runUntilIdle() }
    precondition(system.runningSession == nil && system.waitingSessionCount == 0, "the line drained")
  }
}

/// The baselines: closures through a plain FIFO.
private enum PlainFIFO {
  static func run(items: Int) {
    var queue: [() -> Void] = []
    var head = 0
    var done = 0
    for _ in 0..<items { queue.append { done += 1 } }
    while head < queue.count {
      queue[head]()
      head += 1
    }
    precondition(done == items)
  }

  static func runConcurrently(items: Int) {
    let queue = Mutex<[@Sendable () -> Void]>([])
    let done = Atomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: items) { _ in
      queue.withLock { $0.append { done.add(1, ordering: .relaxed) } }
    }
    let work = queue.withLock { $0 }
    for item in work { item() }
    precondition(done.load(ordering: .relaxed) == items)
  }
}

private final class CountingDelegate: NFCNDEFReaderSessionDelegate {
  let ended = Atomic<Int>(0)
  let invalidatesWhenActive: Bool

  init(invalidatesWhenActive: Bool = false) { self.invalidatesWhenActive = invalidatesWhenActive }

  func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) {
    if invalidatesWhenActive { session.invalidate() }
  }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    ended.add(1, ordering: .relaxed)
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
}
