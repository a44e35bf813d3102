import Foundation
import ReaderKit
import ReaderSimulator
import Testing

// Delegates written with the exact signatures of Stripe's iOS SDK 5.x (its headers' Swift names), adopted
// by main-actor classes as view controllers adopt them, with `import StripeTerminal` changed to
// `import ReaderKit`. Every method has a default implementation in ReaderKit, so a method whose signature
// missed the requirement by a type (`Double` for `Float`) would compile and never run: each test checks
// that ReaderKit calls every method it has an event for. The same delegates in Swift 5 language mode
// are in `Tests/ReaderKitSwift5Tests`.

@MainActor
final class StripeShapedReaderDelegate: MobileReaderDelegate {
  var calls: [String] = []
  var progress: [Float] = []
  var batteryLevels: [Float] = []
  var installCancelable: Cancelable?

  // ReaderDelegate
  func reader(_ reader: Reader, didDisconnect reason: DisconnectReason) {
    calls.append("didDisconnect(\(reason))")
  }

  func reader(_ reader: Reader, didStartReconnect cancelable: Cancelable, disconnectReason: DisconnectReason) {
    calls.append("didStartReconnect(\(disconnectReason))")
  }

  func readerDidSucceedReconnect(_ reader: Reader) { calls.append("readerDidSucceedReconnect") }

  func readerDidFailReconnect(_ reader: Reader) { calls.append("readerDidFailReconnect") }

  // MobileReaderDelegate
  func reader(_ reader: Reader, didReportAvailableUpdate update: ReaderSoftwareUpdate) {
    calls.append("didReportAvailableUpdate(\(update.isTestUpdate ? "test" : "catalog"))")
  }

  func reader(_ reader: Reader, didStartInstallingUpdate update: ReaderSoftwareUpdate, cancelable: Cancelable?) {
    installCancelable = cancelable
    calls.append("didStartInstallingUpdate")
  }

  func reader(_ reader: Reader, didReportReaderSoftwareUpdateProgress progress: Float) {
    self.progress.append(progress)
  }

  func reader(_ reader: Reader, didFinishInstallingUpdate update: ReaderSoftwareUpdate?, error: (any Error)?) {
    calls.append(
      "didFinishInstallingUpdate(\(error.map { "\(($0 as? ReaderError)?.code.description ?? "?")" } ?? "nil"))")
  }

  func reader(_ reader: Reader, didRequestReaderInput inputOptions: ReaderInputOptions = []) {
    calls.append(Terminal.stringFromReaderInputOptions(inputOptions))
  }

  func reader(_ reader: Reader, didRequestReaderDisplayMessage displayMessage: ReaderDisplayMessage) {
    calls.append(Terminal.stringFromReaderDisplayMessage(displayMessage))
  }

  func reader(_ reader: Reader, didReportReaderEvent event: ReaderEvent, info: [AnyHashable: Any]?) {
    calls.append(Terminal.stringFromReaderEvent(event))
  }

  func reader(_ reader: Reader, didReportBatteryLevel batteryLevel: Float, status: BatteryStatus, isCharging: Bool) {
    batteryLevels.append(batteryLevel)
    calls.append("didReportBatteryLevel(\(status), charging: \(isCharging))")
  }

  func readerDidReportLowBatteryWarning(_ reader: Reader) { calls.append("readerDidReportLowBatteryWarning") }
}

@MainActor
final class StripeShapedTerminalDelegate: TerminalDelegate {
  var statuses: [ConnectionStatus] = []
  var paymentStatuses: [PaymentStatus] = []

  func terminal(_ terminal: Terminal, didChangeConnectionStatus status: ConnectionStatus) {
    statuses.append(status)
  }

  func terminal(_ terminal: Terminal, didChangePaymentStatus status: PaymentStatus) {
    paymentStatuses.append(status)
  }
}

@MainActor
final class StripeShapedDiscoveryDelegate: DiscoveryDelegate {
  var readers: [Reader] = []

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    self.readers = readers
  }
}

@Suite(.timeLimit(.minutes(1))) struct StripeSignatureTests {
  /// A simulated terminal whose first reader (nearest) has been discovered; the clock is driven from
  /// the main actor, so the delegates run there, in place.
  @MainActor
  private static func discovered(seed: UInt64 = 11) throws -> (Terminal, SimulatedBluetoothCentral, Reader) {
    let (terminal, world) = Terminal.simulated(seed: seed, readers: 2)
    let discovery = StripeShapedDiscoveryDelegate()
    let config = try BluetoothScanDiscoveryConfigurationBuilder().setSimulated(true).setTimeout(2).build()
    terminal.discoverReaders(config, delegate: discovery) { _ in }
    world.clock.advance(by: .seconds(2))
    let reader = try #require(discovery.readers.first, "the discovery delegate heard the readers")
    return (terminal, world, reader)
  }

  @MainActor
  @Test func everyReaderDelegateMethodWrittenAsStripeDeclaresItIsCalled() throws {
    let (terminal, world, found) = try Self.discovered()
    world.setBattery(found.serialNumber, level: 0.9, isCharging: false)  // Enough for an update.
    let delegate = StripeShapedReaderDelegate()
    let config = try BluetoothConnectionConfigurationBuilder(delegate: delegate, locationId: "tml_1")
      .setTestReaderUpdate(.required([.firmware])).build()
    terminal.connectReader(found, connectionConfig: config) { _, _ in }
    world.clock.advance(by: .seconds(120))
    #expect(terminal.connectionStatus == .connected)
    #expect(Array(delegate.calls.prefix(2)) == ["didStartInstallingUpdate", "didFinishInstallingUpdate(nil)"])
    #expect(delegate.installCancelable != nil)
    #expect(delegate.progress.first == 0 && delegate.progress.last == 1 && delegate.progress.count > 2)

    world.setBattery(found.serialNumber, level: 0.1, isCharging: false)
    world.clock.advance(by: .seconds(1))
    #expect(delegate.batteryLevels.last == 0.1, "the level arrives as Stripe's Float")
    #expect(delegate.calls.contains("didReportBatteryLevel(low, charging: false)"))
    #expect(delegate.calls.contains("readerDidReportLowBatteryWarning"))

    world.walkAway(found.serialNumber, for: .seconds(10))
    world.clock.advance(by: .seconds(40))
    world.walkAway(found.serialNumber, for: .seconds(600))
    world.clock.advance(by: .seconds(120))
    let lifecycle = delegate.calls.filter {
      $0.hasPrefix("didStartReconnect") || $0.contains("Reconnect") || $0.hasPrefix("didDisconnect")
    }
    #expect(
      lifecycle == [
        "didStartReconnect(bluetoothSignalLost)", "readerDidSucceedReconnect",
        "didStartReconnect(bluetoothSignalLost)", "readerDidFailReconnect", "didDisconnect(bluetoothSignalLost)",
      ])
    #expect(terminal.connectionStatus == .notConnected)
  }

  @MainActor
  @Test func theTerminalDelegateHearsEveryConnectionStatusInOrderAndThePaymentStatusStaysNotReady() throws {
    let (terminal, world) = Terminal.simulated(seed: 12, readers: 1)
    let observer = StripeShapedTerminalDelegate()
    terminal.delegate = observer
    let streamed = StatusLog(terminal)
    let discovery = StripeShapedDiscoveryDelegate()
    let scan = try BluetoothScanDiscoveryConfigurationBuilder().setSimulated(true).setTimeout(2).build()
    terminal.discoverReaders(scan, delegate: discovery) { _ in }
    world.clock.advance(by: .seconds(2))
    let reader = try #require(discovery.readers.first)
    let config = try BluetoothConnectionConfigurationBuilder(
      delegate: StripeShapedReaderDelegate(), locationId: "tml_1"
    )
    .build()
    terminal.connectReader(reader, connectionConfig: config) { _, _ in }
    world.clock.advance(by: .seconds(5))
    world.walkAway(reader.serialNumber, for: .seconds(5))
    world.clock.advance(by: .seconds(30))
    terminal.disconnectReader { _ in }
    world.clock.advance(by: .seconds(5))

    #expect(
      observer.statuses == [
        .discovering, .notConnected, .connecting, .connected, .reconnecting, .connected, .notConnected,
      ])
    #expect(observer.statuses == streamed.statuses, "the delegate hears what the event stream says, in order")
    #expect(terminal.paymentStatus == .notReady)
    #expect(observer.paymentStatuses.isEmpty)

    terminal.delegate = nil
    terminal.discoverReaders(scan, delegate: discovery) { _ in }
    world.clock.advance(by: .seconds(3))
    #expect(observer.statuses.count == 7, "a delegate set to nil hears nothing more")
  }

  @MainActor
  @Test func theSimulatorConfigurationPicksTheUpdateSimulatedReadersReport() throws {
    // `Terminal.shared` starts at Stripe's default; a terminal the app builds starts at none.
    #expect(Terminal.shared.simulatorConfiguration.availableReaderUpdate == .available)
    let (terminal, world, found) = try Self.discovered(seed: 13)
    #expect(terminal.simulatorConfiguration.availableReaderUpdate == .none)

    terminal.simulatorConfiguration.availableReaderUpdate = .available
    let delegate = StripeShapedReaderDelegate()
    let config = try BluetoothConnectionConfigurationBuilder(delegate: delegate, locationId: "tml_1").build()
    terminal.connectReader(found, connectionConfig: config) { _, _ in }
    world.clock.advance(by: .seconds(5))
    #expect(delegate.calls.contains("didReportAvailableUpdate(test)"))
    #expect(terminal.connectedReader?.availableUpdate?.isTestUpdate == true)
    terminal.disconnectReader { _ in }
    world.clock.advance(by: .seconds(5))

    terminal.simulatorConfiguration.availableReaderUpdate = .lowBattery
    let failed = Outcome<String>()
    terminal.connectReader(found, connectionConfig: config) { reader, error in
      failed.record(reader == nil ? "\((error as? ReaderError)?.code.description ?? "?")" : "connected")
    }
    world.clock.advance(by: .seconds(30))
    #expect(failed.value == "readerSoftwareUpdateFailedBatteryLow")

    terminal.simulatorConfiguration.availableReaderUpdate = .none
    let plain = StripeShapedReaderDelegate()
    let plainConfig = try BluetoothConnectionConfigurationBuilder(delegate: plain, locationId: "tml_1").build()
    terminal.connectReader(found, connectionConfig: plainConfig) { _, _ in }
    world.clock.advance(by: .seconds(5))
    #expect(terminal.connectionStatus == .connected)
    #expect(!plain.calls.contains { $0.contains("Update") })
  }

  @Test func stripesStringHelpersNameTheCases() {
    #expect(Terminal.stringFromReaderInputOptions([.swipeCard, .insertCard]) == "Swipe / Insert")
    #expect(Terminal.stringFromReaderInputOptions([.swipeCard, .insertCard, .tapCard]) == "Swipe / Insert / Tap")
    #expect(Terminal.stringFromReaderInputOptions(.none) == "None")
    #expect(Terminal.stringFromReaderDisplayMessage(.retryCard) == "Retry Card")
    #expect(Terminal.stringFromReaderEvent(.cardInserted) == "Card Inserted")
    #expect(Terminal.stringFromConnectionStatus(.notConnected) == "Not Connected")
    #expect(Terminal.stringFromPaymentStatus(.notReady) == "Not Ready")
    #expect(Terminal.stringFromDeviceType(.stripeM2) == "Stripe Reader M2")
    // Stripe's raw values (its header's order).
    #expect(ReaderDisplayMessage.allCases.map(\.rawValue) == Array(0...7))
    #expect([ReaderInputOptions.swipeCard, .insertCard, .tapCard].map(\.rawValue) == [1, 2, 4])
    #expect(ReaderEvent.cardRemoved.rawValue == 1)
    #expect(PaymentStatus.allCases.map(\.rawValue) == [0, 1, 2, 3])
  }
}

/// The statuses a terminal's event stream reports, in order.
private final class StatusLog: Sendable {
  private let log = Outcome<ConnectionStatus>()
  init(_ terminal: Terminal) {
    terminal.addEventObserver { [log] event in
      if case .didChangeConnectionStatus(let status) = event.kind { log.record(status) }
    }
  }
  var statuses: [ConnectionStatus] { log.all }
}
