import NFCKit
import ReaderCore
import ReaderSimulator
import Synchronization
import Testing

/// The read loop: its decisions, every one, and the loop running them on the simulator.
@Suite(.timeLimit(.minutes(2))) struct NFCReadLoopTests {
  typealias Decision = NFCReadLoopPolicy.Decision

  /// Codes to decide on: every documented one, and some no system documents.
  static let codes =
    NFCReaderError.Code.allKnown
    + [0, -1, 9, 99, 106, 205, 404, 999, Int.max].map {
      NFCReaderError.Code(rawValue: $0)
    }

  /// The guidance, written out case by case (independently of the policy's switch).
  static func expected(_ code: NFCReaderError.Code, continuous: Bool, busyInARow: Int) -> Decision {
    let error = NFCReaderError(code, "ended")
    switch code.rawValue {
    case 204: return continuous ? .beginNewSession : .finish
    case 201: return .beginNewSession
    case 203: return busyInARow == 0 ? .beginNewSession : .report(error)
    case 200: return .stopQuietly
    default: return .report(error)
    }
  }

  @Test func everyDecisionMatchesTheGuidanceForEveryCodeModeAndBusyCount() {
    var checked = 0
    for code in Self.codes {
      for continuous in [false, true] {
        for busyInARow in 0...4 {
          let decision = NFCReadLoopPolicy.decision(
            after: NFCReaderError(code, "ended"), continuous: continuous, busyInARow: busyInARow)
          #expect(
            decision == Self.expected(code, continuous: continuous, busyInARow: busyInARow),
            "\(code) continuous=\(continuous) busyInARow=\(busyInARow)")
          checked += 1
        }
      }
    }
    #expect(checked == Self.codes.count * 10)
    #expect(NFCReaderError.Code.allKnown.count == 24)
  }

  @Test func aBusySystemIsRetriedOnceAndReportedTheSecondTimeInARow() {
    var policy = NFCReadLoopPolicy()
    let busy = NFCReaderError(.readerSessionInvalidationErrorSystemIsBusy, "busy")
    #expect(policy.decision(after: busy) == .beginNewSession)
    #expect(policy.busyInARow == 1)
    #expect(policy.decision(after: busy) == .report(busy))
  }

  @Test func anyOtherEndBetweenTwoBusyEndsStartsTheCountOver() {
    var policy = NFCReadLoopPolicy(continuous: true)
    let busy = NFCReaderError(.readerSessionInvalidationErrorSystemIsBusy, "busy")
    #expect(policy.decision(after: busy) == .beginNewSession)
    #expect(
      policy.decision(after: NFCReaderError(.readerSessionInvalidationErrorSessionTimeout, "t")) == .beginNewSession)
    #expect(policy.busyInARow == 0)
    #expect(policy.decision(after: busy) == .beginNewSession)
  }

  // MARK: The loop on the simulator

  @Test func aLongContinuousSeriesOfReadsSurvivesTwoTimeouts() {
    let h = NFCHarness(timeout: .seconds(20))
    let read = Box<[NDEFMessage]>()
    let outcome = Box<NFCReadLoop.Outcome>()
    let loop = NFCReadLoop(system: h.system, continuous: true, onMessages: read.put, completion: outcome.put)
    h.radio.add(SimulatedNFCTag(name: "badge", message: NFCHarness.hello))
    loop.start()
    for second in stride(from: 5, to: 50, by: 10) {
      h.clock.advance(to: .seconds(Int64(second)))
      h.radio.present("badge", for: .seconds(2))
    }
    h.clock.advance(to: .seconds(55))
    #expect(read.count == 5, "a read every 10 s for 50 s")
    #expect(loop.sessionsBegun == 3, "timeouts at 20 s and 40 s")
    #expect(
      h.events.all.filter { $0.error?.code == .readerSessionInvalidationErrorSessionTimeout }.map(\.time) == [
        .seconds(20), .seconds(40),
      ])
    #expect(outcome.count == 0)
    loop.stop()
    h.clock.runUntilIdle()
    #expect(outcome.all == [.stopped])
  }

  @Test func aSingleReadFinishesWithTheFirstMessage() {
    let h = NFCHarness()
    let read = Box<[NDEFMessage]>()
    let outcome = Box<NFCReadLoop.Outcome>()
    let loop = NFCReadLoop(system: h.system, onMessages: read.put, completion: outcome.put)
    h.radio.present(SimulatedNFCTag(name: "badge", message: NFCHarness.hello))
    loop.start()
    h.run(.seconds(2))
    #expect(read.all == [[NFCHarness.hello]])
    #expect(outcome.all == [.finished])
    #expect(loop.sessionsBegun == 1)
  }

  @Test func aBusySystemIsRetriedOnceAndTheRetryReads() {
    let h = NFCHarness()
    h.radio.setHeldByAnotherApp(true)
    // The other app lets go as soon as the first attempt is refused.
    h.system.addEventObserver { [radio = h.radio] event in
      if event.error?.code == .readerSessionInvalidationErrorSystemIsBusy { radio.setHeldByAnotherApp(false) }
    }
    let read = Box<[NDEFMessage]>()
    let outcome = Box<NFCReadLoop.Outcome>()
    let loop = NFCReadLoop(system: h.system, onMessages: read.put, completion: outcome.put)
    h.radio.present(SimulatedNFCTag(name: "badge", message: NFCHarness.hello))
    loop.start()
    h.run(.seconds(2))
    #expect(loop.sessionsBegun == 2)
    #expect(outcome.all == [.finished])
  }

  @Test func aSystemBusyTwiceInARowIsReported() {
    let h = NFCHarness()
    h.radio.setHeldByAnotherApp(true)
    let outcome = Box<NFCReadLoop.Outcome>()
    let loop = NFCReadLoop(system: h.system, onMessages: { _ in }, completion: outcome.put)
    loop.start()
    h.run(.seconds(2))
    #expect(loop.sessionsBegun == 2)
    guard case .failed(let error)? = outcome.last else {
      Issue.record("\(outcome.all)")
      return
    }
    #expect(error.code == .readerSessionInvalidationErrorSystemIsBusy)
    #expect(outcome.count == 1)
  }

  @Test func aUserCancelStopsQuietly() {
    let h = NFCHarness()
    let outcome = Box<NFCReadLoop.Outcome>()
    let loop = NFCReadLoop(system: h.system, continuous: true, onMessages: { _ in }, completion: outcome.put)
    loop.start()
    h.run(.seconds(1))
    h.radio.tapCancel()
    h.run(.seconds(1))
    #expect(outcome.all == [.stopped])
    #expect(loop.sessionsBegun == 1)
  }

  @Test func anUnexpectedTerminationIsReported() {
    let h = NFCHarness()
    let outcome = Box<NFCReadLoop.Outcome>()
    let loop = NFCReadLoop(system: h.system, continuous: true, onMessages: { _ in }, completion: outcome.put)
    loop.start()
    h.run(.seconds(1))
    h.radio.terminateSessions()
    h.run(.seconds(1))
    guard case .failed(let error)? = outcome.last, outcome.count == 1 else {
      Issue.record("\(outcome.all)")
      return
    }
    #expect(error.code == .readerSessionInvalidationErrorSessionTerminatedUnexpectedly)
  }

  @Test func theMessagesSequenceYieldsEachReadAndFinishesWhenTheLoopDoes() async throws {
    let h = NFCHarness()
    h.radio.present(SimulatedNFCTag(name: "badge", message: NFCHarness.poster))
    let driver = RealTimeDriver(clock: h.clock, speed: 50)
    driver.start()
    var read: [[NDEFMessage]] = []
    for try await messages in NFCReadLoop.messages(system: h.system) { read.append(messages) }
    await driver.stop()
    #expect(read == [[NFCHarness.poster]])
  }
}
