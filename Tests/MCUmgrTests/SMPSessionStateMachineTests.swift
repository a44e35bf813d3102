import ReaderCore
import Testing

@testable import MCUmgr

@Suite struct SMPSessionStateMachineTests {
  typealias Machine = SMPSessionStateMachine
  static let reset = SMPRequest.reset(timeout: ImageUpgradeTimings().request)

  static func machine(ready: Bool = true) -> Machine {
    var machine = Machine(serialNumber: "R1", timings: ImageUpgradeTimings(), sha256: TestImages.sha256)
    if ready { _ = machine.transport(.ready(maximumWriteLength: 244)) }
    return machine
  }

  static func answer(_ request: SMPRequest, sequence: UInt8, _ body: CBORValue) -> SMPTransportEvent {
    .received(
      SMPFrame(
        operation: responseOperation(request), group: request.group, command: request.command, sequence: sequence,
        body: body
      ).bytes)
  }

  @Test func aRebootDeclaresTheLinkLossThenSendsTheResetAndReportsItsAnswer() {
    var machine = Self.machine()
    #expect(
      machine.reboot() == [
        .expectLinkLoss(.reboot), .send(Self.reset.frame(sequence: 0).bytes), .arm(.response, after: .seconds(5)),
      ])
    #expect(
      machine.transport(Self.answer(Self.reset, sequence: 0, [:])) == [
        .disarm(.response), .report(.rebootResponse(serialNumber: "R1", error: nil)),
      ])
    #expect(machine.isIdle)
  }

  @Test func aRefusedRebootWithdrawsTheExpectationAndReportsTheResultCode() {
    var machine = Self.machine()
    _ = machine.reboot()
    let actions = machine.transport(Self.answer(Self.reset, sequence: 0, ["rc": 10]))
    #expect(actions.contains(.expectLinkLoss(nil)))
    guard case .report(.rebootResponse(_, let error?)) = actions.last else { Issue.record("\(actions)"); return }
    #expect(error.code == .rebootFailed)
    #expect(error.cause == .smp(rc: 10, group: nil))
  }

  @Test func aRebootWhoseWriteFailsEndsAtOnceWithTheDBusErrorAndWithdrawsTheExpectation() {
    var machine = Self.machine()
    _ = machine.reboot()
    let cause = ErrorCause.dbus(name: "org.bluez.Error.NotConnected", message: "Not Connected")
    let actions = machine.transport(.sendFailed(Self.reset.frame(sequence: 0).bytes, cause))
    #expect(actions.prefix(2) == [.disarm(.response), .expectLinkLoss(nil)])
    guard case .report(.rebootResponse(_, let error?)) = actions.last else { Issue.record("\(actions)"); return }
    #expect(error.code == .rebootFailed)
    #expect(error.cause == cause)
    #expect(machine.isIdle)
  }

  @Test func anInstallWhoseWriteFailsEndsAsInterruptedWithTheDBusError() {
    var machine = Self.machine()
    let started = machine.install(image: TestImages.image(), version: "1.1.0")
    let write = started.compactMap { if case .send(let bytes) = $0 { bytes } else { nil } }.first
    let cause = ErrorCause.dbus(name: "org.bluez.Error.Failed", message: "")
    // The parameters request is optional; the image state request that follows is not.
    let next = machine.transport(.sendFailed(write ?? [], cause))
    let stateWrite = next.compactMap { if case .send(let bytes) = $0 { bytes } else { nil } }.first
    let actions = machine.transport(.sendFailed(stateWrite ?? [], cause))
    guard case .report(.updateFinished(_, let error?)) = actions.last else { Issue.record("\(actions)"); return }
    #expect(error.code == .readerSoftwareUpdateFailedInterrupted)
    #expect(error.cause == cause)
  }

  @Test func aRebootWithoutAnAnswerFailsAndWithdrawsTheExpectation() {
    var machine = Self.machine()
    _ = machine.reboot()
    let actions = machine.timerFired(.response)
    #expect(actions.first == .expectLinkLoss(nil))
    guard case .report(.rebootResponse(_, let error?)) = actions.last else { Issue.record("\(actions)"); return }
    #expect(error.code == .rebootFailed)
  }

  @Test func aLinkThatDropsWithTheResetInFlightCountsAsAnAcceptedReboot() {
    var machine = Self.machine()
    _ = machine.reboot()
    #expect(
      machine.transport(.down) == [.disarm(.response), .report(.rebootResponse(serialNumber: "R1", error: nil))])
  }

  @Test func aRebootWithoutALinkFailsAtOnce() {
    var machine = Self.machine(ready: false)
    guard case .report(.rebootResponse(_, let error?)) = machine.reboot().last else { Issue.record(); return }
    #expect(error.code == .rebootFailed)
  }

  @Test func anInstallWaitsBehindARebootAndCanBeCancelledWhileItWaits() {
    var machine = Self.machine()
    _ = machine.reboot()
    #expect(machine.install(image: TestImages.image(), version: "1.1.0").isEmpty)
    #expect(
      machine.cancelInstall() == [
        .report(.updateFinished(serialNumber: "R1", error: ReaderError.canceled("installUpdate")))
      ])
    _ = machine.transport(Self.answer(Self.reset, sequence: 0, [:]))
    #expect(machine.isIdle)
  }

  @Test func anInstallStartsWithTheParametersRequestAndReportsItsEnd() {
    var machine = Self.machine()
    let parameters = SMPRequest.parameters(timeout: .seconds(5))
    #expect(
      machine.install(image: TestImages.image(), version: "1.1.0").first == .send(parameters.frame(sequence: 0).bytes))
    var other = Self.machine()
    guard case .report(.updateFinished(_, let error?)) = other.install(image: nil, version: "1.1.0").last else {
      Issue.record(); return
    }
    #expect(error.code == .readerSoftwareUpdateFailed)
    #expect(error.context["serialNumber"] == "R1")
  }

  @Test func aStaleFrameIsNotedNotActedOn() {
    var machine = Self.machine()
    _ = machine.reboot()
    let actions = machine.transport(Self.answer(Self.reset, sequence: 9, [:]))
    #expect(actions.count == 1)
    guard case .note(let text) = actions.first else { Issue.record("\(actions)"); return }
    #expect(text.contains("sequence 9"))
  }
}
