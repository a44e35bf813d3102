import Dispatch
import Foundation
import NFCKit
import PCSCKit
import PCSCTestSupport
import ReaderCore
import TestSupport
import Testing

/// Sessions through the real pcsc-lite and pcscd, with virtual tags (`virtual_tag.py`) in vpcd's
/// readers: what the simulated PC/SC service stands for, checked against the daemon. They skip (one
/// line) where pcscd with vpcd is not running, and fail instead under `READERKIT_CI=1`.
///
/// One parameterized test, so that a host without pcscd prints one line; its cases run one at a time.
@Suite(.timeLimit(.minutes(1)), .serialized)
struct PCSCDaemonTests {
  enum Scenario: String, CaseIterable, CustomTestStringConvertible {
    case readsType4AndType2, writesReadsBackAndLocks, brokenTagsFailClearly, secondLineHolderWaits
    case cancelEndsABlockedWait, tagHeldElsewhereIsBusy, readLoopReadsCardAfterCard
    var testDescription: String { rawValue }
  }

  @Test(.enabled(if: VPCD.enabled, pcscdSkipNote), arguments: Scenario.allCases)
  func throughPcscd(_ scenario: Scenario) async throws {
    try await VPCD.exclusively {
      switch scenario {
      case .readsType4AndType2: try type4AndType2TagsAreReadThroughPcscd()
      case .writesReadsBackAndLocks: try tagsAreWrittenReadBackAndLocked()
      case .brokenTagsFailClearly: try brokenTagsFailWithClearErrorsAndReadingGoesOn()
      case .secondLineHolderWaits: try aSecondSessionInAnotherLineHolderWaitsForTheFirst()
      case .cancelEndsABlockedWait: try cancelEndsABlockedStatusWaitAtOnce()
      case .tagHeldElsewhereIsBusy: try aTagHeldByAnotherProgramEndsTheSessionAsBusy()
      case .readLoopReadsCardAfterCard: try aReadLoopReadsCardAfterCard()
      }
    }
  }

  static var hello: NDEFMessage { fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .text("hello")) } }
  static var poster: NDEFMessage {
    fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .uri("https://example.com/poster")) }
  }

  func type4AndType2TagsAreReadThroughPcscd() throws {
    let cards = try VirtualCards.shared.get()
    let live = try LiveSystem()
    let session = live.readSession(continuous: true)
    session.begin()
    try cards.present(VirtualCards.type4(Self.hello.encoded()))
    let first = try live.waitFor("didDetectNDEFs")
    try cards.present(VirtualCards.type2(Self.poster.encoded()))
    try live.waitFor("didDetectNDEFs", after: first)
    session.invalidate()
    _ = try live.waitFor("didInvalidateWithError")
    #expect(live.messages == [Self.hello, Self.poster])
  }

  func tagsAreWrittenReadBackAndLocked() throws {
    let cards = try VirtualCards.shared.get()
    for (card, family) in [(VirtualCards.type4([]), "Type 4"), (VirtualCards.type2([]), "Type 2")] {
      // The card first: a session begun before it would meet the last card, which pcscd may not
      // have seen leave yet.
      try cards.present(card)
      let live = try LiveSystem()
      let writer = Writer(message: Self.poster)
      let session = NFCNDEFReaderSession(delegate: writer, invalidateAfterFirstRead: false, system: live.system)
      session.begin()
      #expect(writer.done.wait(timeout: .now() + 10) == .success, "\(family): the writer did not finish")
      #expect(
        writer.steps.all == [
          "write ok", "read true", "lock ok", "status readOnly", "write ndefReaderSessionErrorTagNotWritable",
        ], "\(family)")
      session.invalidate()
      let state = try cards.state()
      #expect(state["message"] as? String == VirtualCards.hex(Self.poster.encoded()), "\(family)")
      if let writeAccess = state["writeAccess"] as? Int {
        #expect(writeAccess == 0xFF, "\(family): the capability container's write access")
      } else {
        #expect((state["access"] as? Int).map { $0 & 0x0F } == 0x0F, "\(family): the capability container's access")
      }
    }
  }

  func brokenTagsFailWithClearErrorsAndReadingGoesOn() throws {
    let cards = try VirtualCards.shared.get()
    let live = try LiveSystem()
    let session = live.readSession(continuous: true)
    session.begin()
    let broken: [(card: [String: Any], code: NFCReaderError.Code, check: (NFCReaderError) -> Bool)] = [
      (VirtualCards.type4([]), .ndefReaderSessionErrorZeroLengthMessage, { _ in true }),
      (VirtualCards.type2(nil), .readerTransceiveErrorTagResponseError, { $0.context["reason"] == "notNDEFFormatted" }),
      (
        VirtualCards.type4(Self.hello.encoded(), ["refuse": ["B0": "6F00"]]), .readerTransceiveErrorTagResponseError,
        { $0.cause == .statusWord(0x6F00) }
      ),
      (
        VirtualCards.type4(Self.hello.encoded(), ["nlen": 5000, "fileSize": 256]),
        .readerTransceiveErrorTagResponseError,
        { $0.context["reason"] == "malformedTag" }
      ),
      (
        VirtualCards.type4(Array(repeating: 0x41, count: 1200), ["leaveAfter": 6, "mle": 64]),
        .readerTransceiveErrorTagConnectionLost, { _ in true }
      ),
      (
        VirtualCards.type4(Self.hello.encoded(), ["stallAfter": 3]), .readerTransceiveErrorTagConnectionLost,
        { $0.context["reason"] == "tagStoppedAnswering" }
      ),
    ]
    var last: Int?
    for (card, code, check) in broken {
      try cards.present(card)
      last = try live.waitFor("didFailToReadNDEF", after: last)
      let error = try #require(live.events[last!].error)
      #expect(error.code == code, "\(card)")
      #expect(check(error), "\(card): \(error)")
      try cards.remove()
    }
    try cards.present(VirtualCards.type4(Self.hello.encoded()))
    _ = try live.waitFor("didDetectNDEFs", after: last)
    session.invalidate()
  }

  func aSecondSessionInAnotherLineHolderWaitsForTheFirst() throws {
    let cards = try VirtualCards.shared.get()
    let lockDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("readerkit-line-\(UUID())").path
    defer { try? FileManager.default.removeItem(atPath: lockDirectory) }
    let first = try LiveSystem(lockDirectory: lockDirectory)
    let second = try LiveSystem(lockDirectory: lockDirectory)
    first.readSession().begin()
    _ = try first.waitFor("didBecomeActive")
    second.readSession().begin()
    #expect(throws: LiveSystem.Timeout.self) { try second.waitFor("didBecomeActive", timeout: 0.5) }
    try cards.present(VirtualCards.type4(Self.hello.encoded()))
    _ = try first.waitFor("didInvalidateWithError")
    _ = try second.waitFor("didBecomeActive")
    _ = try second.waitFor("didInvalidateWithError")
    #expect(first.messages == [Self.hello])
    #expect(second.messages == [Self.hello])
  }

  func cancelEndsABlockedStatusWaitAtOnce() throws {
    let scheduler = LiveScheduler<ContinuousClock>(label: "test.cancel")
    let service = try LivePCSCService.system(scheduler: scheduler).get()
    let now = try service.probe().get().map { PCSCReaderState(name: $0.name, currentState: $0.eventState) }
    let ended = DispatchSemaphore(value: 0)
    let result = Locked<Result<[PCSCReaderState], PCSCError>?>(nil)
    let start = ContinuousClock.now
    service.waitForChange(now, timeout: .seconds(20)) { outcome in
      result.withLock { $0 = outcome }
      ended.signal()
    }
    #expect(ended.wait(timeout: .now() + 0.3) == .timedOut, "the wait did not block")
    service.cancelWait()
    #expect(ended.wait(timeout: .now() + 5) == .success)
    #expect(ContinuousClock.now - start < .seconds(3))
    #expect(result.withLock { $0 } == .failure(PCSCError("SCardGetStatusChange", .cancelled)))
  }

  func aTagHeldByAnotherProgramEndsTheSessionAsBusy() throws {
    let cards = try VirtualCards.shared.get()
    try cards.present(VirtualCards.type4(Self.hello.encoded()))
    let other = try LivePCSCService.system(scheduler: LiveScheduler(label: "test.other")).get()
    let held = DispatchSemaphore(value: 0)
    let card = Locked<PCSCCard?>(nil)
    // Another program: its own context, the card connected exclusively once vpcd has it.
    let deadline = ContinuousClock.now + .seconds(5)
    while card.withLock({ $0 }) == nil, ContinuousClock.now < deadline {
      other.connect(VirtualCards.firstReader) { result in
        card.withLock { $0 = try? result.get() }
        held.signal()
      }
      held.wait()
      if card.withLock({ $0 }) == nil { _ = held.wait(timeout: .now() + 0.1) }
    }
    let holding = try #require(card.withLock { $0 })
    defer { other.disconnect(holding) }
    let live = try LiveSystem(busyTimeout: .seconds(1))
    live.readSession().begin()
    let end = try live.waitFor("didInvalidateWithError", timeout: 5)
    #expect(live.events[end].error?.code == .readerSessionInvalidationErrorSystemIsBusy)
    #expect(live.events[end].error?.cause == .pcsc(PCSCCode.sharingViolation.rawValue))
  }

  func aReadLoopReadsCardAfterCard() throws {
    let cards = try VirtualCards.shared.get()
    let live = try LiveSystem()
    let loop = NFCReadLoop(system: live.system, continuous: true, onMessages: { _ in }, completion: { _ in })
    loop.start()
    var last: Int?
    let messages = (0..<4).map { index in fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .text("card \(index)")) } }
    for message in messages {
      try cards.present(VirtualCards.type4(message.encoded()))
      last = try live.waitFor("didDetectNDEFs", after: last)
    }
    loop.stop()
    #expect(live.messages == messages)
  }
}

/// The one line the daemon tests print when they skip.
let pcscdSkipNote = Comment(rawValue: VPCD.skipNote)

/// A reader system on the host's pcsc-lite, in real time (on a thread of its own, see `ThreadScheduler`),
/// with a private session line and its events.
final class LiveSystem: Sendable {
  struct Timeout: Error, CustomStringConvertible {
    let description: String
  }

  let system: NFCReaderSystem
  private let log = Locked<[NFCReaderEvent]>([])
  private let signal = DispatchSemaphore(value: 0)

  init(lockDirectory: String? = nil, busyTimeout: Duration = .seconds(2)) throws {
    var configuration = NFCSystemConfiguration(environment: [:])
    configuration.lockDirectory =
      lockDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("readerkit-line-\(UUID())").path
    configuration.commandTimeout = .milliseconds(500)
    configuration.busyTimeout = busyTimeout
    configuration.reader = VirtualCards.firstReader
    let scheduler = ThreadScheduler(label: "test.pcscd")
    guard let radio = PCSCNFCRadio(configuration: configuration, scheduler: scheduler) else {
      throw Timeout(description: "libpcsclite cannot be loaded")
    }
    system = NFCReaderSystem(radio: radio, scheduler: scheduler)
    system.addEventObserver { [weak self] event in
      self?.log.withLock { $0.append(event) }
      self?.signal.signal()
    }
  }

  var events: [NFCReaderEvent] { log.withLock { $0 } }

  var messages: [NDEFMessage] {
    events.flatMap { event -> [NDEFMessage] in
      if case .didDetectNDEFs(let messages) = event.kind { return messages }
      return []
    }
  }

  func readSession(continuous: Bool = false) -> NFCNDEFReaderSession {
    NFCNDEFReaderSession(invalidateAfterFirstRead: !continuous, system: system)
  }

  /// Waits (at most `timeout` seconds) for an event named `name` after index `after`; returns its index.
  @discardableResult
  func waitFor(_ name: String, after: Int? = nil, timeout: Double = 10) throws -> Int {
    let deadline = DispatchTime.now() + timeout
    while true {
      let found = events.indices.first { index in index > (after ?? -1) && events[index].name == name }
      if let found { return found }
      if signal.wait(timeout: deadline) == .timedOut {
        throw Timeout(description: "no \(name) within \(timeout) s; events: \(events.map(\.name))")
      }
    }
  }
}

/// A read-write session's app: writes, reads back, locks, asks the status, tries to write again.
final class Writer: NFCNDEFReaderSessionTagDelegate {
  let message: NDEFMessage
  let steps = Box<String>()
  let done = DispatchSemaphore(value: 0)

  init(message: NDEFMessage) { self.message = message }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}

  func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
    let tag = tags[0]
    let (steps, done, message) = (steps, done, message)
    @Sendable func outcome(_ error: (any Error)?) -> String {
      error.map { "\(($0 as? NFCReaderError)?.code.description ?? "\($0)")" } ?? "ok"
    }
    session.connect(to: tag) { _ in
      tag.writeNDEF(message) { error in
        steps.put("write \(outcome(error))")
        tag.readNDEF { read, _ in
          steps.put("read \(read.flatMap { try? NDEFMessage($0) } == message)")
          tag.writeLock { error in
            steps.put("lock \(outcome(error))")
            tag.queryNDEFStatus { status, _, _ in
              steps.put("status \(status)")
              tag.writeNDEF(message) { error in
                steps.put("write \(outcome(error))")
                done.signal()
              }
            }
          }
        }
      }
    }
  }
}
