import ReaderKit
import ReaderSimulator
import Testing

/// The driver that runs a simulated terminal by itself, for apps and async code.
@Suite(.timeLimit(.minutes(2))) struct RealTimeDriverTests {
  @Test func drivenSimulatorCompletesAsyncDiscoveryAndConnect() async throws {
    let (terminal, world) = Terminal.simulated(seed: 4, readers: 2)
    let driver = RealTimeDriver(clock: world.clock, speed: 200, tick: .milliseconds(1))
    driver.start()
    #expect(driver.isRunning)

    let scan = try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(true).setTimeout(30).build()
    var found: Reader?
    for try await readers in terminal.discoverReaders(scan) {
      found = readers.first
      if found != nil { break }
    }
    let reader = try #require(found)
    let delegate = SilentDelegate()
    let config = try BluetoothConnectionConfiguration.Builder(delegate: delegate, locationId: "tml_async").build()
    let connected = try await terminal.connectReader(reader, connectionConfig: config)
    #expect(connected.serialNumber == reader.serialNumber)
    #expect(connected.locationId == "tml_async")
    try await terminal.disconnectReader()

    await driver.stop()
    #expect(!driver.isRunning)
    // Stopped means stopped: the clock stays where it is until driven by hand.
    let stoppedAt = world.clock.elapsed
    for _ in 0..<100 { await Task.yield() }
    #expect(world.clock.elapsed == stoppedAt)
    world.clock.advance(by: .seconds(1))
    #expect(world.clock.elapsed == stoppedAt + .seconds(1))
  }

  @Test func stopWithoutStartAndStartTwiceAreHarmless() async {
    let clock = VirtualClock()
    let driver = RealTimeDriver(clock: clock, speed: 1)
    await driver.stop()
    driver.start()
    driver.start()
    await driver.stop()
    await driver.stop()
    #expect(!driver.isRunning)
  }
}

private nonisolated final class SilentDelegate: MobileReaderDelegate {}
