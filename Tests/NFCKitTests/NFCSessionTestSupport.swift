import Dispatch
import NFCKit
import ReaderCore
import ReaderSimulator
import Synchronization
import TestSupport
import Testing

/// A delegate call as a test sees it.
enum DelegateCall: Equatable, CustomStringConvertible {
  case didBecomeActive
  case didDetectNDEFs([NDEFMessage])
  case didDetectTags(Int)
  case didFailToReadNDEF(NFCReaderError.Code)
  case didInvalidate(NFCReaderError.Code)

  var description: String {
    switch self {
    case .didBecomeActive: "didBecomeActive"
    case .didDetectNDEFs(let messages): "didDetectNDEFs(\(messages.count))"
    case .didDetectTags(let count): "didDetectTags(\(count))"
    case .didFailToReadNDEF(let code): "didFailToReadNDEF(\(code))"
    case .didInvalidate(let code): "didInvalidate(\(code))"
    }
  }
}

/// Records every delegate call of a read-only session, with the queue it arrived on; runs the
/// reactions a test installs.
final class ReadDelegate: NFCNDEFReaderSessionDelegate, Sendable {
  let calls = Locked<[DelegateCall]>([])
  let errors = Locked<[NFCReaderError]>([])
  let wrongQueue = Atomic<Int>(0)
  let expectedQueue = Locked<DispatchQueue?>(nil)
  let onActive = Locked<(@Sendable (NFCNDEFReaderSession) -> Void)?>(nil)
  let onMessages = Locked<(@Sendable (NFCNDEFReaderSession) -> Void)?>(nil)

  var recorded: [DelegateCall] { calls.withLock { $0 } }

  func record(_ call: DelegateCall, _ session: NFCNDEFReaderSession) {
    if let queue = expectedQueue.withLock({ $0 }) {
      // Off the queue a `sync` onto it would deadlock only if we were on it; this checks placement.
      if DispatchQueue.getSpecific(key: queueKey) != ObjectIdentifier(queue).hashValue {
        wrongQueue.add(1, ordering: .relaxed)
      }
    }
    calls.withLock { $0.append(call) }
  }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    guard let error = error as? NFCReaderError else {
      Issue.record("a session was invalidated with \(type(of: error)), not an NFCReaderError: \(error)")
      return
    }
    errors.withLock { $0.append(error) }
    record(.didInvalidate(error.code), session)
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
    record(.didDetectNDEFs(messages.compactMap { try? NDEFMessage($0) }), session)
    onMessages.withLock { $0 }?(session)
  }

  func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) {
    record(.didBecomeActive, session)
    onActive.withLock { $0 }?(session)
  }

  func readerSession(_ session: NFCNDEFReaderSession, didFailToReadNDEF error: NFCReaderError) {
    errors.withLock { $0.append(error) }
    record(.didFailToReadNDEF(error.code), session)
  }
}

/// Records a read-write session's calls and keeps the tags it was given.
final class TagDelegate: NFCNDEFReaderSessionTagDelegate, Sendable {
  let calls = Locked<[DelegateCall]>([])
  let tags = Locked<[NFCNDEFTag]>([])
  let errors = Locked<[NFCReaderError]>([])
  let onTags = Locked<(@Sendable (NFCNDEFReaderSession, [NFCNDEFTag]) -> Void)?>(nil)

  var recorded: [DelegateCall] { calls.withLock { $0 } }
  var lastTag: NFCNDEFTag? { tags.withLock { $0.last } }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    guard let error = error as? NFCReaderError else {
      Issue.record("a session was invalidated with \(type(of: error)), not an NFCReaderError: \(error)")
      return
    }
    errors.withLock { $0.append(error) }
    calls.withLock { $0.append(.didInvalidate(error.code)) }
  }

  func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) {
    calls.withLock { $0.append(.didBecomeActive) }
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
    self.tags.withLock { $0 += tags }
    calls.withLock { $0.append(.didDetectTags(tags.count)) }
    onTags.withLock { $0 }?(session, tags)
  }
}

/// Tags the test queues with an identity `getSpecific` can report.
let queueKey = DispatchSpecificKey<Int>()

/// A serial queue that knows itself: `DispatchQueue.getSpecific(key: queueKey)` inside it returns its id.
func identifiedQueue(_ label: String) -> DispatchQueue {
  let queue = DispatchQueue(label: label)
  queue.setSpecific(key: queueKey, value: ObjectIdentifier(queue).hashValue)
  return queue
}

/// The `NFCReaderError` a completion handler reported as `any Error` (Core NFC's type); records an issue
/// when it is of another type.
func readerError(_ error: (any Error)?, sourceLocation: SourceLocation = #_sourceLocation) -> NFCReaderError? {
  guard let error else { return nil }
  guard let readerError = error as? NFCReaderError else {
    Issue.record("\(error) is not an NFCReaderError", sourceLocation: sourceLocation)
    return nil
  }
  return readerError
}

/// Collects what a completion handler reports, from any thread.
final class Box<T: Sendable>: Sendable {
  private let values = Locked<[T]>([])
  func put(_ value: T) { values.withLock { $0.append(value) } }
  var all: [T] { values.withLock { $0 } }
  var last: T? { all.last }
  var count: Int { all.count }
}

/// A reader system on the simulator, with its event log.
struct NFCHarness {
  let system: NFCReaderSystem
  let radio: SimulatedNFCRadio
  let events = Box<NFCReaderEvent>()
  var clock: VirtualClock { radio.clock }

  static var hello: NDEFMessage { fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .text("hello")) } }
  static var poster: NDEFMessage {
    fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .uri("https://example.com/poster")) }
  }

  init(
    seed: UInt64 = 1, timeout: Duration? = .seconds(60), whenBusy: NFCSystemPolicy.BusyBehavior = .queue,
    timing: SimulatedNFCRadio.Timing = SimulatedNFCRadio.Timing(), readingAvailable: Bool = true
  ) {
    let clock = VirtualClock()
    radio = SimulatedNFCRadio(
      clock: clock, seed: seed, policy: NFCSystemPolicy(sessionTimeout: timeout, whenBusy: whenBusy),
      isReadingAvailable: readingAvailable, timing: timing)
    system = NFCReaderSystem(radio: radio, scheduler: clock)
    system.addEventObserver { [events] in events.put($0) }
  }

  func readSession(
    _ delegate: ReadDelegate, firstReadOnly: Bool = true, queue: DispatchQueue? = nil
  ) -> NFCNDEFReaderSession {
    NFCNDEFReaderSession(delegate: delegate, queue: queue, invalidateAfterFirstRead: firstReadOnly, system: system)
  }

  func tagSession(_ delegate: TagDelegate) -> NFCNDEFReaderSession {
    NFCNDEFReaderSession(delegate: delegate, queue: nil, invalidateAfterFirstRead: false, system: system)
  }

  /// The names of the events of `session`, in order.
  func names(_ session: NFCNDEFReaderSession) -> [String] {
    events.all.filter { $0.session == session.identifier }.map(\.name)
  }

  /// Runs the simulation for `duration`.
  func run(_ duration: Duration) { clock.advance(by: duration) }

  /// Runs the simulation by `step` until `condition` holds, for at most `limit`; returns whether it held.
  /// By steps rather than until the clock reads the end: a clock that stops moving fails the test.
  func run(until condition: () -> Bool, limit: Duration = .seconds(60), step: Duration = .milliseconds(1)) -> Bool {
    for _ in 0..<Int((limit / step).rounded(.up)) {
      if condition() { return true }
      clock.advance(by: step)
    }
    return condition()
  }
}
