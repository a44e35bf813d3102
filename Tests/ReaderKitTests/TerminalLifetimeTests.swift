import ReaderKit
import ReaderSimulator
import Testing

@Suite struct TerminalLifetimeTests {
  /// An app may drop its terminal while a scan runs: the engine's timers still fire on the scheduler,
  /// and the discovery's updates, which name the terminal, are then simply not delivered.
  @Test func aTerminalReleasedWhileDiscoveringLeavesItsSchedulerRunningSafely() throws {
    let clock = VirtualClock()
    let world = SimulatedBluetoothCentral(clock: clock, seed: 7)
    for reader in SimulatedFleet.readers(count: 2, seed: 7) { world.add(reader) }
    let delegate = DiscoveryRecorder(clock: clock)
    weak var released: Terminal?
    do {
      let terminal = Terminal(central: world, scheduler: clock, store: InMemoryReaderStore())
      released = terminal
      terminal.discoverReaders(
        try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(true).build(), delegate: delegate
      ) { _ in }
      clock.advance(by: .seconds(3))
    }
    #expect(released == nil)
    let delivered = delegate.updates.count
    #expect(delivered > 0)
    // The list changes (a reader leaves): an update is due, with nobody's terminal to pass.
    world.setInRange(try #require(world.readers.first).serialNumber, false)
    clock.advance(by: .seconds(10))
    #expect(delegate.updates.count == delivered)
  }
}
