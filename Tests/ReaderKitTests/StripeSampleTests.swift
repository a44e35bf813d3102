import Foundation
import ReaderKit
import ReaderSimulator
import Synchronization
import TestSupport
import Testing

// The connection guide's samples as a Stripe Terminal iOS integrator writes them, with
// `import StripeTerminal` changed to `import ReaderKit` and UIKit's view controller replaced by a
// plain main-actor class. This file is compiled in Swift 6 language mode with the rest of the
// tests: if the samples stop compiling, the build fails.

@MainActor class UIViewController {}

/// Discovers readers and connects the first one, as the guide's sample does, on `terminal`
/// (`Terminal.shared` in the guide).
@MainActor
final class DiscoverReadersViewController: UIViewController, DiscoveryDelegate {
  var discoverCancelable: Cancelable?
  let terminal: Terminal
  let readerDelegate: ReaderViewController
  var connecting = false
  /// What the sample printed, in order, for the test to read.
  var log: [String] = []
  var onConnect: ((Reader?, (any Error)?) -> Void)?

  init(terminal: Terminal = .shared, readerDelegate: ReaderViewController) {
    self.terminal = terminal
    self.readerDelegate = readerDelegate
  }

  func discoverReadersAction() throws {
    let config = try BluetoothScanDiscoveryConfigurationBuilder().setSimulated(true).build()
    self.discoverCancelable = terminal.discoverReaders(config, delegate: self) { error in
      if let error = error {
        print("discoverReaders failed: \(error)")
      } else {
        print("discoverReaders succeeded")
      }
    }
  }

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    MainActor.assertIsolated("delegates run on the main actor")
    log.append("discovered \(readers.count)")
    guard let selectedReader = readers.first, !connecting else { return }
    connecting = true
    let connectionConfig: BluetoothConnectionConfiguration
    do {
      connectionConfig = try BluetoothConnectionConfigurationBuilder(
        delegate: readerDelegate, locationId: "tml_sample"
      ).build()
    } catch {
      print("Failed to create connection configuration: \(error)")
      return
    }
    terminal.connectReader(selectedReader, connectionConfig: connectionConfig) { [weak self] reader, error in
      if let reader = reader {
        print("Successfully connected to reader: \(reader)")
      } else if let error = error {
        print("connectReader failed: \(error)")
      }
      MainActor.assumeIsolated { self?.onConnect?(reader, error) }
    }
  }
}

/// The guide's reader delegate.
@MainActor
final class ReaderViewController: UIViewController, MobileReaderDelegate {
  var events: [String] = []

  func reader(_ reader: Reader, didStartReconnect cancelable: Cancelable, disconnectReason: DisconnectReason) {
    events.append("reconnecting (\(disconnectReason))")
  }

  func readerDidSucceedReconnect(_ reader: Reader) { events.append("reconnected") }

  func readerDidFailReconnect(_ reader: Reader) { events.append("reconnect failed") }

  func reader(_ reader: Reader, didDisconnect reason: DisconnectReason) { events.append("disconnected (\(reason))") }

  func reader(_ reader: Reader, didReportBatteryLevel batteryLevel: Float, status: BatteryStatus, isCharging: Bool) {
    MainActor.assertIsolated("delegates run on the main actor")
    events.append("battery")
  }
}

@Suite(.timeLimit(.minutes(1))) struct StripeSampleTests {
  @MainActor
  @Test func theGuidesSampleConnectsAReaderWithEveryCallbackOnTheMainActor() async throws {
    let clock = VirtualClock()
    let world = SimulatedBluetoothCentral(clock: clock, seed: 5)
    for reader in SimulatedFleet.readers(count: 2, seed: 5) { world.add(reader) }
    let terminal = Terminal(
      central: world, scheduler: clock, store: InMemoryReaderStore(), delegateExecutor: .mainActor)
    let driver = RealTimeDriver(clock: clock, speed: 50, tick: .milliseconds(1))
    let readers = ReaderViewController()
    let screen = DiscoverReadersViewController(terminal: terminal, readerDelegate: readers)
    driver.start()
    let (reader, error) = await awaitCallback(cancelled: (Reader?.none, String?("no connection before the time limit"))) {
      resume in
      screen.onConnect = { reader, error in resume((reader, error.map { "\($0)" })) }
      do { try screen.discoverReadersAction() } catch { resume((nil, "\(error)")) }
    }
    #expect(error == nil)
    #expect(reader?.locationId == "tml_sample")
    #expect(screen.log.first?.hasPrefix("discovered") == true)
    #expect(terminal.connectionStatus == .connected)
    try await terminal.disconnectReader()
    await driver.stop()
  }

  @MainActor
  @Test func theSharedTerminalFindsSimulatedReadersAndRefusesRealOnesWithATypedError() async throws {
    let real = try BluetoothScanDiscoveryConfigurationBuilder().build()
    let refused = await withCheckedContinuation { (continuation: CheckedContinuation<ReaderError?, Never>) in
      Terminal.shared.discoverReaders(real, delegate: Ignore()) { continuation.resume(returning: $0) }
    }
    #expect(refused?.code == .bluetoothUnsupported)

    let simulated = try BluetoothProximityDiscoveryConfigurationBuilder().setSimulated(true).build()
    var first: [Reader]?
    for try await readers in Terminal.shared.discoverReaders(simulated) {
      first = readers
      break
    }
    #expect(first?.first?.simulated == true)
  }
}

@MainActor private final class Ignore: DiscoveryDelegate {
  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {}
}
