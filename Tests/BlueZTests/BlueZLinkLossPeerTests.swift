import BlueZ
import DBus
import Foundation
import ReaderKit
import Testing

/// Links that end and are not won back, against the D-Bus peer: the end of Stripe's automatic
/// reconnection when the reader stays away, and the adapter going off under a reader that is not
/// reconnected automatically.
@Suite(.enabled(if: BlueZPeer.enabled, BlueZPeer.skipNote), .timeLimit(.minutes(2)))
struct BlueZLinkLossPeerTests {
  static let address = BlueZPeerTests.first
  static let device = BlueZPeerTests.path(BlueZPeerTests.first)

  /// The lifecycle callbacks of `events` as Stripe names them, with the connection status changes.
  static func lifecycle(_ events: ArraySlice<TerminalEvent.Kind>) -> [String] {
    events.compactMap { event -> String? in
      switch event {
      case .didStartReconnect(_, let reason): "didStartReconnect(\(reason))"
      case .readerDidSucceedReconnect: "readerDidSucceedReconnect"
      case .readerDidFailReconnect: "readerDidFailReconnect"
      case .didDisconnect(_, let reason): "didDisconnect(\(reason))"
      case .didChangeConnectionStatus(let status): "status(\(status))"
      default: nil
      }
    }
  }

  @Test func aReaderThatStaysAwayAfterATimeoutEndsWithReaderDidFailReconnectThenDidDisconnect() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    try peer.addReader(address: Self.address, name: "STRM2-0001")
    let policy = ReconnectPolicy(
      deadline: .milliseconds(1500), initialDelay: .milliseconds(200), maximumDelay: .milliseconds(400),
      attemptTimeout: .milliseconds(500))
    _ = try await run.connect("STRM2-0001", policy: policy)
    let mark = run.events.count
    // Out of range for good: the link times out and BlueZ forgets the device.
    try peer.call("DropLink", [.objectPath(Self.device), .string("org.bluez.Reason.Timeout")])
    try peer.call("RemoveReader", [.objectPath(Self.device)])
    try await run.wait(for: "didDisconnect(bluetoothSignalLost)", after: mark, timeout: .seconds(5)) {
      if case .didDisconnect(_, .bluetoothSignalLost) = $0 { true } else { false }
    }
    #expect(
      Self.lifecycle(run.events[mark...]) == [
        "status(reconnecting)", "didStartReconnect(bluetoothSignalLost)", "readerDidFailReconnect",
        "status(notConnected)", "didDisconnect(bluetoothSignalLost)",
      ])
    let failure = run.events[mark...].compactMap { event -> ReaderError? in
      if case .readerDidFailReconnect(_, let error) = event { error } else { nil }
    }
    #expect(failure.map(\.code) == [.bluetoothConnectTimedOut])
    #expect(run.terminal.connectionStatus == .notConnected && run.terminal.connectedReader == nil)
    // Nothing more once the app heard didDisconnect, even when the reader is back.
    let events = run.events.count
    try peer.addReader(address: Self.address, name: "STRM2-0001")
    await run.idle(for: .milliseconds(500))
    #expect(Self.lifecycle(run.events[events...]).isEmpty)
  }

  @Test func theAdapterGoingOffEndsTheLinkWithBluetoothDisabledAndNothingReconnectsUnasked() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    try peer.addReader(address: Self.address, name: "STRM2-0001")
    _ = try await run.connect("STRM2-0001", autoReconnect: false)
    let mark = run.events.count
    try peer.call("SetAdapterPower", [.string("hci0"), .boolean(false), .string("off")])
    try await run.wait(
      for: "didDisconnect(bluetoothDisabled)", after: mark, BlueZPeerTests.isDisconnect(.bluetoothDisabled))
    #expect(run.central.isPoweredOn == false)
    try peer.call("SetAdapterPower", [.string("hci0"), .boolean(true), .string("on")])
    await run.idle(for: .milliseconds(500))
    #expect(run.central.isPoweredOn == true)
    #expect(try peer.calls(Self.device) == ["Connect"])
    #expect(Self.lifecycle(run.events[mark...]) == ["status(notConnected)", "didDisconnect(bluetoothDisabled)"])
    // The reader is found again by the next discovery.
    #expect(try await run.discover(["STRM2-0001"]).map(\.serialNumber) == ["STRM2-0001"])
  }
}
