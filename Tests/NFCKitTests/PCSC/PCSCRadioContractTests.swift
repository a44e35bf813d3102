import Foundation
import NFCKit
import PCSCKit
import ReaderCore
import ReaderSimulator
import Testing

/// The radio contract, checked on the PC/SC radio itself: rounds, presentations, every command answered
/// once, commands on a tag that leaves failed before it is reported removed. And the system's one
/// session across processes.
@Suite struct PCSCRadioContractTests {
  /// A PC/SC radio on its own, its events collected.
  final class Bench: Sendable {
    let clock = VirtualClock()
    let service: SimulatedPCSCService
    let radio: PCSCNFCRadio
    let events = Box<NFCRadioEvent>()

    init(
      configuration: NFCSystemConfiguration = PCSCHarness.configuration(),
      lock: any NFCSessionLock = MemorySessionLock()
    ) {
      service = SimulatedPCSCService(clock: clock)
      radio = PCSCNFCRadio(service: service, lock: lock, configuration: configuration, scheduler: clock)
      radio.setEventHandler { [events] in events.put($0) }
    }

    func request(_ sequence: UInt64) -> NFCRadioRequestID { NFCRadioRequestID(session: 1, sequence: sequence) }

    var detected: [NFCRadioTagID] {
      events.all.flatMap { event -> [NFCRadioTagID] in
        if case .tagsDetected(_, let tags) = event { return tags }
        return []
      }
    }
  }

  @Test func aTagTakenAwayDuringACommandFailsItBeforeItIsReportedRemoved() {
    let bench = Bench()
    bench.service.plug(PCSCHarness.reader)
    bench.service.present(SimulatedType4Tag(message: pattern(2_000)), in: PCSCHarness.reader)
    let round = bench.request(1)
    bench.radio.startPolling(round)
    bench.clock.advance(by: .milliseconds(100))
    guard let tag = bench.detected.first else {
      Issue.record("no tag detected: \(bench.events.all)")
      return
    }
    bench.radio.readNDEF(from: tag, request: bench.request(2))
    bench.radio.queryNDEFStatus(of: tag, request: bench.request(3))
    bench.clock.advance(by: .milliseconds(3))
    bench.service.removeCard(from: PCSCHarness.reader)
    bench.clock.advance(by: .milliseconds(100))
    let tail = bench.events.all.filter {
      if case .pollingStarted = $0 { return false }
      if case .tagsDetected = $0 { return false }
      return true
    }
    #expect(tail.count == 3)
    guard tail.count == 3 else { return }
    #expect(Self.isTagLost(tail[0], bench.request(2)))
    #expect(Self.isTagLost(tail[1], bench.request(3)))
    #expect(tail[2] == .tagRemoved(round, tag))
  }

  @Test func aTagPresentedAgainIsANewTag() {
    let bench = Bench()
    bench.service.plug(PCSCHarness.reader)
    bench.radio.startPolling(bench.request(1))
    for _ in 0..<3 {
      bench.service.present(SimulatedType4Tag(message: pattern(4)), in: PCSCHarness.reader)
      bench.clock.advance(by: .milliseconds(50))
      bench.service.removeCard(from: PCSCHarness.reader)
      bench.clock.advance(by: .milliseconds(50))
    }
    #expect(bench.detected == [NFCRadioTagID(1), NFCRadioTagID(2), NFCRadioTagID(3)])
  }

  @Test func stoppingARoundReleasesItsCardsAndAnswersNothingMore() {
    let bench = Bench()
    bench.service.plug(PCSCHarness.reader)
    bench.service.present(SimulatedType4Tag(message: pattern(4)), in: PCSCHarness.reader)
    bench.radio.startPolling(bench.request(1))
    bench.clock.advance(by: .milliseconds(50))
    let before = bench.events.count
    bench.radio.readNDEF(from: NFCRadioTagID(1), request: bench.request(2))
    bench.radio.stopPolling(bench.request(1))
    bench.clock.advance(by: .seconds(3))
    #expect(bench.events.count == before)
    #expect(bench.service.calls.contains("cancelWait"))
    // A new round finds the card free again.
    bench.radio.startPolling(bench.request(3))
    bench.clock.advance(by: .milliseconds(50))
    #expect(bench.detected.count == 2)
  }

  @Test func aSecondProcessWaitsForTheFirstSessionThenReads() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readerkit-lock-\(UUID())").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let clock = VirtualClock()
    let service = SimulatedPCSCService(clock: clock)
    let first = PCSCHarness(clock: clock, service: service, lock: FileSessionLock(directory: directory))
    let second = PCSCHarness(clock: clock, service: service, lock: FileSessionLock(directory: directory))
    service.plug(PCSCHarness.reader)
    let one = ReadDelegate()
    let two = ReadDelegate()
    first.readSession(one).begin()
    clock.advance(by: .milliseconds(10))
    second.readSession(two).begin()
    clock.advance(by: .seconds(2))
    #expect(one.recorded == [.didBecomeActive])
    #expect(two.recorded == [])
    service.present(SimulatedType4Tag(message: PCSCHarness.hello.encoded()), in: PCSCHarness.reader)
    clock.advance(by: .milliseconds(100))
    #expect(one.recorded.last == .didInvalidate(.readerSessionInvalidationErrorFirstNDEFTagRead))
    // The second process's turn comes as the first session ends; the tag still lies on the reader.
    #expect(
      two.recorded == [
        .didBecomeActive, .didDetectNDEFs([PCSCHarness.hello]),
        .didInvalidate(.readerSessionInvalidationErrorFirstNDEFTagRead),
      ])
  }

  @Test func aSecondProcessIsRefusedAsBusyWhenThePolicySaysSo() {
    let line = MemoryLine()
    let clock = VirtualClock()
    let service = SimulatedPCSCService(clock: clock)
    let refusing = PCSCHarness.configuration(whenBusy: .refuse)
    let first = PCSCHarness(
      clock: clock, service: service, configuration: refusing, lock: MemorySessionLock(line: line))
    let second = PCSCHarness(
      clock: clock, service: service, configuration: refusing, lock: MemorySessionLock(line: line))
    service.plug(PCSCHarness.reader)
    let one = ReadDelegate()
    let two = ReadDelegate()
    first.readSession(one).begin()
    clock.advance(by: .milliseconds(10))
    second.readSession(two).begin()
    clock.advance(by: .milliseconds(10))
    #expect(two.recorded == [.didInvalidate(.readerSessionInvalidationErrorSystemIsBusy)])
    #expect(two.errors.withLock { $0.last?.context["reason"] } == "sessionInAnotherProcess")
    #expect(line.holders.withLock { $0.count } == 1)
  }

  @Test func aSessionWaitingForAnotherProcessEndsAtItsTimeLimitAndLeavesTheLine() {
    let line = MemoryLine()
    let clock = VirtualClock()
    let service = SimulatedPCSCService(clock: clock)
    let holder = MemorySessionLock(line: line, name: "other")
    _ = holder.tryAcquire()
    let waiting = MemorySessionLock(line: line)
    let h = PCSCHarness(
      clock: clock, service: service, configuration: PCSCHarness.configuration(timeout: .seconds(3)), lock: waiting)
    service.plug(PCSCHarness.reader)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    clock.advance(by: .seconds(3))
    #expect(delegate.recorded == [.didInvalidate(.readerSessionInvalidationErrorSessionTimeout)])
    #expect(line.holders.withLock { $0 } == [ObjectIdentifier(holder)])
    #expect(clock.checkNoPendingWork() == nil)
  }

  /// Random worlds: readers and cards come and go, cards leave mid-command or stop answering, pcscd
  /// stops, while commands are issued at random. Every command is answered at most once, and exactly
  /// once unless its round ended; a tag's commands are answered before it is reported removed; nothing
  /// is answered for a tag after its removal.
  @Test(arguments: 0..<24 as Range<UInt64>)
  func randomWorldsKeepTheRadioContract(seed: UInt64) {
    let bench = Bench()
    var random = SeededRandom(seed: seed &+ 0x5EED)
    let readers = [PCSCHarness.reader, PCSCHarness.second]
    var round = bench.request(1)
    var sequence: UInt64 = 1
    var issued: [NFCRadioRequestID: NFCRadioTagID] = [:]
    /// Requests issued on a tag whose removal had been reported already: answered at once, after it.
    var late: Set<NFCRadioRequestID> = []
    var roundOf: [NFCRadioRequestID: NFCRadioRequestID] = [:]
    bench.radio.startPolling(round)
    for _ in 0..<300 {
      switch random.next() % 12 {
      case 0: bench.service.plug(readers[Int(random.next() % 2)])
      case 1: bench.service.unplug(readers[Int(random.next() % 2)])
      case 2, 3:
        let card: any SimulatedSmartCard =
          random.next() % 2 == 0
          ? SimulatedType4Tag(message: pattern(Int(random.next() % 600)))
          : SimulatedType2Tag.ntag216(message: pattern(Int(random.next() % 600)))
        bench.service.present(card, in: readers[Int(random.next() % 2)])
      case 4: bench.service.removeCard(from: readers[Int(random.next() % 2)])
      case 5: bench.service.cutNextCommand(in: readers[Int(random.next() % 2)])
      case 6 where random.next() % 4 == 0: bench.service.stall(readers[Int(random.next() % 2)])
      case 7 where random.next() % 6 == 0:
        bench.service.stop()
        bench.clock.advance(by: .milliseconds(5))
        bench.service.start()
      case 8 where random.next() % 5 == 0:
        bench.radio.stopPolling(round)
        sequence += 1
        round = bench.request(sequence)
        bench.radio.startPolling(round)
      default:
        let tags = bench.detected
        guard !tags.isEmpty else { break }
        let tag = tags[Int(random.next() % UInt64(tags.count))]
        sequence += 1
        let request = bench.request(sequence)
        issued[request] = tag
        roundOf[request] = round
        if bench.events.all.contains(.tagRemoved(round, tag)) || !bench.events.all.contains(.tagsDetected(round, [tag]))
        {
          late.insert(request)
        }
        switch random.next() % 4 {
        case 0: bench.radio.readNDEF(from: tag, request: request)
        case 1: bench.radio.queryNDEFStatus(of: tag, request: request)
        case 2: bench.radio.writeNDEF(pattern(Int(random.next() % 200)), to: tag, request: request)
        default: bench.radio.connect(to: tag, request: request)
        }
      }
      bench.clock.advance(by: .milliseconds(Int64(random.next() % 400)))
    }
    bench.radio.stopPolling(round)
    bench.clock.advance(by: .seconds(5))

    var answered: [NFCRadioRequestID: Int] = [:]
    var removed: Set<NFCRadioTagID> = []
    var ended: Set<NFCRadioRequestID> = []
    for event in bench.events.all {
      switch event {
      case .response(let request, _):
        answered[request, default: 0] += 1
        if let tag = issued[request], !late.contains(request) {
          #expect(!removed.contains(tag), "seed \(seed): \(request) answered after \(tag) was removed")
        }
      case .tagRemoved(_, let tag):
        removed.insert(tag)
      case .pollingFailed(let failedRound, _):
        ended.insert(failedRound)
      default:
        break
      }
    }
    for (request, count) in answered { #expect(count == 1, "seed \(seed): \(request) answered \(count) times") }
    for request in issued.keys where answered[request] == nil {
      // Unanswered only when its round ended (stopped, or failed) before the answer.
      let ownRound = roundOf[request]!
      #expect(ownRound != round || ended.contains(ownRound), "seed \(seed): \(request) never answered")
    }
  }

  private static func isTagLost(_ event: NFCRadioEvent, _ request: NFCRadioRequestID) -> Bool {
    guard case .response(request, .failed(let failure)) = event else { return false }
    if case .tagLost = failure { return true }
    if case .detailed(.tagLost, _, _, _) = failure { return true }
    return false
  }
}

/// A message of `count` bytes.
func pattern(_ count: Int) -> [UInt8] {
  (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
}
