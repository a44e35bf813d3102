import ReaderCore
import ReaderSimulator
import Testing

@testable import ReaderKit

/// `Terminal.shared`'s routing of simulated and real readers, with a second simulated world standing
/// in for the real backend, on one virtual clock.
@Suite struct RoutingBluetoothCentralTests {
  struct Setup {
    let clock = VirtualClock()
    let simulated: SimulatedBluetoothCentral
    let real: SimulatedBluetoothCentral
    let terminal: Terminal

    init() {
      simulated = SimulatedBluetoothCentral(clock: clock, seed: 1)
      real = SimulatedBluetoothCentral(clock: clock, seed: 2)
      simulated.add(SimulatedReader(serialNumber: "STRM2-SIM", deviceType: .stripeM2))
      real.add(SimulatedReader(serialNumber: "ACME-REAL", deviceType: .other("ACME-R1")))
      let router = RoutingBluetoothCentral(world: simulated, real: real, realLink: real)
      terminal = Terminal(
        central: router, readerLink: router, scheduler: clock, store: InMemoryReaderStore(),
        delegateExecutor: .scheduler, machine: TerminalStateMachine(seed: 1, realReadersSupported: true))
    }

    /// The serial numbers a scan of `simulated` readers lists after five seconds.
    func scan(simulated isSimulated: Bool) throws -> [String] {
      let seen = Locked<[String]>([])
      let delegate = Listener { readers in seen.withLock { $0 = readers.map(\.serialNumber) } }
      let configuration = try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(isSimulated).setTimeout(5)
        .build()
      terminal.discoverReaders(configuration, delegate: delegate) { _ in }
      clock.advance(by: .seconds(6))
      return seen.withLock { $0 }
    }
  }

  nonisolated final class Listener: DiscoveryDelegate {
    let body: @Sendable ([Reader]) -> Void
    init(_ body: @escaping @Sendable ([Reader]) -> Void) { self.body = body }
    func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) { body(readers) }
  }

  @Test func aSimulatedScanListsOnlySimulatedReadersAndARealScanOnlyRealOnes() throws {
    let setup = Setup()
    #expect(try setup.scan(simulated: true) == ["STRM2-SIM"])
    #expect(try setup.scan(simulated: false) == ["ACME-REAL"])
    #expect(!setup.simulated.isScanning && !setup.real.isScanning)
  }

  @Test func aRealReaderConnectsThroughTheBackendAndReportsItsModel() throws {
    let setup = Setup()
    _ = try setup.scan(simulated: false)
    let configuration = try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(false).build()
    let found = Locked<Reader?>(nil)
    let cancel = setup.terminal.discoverReaders(
      configuration,
      delegate: Listener { readers in
        found.withLock { $0 = readers.first }
      }
    ) { _ in }
    setup.clock.advance(by: .seconds(2))
    let reader = try #require(found.withLock { $0 })
    let result = Locked<Result<Reader, ReaderError>?>(nil)
    setup.terminal.connectReader(
      reader,
      connectionConfig: try BluetoothConnectionConfiguration.Builder(delegate: Nobody(), locationId: "tml").build()
    ) { (outcome: Result<Reader, ReaderError>) in result.withLock { $0 = outcome } }
    setup.clock.advance(by: .seconds(5))
    _ = cancel
    let connected = try #require(try result.withLock { $0 }?.get())
    #expect(connected.deviceType == .other("ACME-R1") && !connected.simulated)
    #expect(setup.real.connectRequestCount("ACME-REAL") == 1)
    #expect(setup.simulated.connectRequestCount("STRM2-SIM") == 0)
  }

  nonisolated final class Nobody: MobileReaderDelegate {}
}
