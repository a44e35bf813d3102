import ReaderKit
import ReaderSimulator
import Testing

@Suite(.timeLimit(.minutes(2))) struct TerminalEventStreamTests {
  @Test func eventsStreamDeliversWhatObserversSeeInTheSameOrder() async throws {
    let h = Harness()
    let stream = h.terminal.events()
    guard let connection = try h.connect(Fixture.m2) else { return }
    h.world.walkAway(Fixture.m2, for: .seconds(5))
    h.clock.advance(by: .seconds(30))
    h.terminal.disconnectReader { _ in }
    h.clock.advance(by: .seconds(1))
    #expect(connection.delegate.calls.count == 2)

    let expected = h.log.all
    var received: [TerminalEvent] = []
    for await event in stream {
      received.append(event)
      if received.count == expected.count { break }
    }
    #expect(received == expected)
  }

  @Test func removedObserverHearsNothingMore() throws {
    let h = Harness()
    let heard = Outcome<TerminalEvent>()
    let token = h.terminal.addEventObserver(heard.record)
    h.terminal.discoverReaders(try h.scan(timeout: 1), delegate: DiscoveryRecorder(clock: h.clock)) { _ in }
    h.clock.advance(by: .seconds(2))
    let count = heard.count
    #expect(count > 0)
    h.terminal.removeEventObserver(token)
    h.terminal.discoverReaders(try h.scan(timeout: 1), delegate: DiscoveryRecorder(clock: h.clock)) { _ in }
    h.clock.advance(by: .seconds(2))
    #expect(heard.count == count)
    #expect(h.log.count > count)
  }
}
