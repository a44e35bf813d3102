import Dispatch
import Foundation
import NFCKit
import ReaderCore
import ReaderSimulator
import Synchronization

/// Benchmarks NFC reader sessions on the simulator (with no simulated latency, so only the software
/// is measured); every figure is a ratio taken within one round of this run (see `Comparison`) against
/// a bare baseline doing the same amount of work, so runs on different machines compare by their ratios.
///
/// - `lifecycle`: `sessions` sessions, one after another, each created, begun, made active,
///   invalidated and reported to its delegate; against the same steps done bare: a session object with
///   a weak delegate, and its four steps (begin, start, polling, invalidate) as closures that capture it
///   through a plain FIFO, the delegate called when it becomes active and when it ends.
/// - `queue`: `queued` sessions begun at once from many threads (`concurrentPerform`) while the system
///   waits, then run through the line — each is invalidated as it becomes active, by an observer of its
///   events; against the same steps done bare: as many session objects, a closure for each pushed from
///   the same threads into a lock-guarded FIFO, then popped in order, each session made active and
///   ended through two more closures, an observer called for both events.
///   Run for each size in `queued`: the cost per session must not grow with the length of the line, which
///   the exponent of the cost per session from the smallest line to the largest says (flat is 0).
/// - `memory`: the resident memory `waiting` sessions add while they wait in line behind a running one
///   (the app's session objects and everything the system keeps for them; begun a thousand at a time, so
///   the scheduler's queue of calls stays short), per session, once per round
///   after the timed cases; freed memory is handed back to the system (`malloc_trim`) before each
///   measure, so it is not reused unseen.
func runNFCBenchmark(sessions: Int, queued: [Int], waiting: Int = 100_000) -> [Ratio] {
  let count = max(1, sessions)
  let sizes = queued.map { max(1, $0) }
  var cases: [Comparison.Case] = [
    .init("nfc.lifecycle.sessions") { NFCLifecycle.run(sessions: count) },
    .init("nfc.lifecycle.fifo") { PlainFIFO.run(sessions: count) },
  ]
  for size in sizes {
    cases += [
      .init("nfc.queue.\(size).sessions") { NFCLine.run(sessions: size) },
      .init("nfc.queue.\(size).fifo") { PlainFIFO.runConcurrently(sessions: size) },
    ]
  }
  let timings = Comparison(cases).measure()
  var ratios = [
    timings.ratio(
      "nfc.lifecycle: FIFO / sessions", "nfc.lifecycle.fifo", over: "nfc.lifecycle.sessions", goal: .atLeast(0.1))
  ]
  for size in sizes {
    ratios.append(
      timings.ratio(
        "nfc.queue(\(size)): FIFO / sessions", "nfc.queue.\(size).fifo", over: "nfc.queue.\(size).sessions",
        goal: .atLeast(0.1)))
  }
  if BenchOptions.current.includes("nfc.memory") {
    let bytes = (0..<max(1, BenchOptions.current.rounds)).map { _ in NFCWaitingMemory.bytesPerSession(waiting) }
    ratios.append(
      Ratio(name: "nfc.memory: bytes per waiting session", samples: bytes, goal: .atMost(400), isRatio: false))
  }
  if let small = sizes.min(), let large = sizes.max(), small != large {
    let growth = timings.ratio("growth", "nfc.queue.\(large).sessions", over: "nfc.queue.\(small).sessions")
    let exponent = growth.samples.map { log($0 * Double(small) / Double(large)) / log(Double(large) / Double(small)) }
    ratios.append(
      Ratio(
        name: "nfc.queue: cost exponent, \(small) to \(large) sessions", samples: exponent, goal: .atMost(0.05),
        isRatio: false))
  }
  print(
    """
    NFC benchmark: \(BenchOptions.current.rounds) rounds, simulated radio without latency
      lifecycle: \(count) sessions opened and closed one after another, against \(4 * count) steps through a plain FIFO
      queue: \(sizes.map(String.init).joined(separator: " and ")) sessions begun concurrently and run through the \
    line, against as many items through a locked FIFO
      memory: \(waiting) sessions waiting in line, resident memory per session
    """)
  print(ratios.map(\.line).joined(separator: "\n"))
  return ratios
}

/// Runs the NFC benchmark as `reader-bench nfc` does: 20,000 sessions one after another, and lines of
/// 1,000 and 100,000 sessions begun at once.
func runNFCBenchmarkAndPrint() -> [Ratio] {
  runNFCBenchmark(sessions: 20_000, queued: [1_000, 100_000])
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

/// What sessions waiting in line cost in memory.
private enum NFCWaitingMemory {
  static func bytesPerSession(_ count: Int) -> Double {
    let (system, radio) = NFCReaderSystem.simulated(
      seed: 1, policy: NFCSystemPolicy(sessionTimeout: nil), timing: .instant)
    let first = NFCNDEFReaderSession(invalidateAfterFirstRead: true, system: system)
    first.begin()
    radio.clock.runUntilIdle()
    trimHeap()
    let before = residentBytes()
    let made = (0..<count).map { _ in NFCNDEFReaderSession(invalidateAfterFirstRead: true, system: system) }
    // Begun a thousand at a time, so that what is measured is what waiting sessions hold, not the
    // scheduler's queue of a hundred thousand calls not handled yet.
    for start in stride(from: 0, to: count, by: 1_000) {
      for session in made[start..<min(count, start + 1_000)] { session.begin() }
      radio.clock.runUntilIdle()
    }
    precondition(system.waitingSessionCount == count, "every session waits")
    let after = residentBytes()
    first.invalidate()
    for session in made { session.invalidate() }
    radio.clock.runUntilIdle()
    return Double(after - before) / Double(count)
  }

  /// The process's resident memory, from `/proc/self/statm` (0 where there is none).
  static func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
  }

  /// Hands freed heap memory back to the system, so that what is allocated next shows in the resident size.
  static func trimHeap() {
    typealias Trim = @convention(c) (Int) -> Int32
    guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: Trim.self)(0)
  }
}

/// The baselines: the same steps as the sessions take, with bare session objects and closures through a
/// plain FIFO.
private enum PlainFIFO {
  final class BareSession: @unchecked Sendable {
    let id: Int
    weak var delegate: BareDelegate?
    var phase = 0

    init(id: Int, delegate: BareDelegate?) {
      self.id = id
      self.delegate = delegate
    }
  }

  final class BareDelegate {
    var active = 0
    var ended = 0
    func didBecomeActive(_ session: BareSession) { active += 1 }
    func didInvalidate(_ session: BareSession) { ended += 1 }
  }

  /// Sessions one after another: created, then begin, start, polling (active) and invalidate (ended),
  /// each a closure through the FIFO.
  static func run(sessions: Int) {
    let delegate = BareDelegate()
    var queue: [() -> Void] = []
    var head = 0
    func drain() {
      while head < queue.count {
        queue[head]()
        head += 1
      }
      queue.removeAll(keepingCapacity: true)
      head = 0
    }
    for id in 0..<sessions {
      let session = BareSession(id: id, delegate: delegate)
      queue.append { session.phase = 1 }
      queue.append { session.phase = 2 }
      queue.append { session.delegate?.didBecomeActive(session) }
      drain()
      queue.append {
        session.phase = 3
        session.delegate?.didInvalidate(session)
      }
      drain()
    }
    precondition(delegate.ended == sessions, "every session ended")
  }

  /// Sessions begun from many threads into a locked FIFO, then run through it in order: each made
  /// active and ended through two more closures, an observer called for both events.
  static func runConcurrently(sessions: Int) {
    let made = (0..<sessions).map { BareSession(id: $0, delegate: nil) }
    let queue = Locked<[@Sendable () -> Void]>([])
    let events = Atomic<Int>(0)
    let observer: @Sendable (BareSession, Int) -> Void = { _, _ in events.add(1, ordering: .relaxed) }
    DispatchQueue.concurrentPerform(iterations: sessions) { index in
      let session = made[index]
      queue.withLock { $0.append { session.phase = 1 } }
    }
    var line = queue.withLock { $0 }
    for step in line { step() }
    line.removeAll(keepingCapacity: true)
    for session in made {
      line.append {
        session.phase = 2
        observer(session, 1)
      }
      line.append {
        session.phase = 3
        observer(session, 2)
      }
    }
    for step in line { step() }
    precondition(events.load(ordering: .relaxed) == 2 * sessions, "every session became active and ended")
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
