import Foundation
import ReaderKit
import ReaderSimulator
import Testing

// Delegates written with the exact signatures of Stripe's iOS SDK 5.x, as a Swift 5 app spells them
// (`Error?`), adopted by a main-actor view controller. ReaderKit gives every method a default, so a
// method that missed its requirement by a type would compile and never run: these tests check that
// ReaderKit calls each one it has an event for. The same delegates in Swift 6 mode are in
// `Tests/ReaderKitTests/StripeSignatureTests.swift`.

@MainActor
final class Swift5ReaderViewController: SampleViewController, MobileReaderDelegate, TerminalDelegate {
  var calls: [String] = []
  var statuses: [ConnectionStatus] = []
  var lastLevel: Float?
  var progress: [Float] = []

  func reader(_ reader: Reader, didDisconnect reason: DisconnectReason) { calls.append("didDisconnect") }

  func reader(_ reader: Reader, didStartReconnect cancelable: Cancelable, disconnectReason: DisconnectReason) {
    calls.append("didStartReconnect")
  }

  func readerDidSucceedReconnect(_ reader: Reader) { calls.append("readerDidSucceedReconnect") }

  func readerDidFailReconnect(_ reader: Reader) { calls.append("readerDidFailReconnect") }

  func reader(_ reader: Reader, didReportAvailableUpdate update: ReaderSoftwareUpdate) {
    calls.append("didReportAvailableUpdate")
  }

  func reader(_ reader: Reader, didStartInstallingUpdate update: ReaderSoftwareUpdate, cancelable: Cancelable?) {
    calls.append("didStartInstallingUpdate")
  }

  func reader(_ reader: Reader, didReportReaderSoftwareUpdateProgress progress: Float) {
    self.progress.append(progress)
  }

  func reader(_ reader: Reader, didFinishInstallingUpdate update: ReaderSoftwareUpdate?, error: Error?) {
    calls.append(error == nil ? "didFinishInstallingUpdate" : "didFinishInstallingUpdate failed")
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
    lastLevel = batteryLevel
    calls.append("didReportBatteryLevel")
  }

  func readerDidReportLowBatteryWarning(_ reader: Reader) { calls.append("readerDidReportLowBatteryWarning") }

  func terminal(_ terminal: Terminal, didChangeConnectionStatus status: ConnectionStatus) { statuses.append(status) }

  func terminal(_ terminal: Terminal, didChangePaymentStatus status: PaymentStatus) { calls.append("payment") }
}

@Suite struct StripeSignatureSwift5Tests {
  @MainActor
  @Test func everyStripeShapedDelegateMethodIsCalledInSwift5Mode() throws {
    let (terminal, world) = Terminal.simulated(seed: 21, readers: 1)
    let screen = Swift5DiscoverViewController()
    try screen.discoverReadersAction(on: terminal)
    world.clock.advance(by: .seconds(5))
    guard let reader = screen.found.first else {
      Issue.record("nothing discovered")
      return
    }
    world.setBattery(reader.serialNumber, level: 0.9, isCharging: false)
    let delegate = Swift5ReaderViewController()
    terminal.delegate = delegate
    terminal.simulatorConfiguration.availableReaderUpdate = .required
    let config = try BluetoothConnectionConfigurationBuilder(delegate: delegate, locationId: "tml_1").build()
    terminal.connectReader(reader, connectionConfig: config) { reader, error in
      if let error = error { print("connectReader failed: \(error)") }
    }
    world.clock.advance(by: .seconds(120))
    #expect(delegate.calls.prefix(2) == ["didStartInstallingUpdate", "didFinishInstallingUpdate"])
    #expect(delegate.progress.last == 1)

    world.setBattery(reader.serialNumber, level: 0.12, isCharging: false)
    world.clock.advance(by: .seconds(1))
    #expect(delegate.lastLevel == 0.12)
    #expect(delegate.calls.contains("readerDidReportLowBatteryWarning"))

    world.walkAway(reader.serialNumber, for: .seconds(10))
    world.clock.advance(by: .seconds(40))
    world.walkAway(reader.serialNumber, for: .seconds(600))
    world.clock.advance(by: .seconds(120))
    #expect(
      delegate.calls.filter { $0.contains("Reconnect") || $0 == "didDisconnect" } == [
        "didStartReconnect", "readerDidSucceedReconnect", "didStartReconnect", "readerDidFailReconnect",
        "didDisconnect",
      ])
    #expect(delegate.statuses == [.connecting, .connected, .reconnecting, .connected, .reconnecting, .notConnected])
    #expect(!delegate.calls.contains("payment"))
  }

  @MainActor
  @Test func stripesCancelSampleCompilesAndReportsNothingToCancelAsAnError() throws {
    let (terminal, world) = Terminal.simulated(seed: 22, readers: 1)
    let screen = Swift5DiscoverViewController()
    try screen.discoverReadersAction(on: terminal)
    world.clock.advance(by: .seconds(5))
    let answer = Answer()
    screen.discoverCancelable?.cancel { error in
      if let error = error {
        answer.text = "\((error as? ReaderError)?.code.description ?? "?")"
      } else {
        answer.text = "canceled"
      }
    }
    #expect(answer.text == "cancelFailedAlreadyCompleted", "the scan had timed out: nothing to cancel")
    #expect(screen.discoverCancelable?.completed == true)
  }
}

/// What a completion said.
final class Answer {
  var text: String?
}
