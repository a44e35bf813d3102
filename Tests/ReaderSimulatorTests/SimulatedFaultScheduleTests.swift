import ReaderCore
import ReaderSimulator
import Testing

private typealias Fault = SimulatedFaultSchedule.Fault

@Suite struct SimulatedFaultScheduleTests {
  @Test func scriptedFaultsAreSortedAndEndWhenTheLastOneIsOver() {
    let schedule = SimulatedFaultSchedule([
      Fault(at: .seconds(50), .securityReboot, serialNumber: "STRM2-1"),
      Fault(at: .seconds(10), .walkAway(.seconds(100)), serialNumber: "STRM2-1"),
      Fault(at: .seconds(10), .radioOff(.seconds(5)), serialNumber: nil),
    ])
    #expect(schedule.faults.map(\.time) == [.seconds(10), .seconds(10), .seconds(50)])
    #expect(schedule.faults.first?.kind == .walkAway(.seconds(100)))  // Same time: kept in order.
    #expect(schedule.end == .seconds(110))
    #expect(schedule.description.split(separator: "\n").first == "10.0 seconds STRM2-1 walkAway(100.0 seconds)")
    #expect(SimulatedFaultSchedule([]).end == .zero)
  }

  @Test func appliedFaultsHappenAtTheirTimesAndUndoThemselves() {
    let clock = VirtualClock()
    let world = SimulatedBluetoothCentral(clock: clock, seed: 1)
    world.add(SimulatedReader(serialNumber: "STRM2-1", deviceType: .stripeM2))
    clock.advance(by: .seconds(100))
    SimulatedFaultSchedule([
      Fault(at: .seconds(10), .walkAway(.seconds(20)), serialNumber: "STRM2-1"),
      Fault(at: .seconds(40), .powerCycle(.seconds(5)), serialNumber: "STRM2-1"),
      Fault(at: .seconds(50), .radioOff(.seconds(3)), serialNumber: nil),
      Fault(at: .seconds(60), .securityReboot, serialNumber: "STRM2-1"),
      Fault(at: .seconds(100), .batteryDrain(to: 0.02, over: .seconds(120)), serialNumber: "STRM2-1"),
      Fault(at: .seconds(300), .charge(to: 0.9), serialNumber: "STRM2-1"),
    ]).apply(to: world)
    clock.advance(by: .seconds(400))

    let log = world.worldEvents.map { "\($0.time - .seconds(100)) \($0.kind)" }
    #expect(
      log == [
        "10.0 seconds outOfRange", "30.0 seconds backInRange", "40.0 seconds poweredOff", "45.0 seconds poweredOn",
        "50.0 seconds radioOff", "53.0 seconds radioOn", "60.0 seconds securityReboot", "72.0 seconds rebooted",
        "220.0 seconds criticalBatteryShutdown", "300.0 seconds poweredOn",
      ])
    let reader = world.reader("STRM2-1")
    #expect(reader?.isPoweredOn == true && reader?.isCharging == true && reader?.batteryLevel == 0.9)
  }

  @Test func randomScheduleIsAFunctionOfItsSeed() {
    let serials = ["STRM2-1", "WPC32-2"]
    let a = SimulatedFaultSchedule.random(seed: 5, serialNumbers: serials, over: .seconds(36_000))
    #expect(a == SimulatedFaultSchedule.random(seed: 5, serialNumbers: serials, over: .seconds(36_000)))
    #expect(a != SimulatedFaultSchedule.random(seed: 6, serialNumbers: serials, over: .seconds(36_000)))
  }

  @Test(arguments: UInt64(0)..<20)
  func randomScheduleStaysWithinItsBounds(seed: UInt64) {
    let serials = ["STRM2-1", "WPC32-2", "CHB20-3"]
    let duration = Duration.seconds(6 * 3600)
    let schedule = SimulatedFaultSchedule.random(
      seed: seed, serialNumbers: serials, over: duration, meanInterval: .seconds(300))
    let starts = schedule.faults.filter { if case .charge = $0.kind { false } else { true } }
    // A Poisson process with mean 300 s over 6 h: about 72 faults.
    #expect((30...130).contains(starts.count), "seed \(seed)")
    #expect(starts.allSatisfy { $0.time < duration })
    #expect(schedule.faults.map(\.time) == schedule.faults.map(\.time).sorted())
    for fault in schedule.faults {
      switch fault.kind {
      case .walkAway(let d): #expect(d >= .seconds(2) && d <= .seconds(300))
      case .powerCycle(let d): #expect(d >= .seconds(5) && d <= .seconds(180))
      case .radioOff(let d):
        #expect(d >= .seconds(2) && d <= .seconds(180))
        #expect(fault.serialNumber == nil)
      case .batteryDrain(let level, let d):
        #expect(level >= 0.01 && level <= 0.5)
        #expect(d >= .seconds(60) && d <= .seconds(1800))
        // Every drain is followed by a charge of the same reader.
        #expect(
          schedule.faults.contains {
            $0.kind == .charge(to: 0.9) && $0.serialNumber == fault.serialNumber && $0.time > fault.time + d
          })
      case .charge, .securityReboot, .linkLoss: break
      }
      if fault.serialNumber != nil { #expect(serials.contains(fault.serialNumber!)) }
    }
    #expect(schedule.faults.allSatisfy { $0.time + $0.kind.duration <= schedule.end })
  }

  @Test func randomScheduleDrawsOnlyTheRequestedCategories() {
    let schedule = SimulatedFaultSchedule.random(
      seed: 1, serialNumbers: ["STRM2-1"], over: .seconds(36_000), categories: [.walkAway, .securityReboot])
    #expect(!schedule.faults.isEmpty)
    #expect(
      schedule.faults.allSatisfy {
        if case .walkAway = $0.kind { return true }
        return $0.kind == .securityReboot
      })
    #expect(SimulatedFaultSchedule.random(seed: 1, serialNumbers: [], over: .seconds(100)).faults.isEmpty)
    #expect(
      SimulatedFaultSchedule.random(seed: 1, serialNumbers: ["a"], over: .seconds(100), categories: []).faults.isEmpty)
  }
}
