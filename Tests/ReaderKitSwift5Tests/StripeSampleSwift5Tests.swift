import ReaderKit
import ReaderSimulator
import Testing

// The connection guide's discovery sample in Swift 5 language mode, where apps that have not
// moved to Swift 6 live: a view controller (here a plain main-actor class) adopts the delegates.

@MainActor class SampleViewController {}

@MainActor
final class Swift5DiscoverViewController: SampleViewController, DiscoveryDelegate, MobileReaderDelegate {
  var discoverCancelable: Cancelable?
  var found: [Reader] = []

  func discoverReadersAction(on terminal: Terminal) throws {
    let config = try BluetoothScanDiscoveryConfigurationBuilder().setSimulated(true).setTimeout(5).build()
    discoverCancelable = terminal.discoverReaders(config, delegate: self) { error in
      if let error = error {
        print("discoverReaders failed: \(error)")
      } else {
        print("discoverReaders succeeded")
      }
    }
  }

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    found = readers
  }

  func readerDidSucceedReconnect(_ reader: Reader) {}
}

@Suite struct StripeSampleSwift5Tests {
  @MainActor
  @Test func theSampleCompilesAndDiscoversInSwift5Mode() throws {
    // Driven from the main actor, a simulation calls main-actor delegates in place.
    let (terminal, world) = Terminal.simulated(seed: 3, readers: 2)
    let screen = Swift5DiscoverViewController()
    try screen.discoverReadersAction(on: terminal)
    world.clock.advance(by: .seconds(5))
    #expect(screen.found.count == 2)
    #expect(screen.discoverCancelable?.isCompleted == true)
  }
}
