import Foundation
import Testing

@testable import ReaderCore

/// The simulator configuration's update (`availableReaderUpdate`) and the terminal delegate's status
/// calls, decided by the terminal machine.
@Suite struct TerminalStateMachineSimulatorTests {
  private typealias Action = TerminalStateMachine.Action

  private static let serial = "STRM2-0001"
  private static let info = ReaderInfo(deviceSoftwareVersion: "2.3.1", batteryLevel: 0.8, isCharging: false)
  private static let settings = ConnectionSettings(
    unchecked: "tml_123", autoReconnect: true, policy: ReconnectPolicy(jitter: 0), connectTimeout: .seconds(15))

  /// Hears the reader and connects it (`simulated` says whether it is a simulated reader) with
  /// `settings`; returns the actions of the link coming up.
  private static func linkUp(
    _ machine: inout TerminalStateMachine, simulated: Bool = true, settings: ConnectionSettings = settings
  ) -> [Action] {
    let advertisement = Advertisement(serialNumber: serial, deviceType: .stripeM2, signalStrength: -40, info: info)
    _ = machine.handle(.bluetooth(.advertisement(advertisement)), now: .zero, radioOn: true)
    let reader = Reader(serialNumber: serial, deviceType: .stripeM2, simulated: simulated)
    _ = machine.handle(.submit(1, .connect(reader, settings)), now: .zero, radioOn: true)
    return machine.handle(.bluetooth(.didConnect(serialNumber: serial, info: info)), now: .seconds(1), radioOn: true)
  }

  private static func installs(_ actions: [Action]) -> [ReaderSoftwareUpdate] {
    actions.compactMap { if case .installUpdate(_, let update, _, _) = $0 { update } else { nil } }
  }

  @Test func aSimulatedReaderSeesTheSimulatorsUpdateWhenItsConnectionNamesNone() {
    var machine = TerminalStateMachine(seed: 1)
    _ = machine.handle(.simulatedReaderUpdate(.required(TestReaderUpdate.fullUpdate)), now: .zero, radioOn: true)
    let up = Self.linkUp(&machine)
    #expect(Self.installs(up).map(\.isTestUpdate) == [true], "the required update installs while connecting")
    #expect(machine.status == .connecting)
  }

  @Test func aRealReaderNeverSeesTheSimulatorsUpdate() {
    var machine = TerminalStateMachine(seed: 1)
    _ = machine.handle(.simulatedReaderUpdate(.required(TestReaderUpdate.fullUpdate)), now: .zero, radioOn: true)
    let up = Self.linkUp(&machine, simulated: false)
    #expect(Self.installs(up).isEmpty)
    #expect(up.contains { if case .saveReader = $0 { true } else { false } }, "connected at once: it is saved")
  }

  @Test func aConnectionsOwnTestUpdateWinsOverTheSimulators() {
    var machine = TerminalStateMachine(seed: 1)
    _ = machine.handle(.simulatedReaderUpdate(.required(TestReaderUpdate.fullUpdate)), now: .zero, radioOn: true)
    var settings = Self.settings
    settings.testUpdate = .available([.config])
    let up = Self.linkUp(&machine, settings: settings)
    #expect(Self.installs(up).isEmpty, "an available update is reported, not installed")
  }

  @Test func settingNoneGoesBackToTheCatalogsAnswer() {
    var machine = TerminalStateMachine(seed: 1)
    _ = machine.handle(.simulatedReaderUpdate(.required(TestReaderUpdate.fullUpdate)), now: .zero, radioOn: true)
    _ = machine.handle(.simulatedReaderUpdate(nil), now: .zero, radioOn: true)
    let up = Self.linkUp(&machine)
    #expect(Self.installs(up).isEmpty)
    #expect(up.contains { if case .saveReader = $0 { true } else { false } }, "connected at once: it is saved")
  }

  @Test func everyStatusChangeGoesToTheTerminalDelegate() {
    var machine = TerminalStateMachine(seed: 1)
    let actions = Self.linkUp(&machine)
    let changes = actions.compactMap { action -> TerminalStateMachine.Recipient? in
      if case .report(.didChangeConnectionStatus, let recipient) = action { return recipient }
      return nil
    }
    #expect(!changes.isEmpty)
    #expect(changes.allSatisfy { $0 == .terminalDelegate })
  }

  @Test func simulateReaderUpdateMapsStripesChoicesOntoTestUpdates() {
    #expect(SimulateReaderUpdate.none.testReaderUpdate == nil)
    #expect(SimulateReaderUpdate.available.testReaderUpdate == .available(TestReaderUpdate.fullUpdate))
    #expect(SimulateReaderUpdate.required.testReaderUpdate == .required(TestReaderUpdate.fullUpdate))
    #expect(SimulateReaderUpdate.requiredForOffline.testReaderUpdate == .required(TestReaderUpdate.fullUpdate))
    #expect(SimulateReaderUpdate.lowBattery.testReaderUpdate == .lowBattery())
    #expect(SimulateReaderUpdate.lowBatterySucceedConnect.testReaderUpdate == .lowBatterySucceedConnect())
    #expect(SimulateReaderUpdate.random.testReaderUpdate == .random())
    // Stripe's 5.5.0 order, which its raw values follow.
    #expect(
      SimulateReaderUpdate.allCases.map(\.description) == [
        "available", "none", "required", "requiredForOffline", "lowBattery", "lowBatterySucceedConnect", "random",
      ])
    #expect(SimulateReaderUpdate.allCases.map(\.rawValue) == Array(0...6))
  }
}
