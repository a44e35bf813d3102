import Testing

@testable import ReaderCore

/// Reconnect at launch decides at its timeout on every reader heard up to that moment, whatever the
/// order in which a busy host delivers the timeout, the discovery's ticks and the advertisements.
@Suite struct TerminalStateMachineLaunchTimeoutTests {
  typealias Action = TerminalStateMachine.Action
  static let serial = "STRM2-0001"
  static let saved = SavedReader(serialNumber: serial, locationId: "tml_1", deviceType: .stripeM2, simulated: true)
  static let advertisement = Advertisement(
    serialNumber: serial, deviceType: .stripeM2, signalStrength: -40, info: ReaderInfo(deviceSoftwareVersion: "2.3.1"))

  /// A terminal whose launch (job 1, a 10 s search) loaded the saved reader at 0 s and searches for it.
  static func searching() -> TerminalStateMachine {
    var machine = TerminalStateMachine(seed: 1)
    _ = machine.handle(.submit(1, .launch(timeout: .seconds(10), autoReconnect: true)), now: .zero)
    _ = machine.handle(.savedReaderLoaded(.success(saved)), now: .zero)
    return machine
  }

  static func reports(_ actions: [Action]) -> [TerminalEvent.Kind] {
    actions.compactMap { if case .report(let kind, _) = $0 { kind } else { nil } }
  }

  static func completed(_ actions: [Action]) -> Bool {
    actions.contains { if case .complete = $0 { true } else { false } }
  }

  @Test func aReaderHeardAfterTheLastTickAndBeforeTheTimeoutCountsAtTheTimeout() {
    var machine = Self.searching()
    #expect(Self.reports(machine.handle(.timerFired(.discovery(.tick)), now: .milliseconds(9_500))) == [])
    _ = machine.handle(.bluetooth(.advertisement(Self.advertisement)), now: .milliseconds(9_900))
    let timeout = machine.handle(.timerFired(.launchTimeout), now: .seconds(10))
    #expect(Self.reports(timeout).contains { if case .didFindSavedReader = $0 { true } else { false } })
    #expect(timeout.contains(.openLink(serialNumber: Self.serial)))
    #expect(!Self.completed(timeout), "it connects instead of failing")
  }

  @Test func aReaderHeardBeforeTheDeadlineButDeliveredAfterItStillCountsWhenTheTimeoutRunsLate() {
    // On a busy host the timeout due at 10 s and the input that lists the reader both run late, the
    // timeout after the input and before any tick: the reader heard up to the timeout counts.
    var machine = Self.searching()
    _ = machine.handle(.bluetooth(.advertisement(Self.advertisement)), now: .seconds(12))
    let timeout = machine.handle(.timerFired(.launchTimeout), now: .seconds(12))
    #expect(timeout.contains(.openLink(serialNumber: Self.serial)))
    #expect(timeout.contains(.disarm(.launchTimeout)))
    #expect(!Self.completed(timeout))
    _ = machine.handle(
      .bluetooth(.didConnect(serialNumber: Self.serial, info: ReaderInfo(deviceSoftwareVersion: "2.3.1"))),
      now: .seconds(12))
    let done = machine.handle(.readerSaved(serialNumber: Self.serial, error: nil), now: .seconds(12))
    #expect(Self.reports(done).last == .didFinishLaunchReconnect(nil))
  }

  @Test func aReaderHeardBeforeTheLaunchStartedDoesNotCountAtTheTimeout() {
    var machine = TerminalStateMachine(seed: 1)
    _ = machine.handle(.bluetooth(.advertisement(Self.advertisement)), now: .zero)
    _ = machine.handle(.submit(1, .launch(timeout: .seconds(1), autoReconnect: true)), now: .milliseconds(100))
    _ = machine.handle(.savedReaderLoaded(.success(Self.saved)), now: .milliseconds(100))
    let timeout = machine.handle(.timerFired(.launchTimeout), now: .milliseconds(1_100))
    guard
      case .complete(1, .failure(let error))? = timeout.last(where: { if case .complete = $0 { true } else { false } })
    else {
      Issue.record("no failure: \(timeout)")
      return
    }
    #expect(error.code == .readerNotFound)
  }
}
