import Foundation
import ReaderCore
import Testing

@testable import ReaderSimulator

private typealias Machine = SimulatedReaderStateMachine
private typealias Action = SimulatedReaderStateMachine.Action

private let around = Machine.Surroundings(
  radioOn: true, scanning: true, now: .zero, advertisingInterval: .seconds(1))

private func reader(_ type: DeviceType = .stripeM2, battery: Double = 0.8, charging: Bool = false) -> SimulatedReader {
  SimulatedReader(serialNumber: "STRM2-1", deviceType: type, batteryLevel: battery, isCharging: charging)
}

private func events(_ actions: [Action]) -> [Machine.Event] {
  actions.compactMap { if case .event(let event) = $0 { event } else { nil } }
}

private func arms(_ actions: [Action]) -> [Machine.Timer] {
  actions.compactMap { if case .arm(let timer, _) = $0 { timer } else { nil } }
}

private func records(_ actions: [Action]) -> [String] {
  actions.compactMap { if case .record(let kind) = $0 { kind } else { nil } }
}

/// A machine whose link is up.
private func linked(_ machine: inout Machine, random: inout SeededRandom) {
  _ = machine.connectRequested(around, random: &random)
  _ = machine.timerFired(.connect, around, random: &random)
}

private let update = ReaderSoftwareUpdate(
  deviceSoftwareVersion: "2.01.00.18", durationEstimate: .estimate1To2Minutes, components: [.firmware],
  requiredAt: Date(timeIntervalSince1970: 0))

@Suite struct SimulatedReaderStateMachineTests {
  @Test func aReaderAdvertisesOnlyWhileTheHostScansAndItIsReachableWithoutALink() {
    var random = SeededRandom(seed: 1)
    var machine = Machine(reader: reader())
    var quiet = around
    quiet.scanning = false
    #expect(machine.scanStarted(quiet, random: &random) == [])
    #expect(arms(machine.scanStarted(around, random: &random)) == [.advertise])
    let heard = machine.timerFired(.advertise, around, random: &random)
    #expect(arms(heard) == [.advertise], "and again")
    guard case .radio(.advertisement(let ad))? = events(heard).first else {
      Issue.record("no advertisement in \(heard)")
      return
    }
    #expect(abs(ad.signalStrength - reader().meanSignalStrength) <= 3)
    linked(&machine, random: &random)
    #expect(machine.timerFired(.advertise, around, random: &random) == [], "a linked reader is silent")
  }

  @Test func aConnectCompletesAfterTheLatencyOrFailsWhenTheRadioGoesOff() {
    var random = SeededRandom(seed: 1)
    var machine = Machine(reader: reader())
    let asked = machine.connectRequested(around, random: &random)
    #expect(asked.contains(.arm(.connect, after: reader().connectLatency)))
    var off = around
    off.radioOn = false
    let failed = machine.radioChanged(off, random: &random)
    #expect(failed.contains(.disarm(.connect)))
    guard case .radio(.didFailToConnect(_, let error))? = events(failed).first else {
      Issue.record("expected a failed connect in \(failed)")
      return
    }
    #expect(error.code == .bluetoothDisabled)
    #expect(machine.timerFired(.connect, around, random: &random) == [], "a late link is not taken")
  }

  @Test func onlyM2AndWisePadRebootThemselvesAfterADay() {
    var m2 = Machine(reader: reader(.stripeM2))
    var chipper = Machine(reader: reader(.chipper2X))
    #expect(m2.added().contains(.arm(.securityReboot, after: .seconds(24 * 3600))))
    #expect(arms(chipper.added()) == [.idlePowerDown])
  }

  @Test func aReaderOnBatteryLeftIdleSwitchesOffButOneChargingDoesNot() {
    var random = SeededRandom(seed: 1)
    var battery = Machine(reader: reader(charging: false))
    _ = battery.added()
    let idle = battery.timerFired(.idlePowerDown, around, random: &random)
    #expect(records(idle) == ["idlePowerDown"])
    #expect(!battery.reader.isPoweredOn)

    var charging = Machine(reader: reader(charging: true))
    _ = charging.added()
    #expect(
      charging.timerFired(.idlePowerDown, around, random: &random) == [
        .arm(.idlePowerDown, after: Machine.idlePowerDownInterval)
      ])
    #expect(charging.reader.isPoweredOn)
  }

  @Test func anInstallIsHostActivityThatRestartsTheIdleCount() {
    var random = SeededRandom(seed: 1)
    var machine = Machine(reader: reader())
    _ = machine.added()
    linked(&machine, random: &random)
    let started = machine.installRequested(update: update, image: nil)
    #expect(
      Array(started.prefix(2)) == [
        .disarm(.idlePowerDown), .arm(.idlePowerDown, after: Machine.idlePowerDownInterval),
      ])
    #expect(records(started) == ["updateStarted"])
  }

  @Test func aReaderLowOnBatteryRefusesAnInstall() {
    var random = SeededRandom(seed: 1)
    var machine = Machine(reader: reader(battery: 0.3))
    linked(&machine, random: &random)
    let refused = machine.installRequested(update: update, image: nil)
    #expect(records(refused) == ["updateRefusedLowBattery"])
    #expect(machine.install == nil)
    guard case .link(.updateFinished(_, let error))? = events(refused).first else {
      Issue.record("expected a refusal in \(refused)")
      return
    }
    #expect(error?.code == .readerSoftwareUpdateFailedBatteryLow)
  }

  @Test func theNewVersionIsTakenOnlyAtTheLastStepAndALostLinkKeepsTheOldOne() {
    var random = SeededRandom(seed: 1)
    var machine = Machine(reader: reader())
    linked(&machine, random: &random)
    _ = machine.installRequested(update: update, image: nil)
    for _ in 1..<Machine.updateSteps {
      _ = machine.timerFired(.installStep, around, random: &random)
      #expect(machine.reader.softwareVersion == "2.01.00.17")
    }
    let last = machine.timerFired(.installStep, around, random: &random)
    #expect(machine.reader.softwareVersion == "2.01.00.18")
    #expect(records(last) == ["updateInstalled"])

    var lost = Machine(reader: reader())
    linked(&lost, random: &random)
    _ = lost.installRequested(update: update, image: nil)
    _ = lost.timerFired(.installStep, around, random: &random)
    let dropped = lost.dropLink(around, random: &random)
    #expect(records(dropped) == ["linkLost", "updateInterrupted"])
    #expect(lost.timerFired(.installStep, around, random: &random) == [], "a step after the link dropped")
    #expect(lost.reader.softwareVersion == "2.01.00.17")
  }

  @Test func aScaledAdvertisingIntervalIsExactlyWhatDurationTimesDoubleGives() {
    let seed: UInt64 = 20
    print("seed \(seed)")
    var random = SeededRandom(seed: seed)
    let intervals: [Duration] = [
      .microseconds(1), .milliseconds(100), .seconds(1), .nanoseconds(123_456_789), .seconds(9), .seconds(3600),
      .seconds(86_400 * 365),
    ]
    for interval in intervals {
      let scaled = Machine.Interval(interval)
      for factor in [0, 0.8, 1, 1.2, 0.999_999_999] + (0..<5_000).map({ _ in 1.5 * random.nextUnit() }) {
        #expect(scaled.scaled(by: factor) == interval * factor, "seed \(seed): \(interval) times \(factor)")
      }
    }
  }
}
