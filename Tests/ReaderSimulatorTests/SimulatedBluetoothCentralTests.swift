import ReaderCore
import ReaderSimulator
import Testing

/// A world with a recorder installed as its host.
private struct World {
  let clock = VirtualClock()
  let world: SimulatedBluetoothCentral

  init(_ readers: [SimulatedReader], seed: UInt64 = 3) {
    world = SimulatedBluetoothCentral(clock: clock, seed: seed)
    for reader in readers { world.add(reader) }
  }

  /// Starts recording what the world reports to its host.
  func listen() -> Recorder {
    let recorder = Recorder()
    world.setEventHandler { event in recorder.append(.radio(event)) }
    world.setLinkEventHandler { event in recorder.append(.link(event)) }
    return recorder
  }

  func kinds(of serial: String? = nil) -> [String] {
    world.worldEvents.filter { serial == nil || $0.serialNumber == serial }.map(\.kind)
  }
}

/// What the host heard, from the radio or over a reader's link, in order.
private enum Heard: Equatable {
  case radio(BluetoothEvent)
  case link(ReaderLinkEvent)
}

private final class Recorder: Sendable {
  private let events = Locked<[Heard]>([])
  func append(_ event: Heard) { events.withLock { $0.append(event) } }
  var heard: [Heard] { events.withLock { $0 } }
  /// The radio's events.
  var all: [BluetoothEvent] { heard.compactMap { if case .radio(let event) = $0 { event } else { nil } } }
  var advertisers: Set<String> {
    Set(all.compactMap { if case .advertisement(let ad) = $0 { ad.serialNumber } else { nil } })
  }
  var links: [BluetoothEvent] {
    all.filter { if case .advertisement = $0 { false } else { true } }
  }
}

private let m2 = SimulatedReader(serialNumber: "STRM2-1", deviceType: .stripeM2, isCharging: true)
private let chipper = SimulatedReader(serialNumber: "CHB20-2", deviceType: .chipper2X, distance: 0.5)
private let hour = Duration.seconds(3600)

@Suite struct SimulatedBluetoothCentralTests {
  @Test func readersAdvertiseOnlyWhileAScanRuns() {
    let w = World([m2, chipper])
    let host = w.listen()
    w.clock.advance(by: .seconds(5))
    #expect(host.all.isEmpty)
    w.world.startScan()
    #expect(w.world.isScanning)
    w.clock.advance(by: .seconds(5))
    #expect(host.advertisers == ["STRM2-1", "CHB20-2"])
    let count = host.all.count
    #expect((8...14).contains(count))  // About one a second each.
    w.world.stopScan()
    w.clock.advance(by: .seconds(5))
    #expect(host.all.count == count)
  }

  @Test func advertisementsCarryTheReadersCurrentVersionBatteryAndLabel() {
    var labelled = chipper
    labelled.label = "Front desk"
    labelled.softwareVersion = "2.01.00.18"
    let w = World([labelled])
    let recorder = w.listen()
    w.world.setBattery("CHB20-2", level: 0.5, isCharging: true)
    w.world.setSoftwareVersion("CHB20-2", "2.02.00.01")
    // The level alone, last, so that nothing else the reader's details follow changes with it.
    w.world.setBattery("CHB20-2", level: 0.42)
    w.world.startScan()
    w.clock.advance(to: .seconds(3))
    let infos = recorder.all.compactMap { if case .advertisement(let ad) = $0 { ad.info } else { nil } }
    #expect(!infos.isEmpty)
    #expect(
      Set(infos) == [
        ReaderInfo(deviceSoftwareVersion: "2.02.00.01", batteryLevel: 0.42, isCharging: true, label: "Front desk")
      ])
  }

  @Test func readersAdvertiseOnceAnAdvertisingInterval() {
    let clock = VirtualClock()
    let world = SimulatedBluetoothCentral(clock: clock, seed: 3, advertisingInterval: .milliseconds(100))
    #expect(world.advertisingInterval == .milliseconds(100))
    for reader in [m2, chipper] { world.add(reader) }
    let host = Recorder()
    world.setEventHandler { host.append(.radio($0)) }
    world.startScan()
    clock.advance(by: .seconds(10))
    var counts: [String: Int] = [:]
    for case .advertisement(let ad) in host.all { counts[ad.serialNumber, default: 0] += 1 }
    #expect(counts.keys.sorted() == ["CHB20-2", "STRM2-1"])
    // Every 80 to 120 ms after a first one within 100 ms: from 83 to 126 in 10 s each, about 100.
    for (serial, count) in counts { #expect((83...126).contains(count), "\(serial): \(count)") }
  }

  @Test func nearerReadersAdvertiseAStrongerSignal() {
    #expect(chipper.meanSignalStrength > m2.meanSignalStrength)
    #expect(SimulatedReader(serialNumber: "x", deviceType: .wisePad3, distance: 1).meanSignalStrength == -45)
  }

  @Test func theWorldKeepsItsLatestEventsAndCountsEveryOne() {
    let clock = VirtualClock()
    let world = SimulatedBluetoothCentral(clock: clock, seed: 3, logCapacity: 4)
    world.add(m2)
    let first = world.changeCount
    for round in 0..<5 {
      world.setInRange("STRM2-1", round % 2 == 1)
      clock.advance(by: .seconds(1))
    }
    let events = world.worldEvents
    #expect(world.changeCount >= first + 5)
    #expect(events.count == 4)
    // The latest, oldest first: the last reachability changes, in the order they happened.
    #expect(events.map(\.time) == events.map(\.time).sorted())
    #expect(events.last?.time == .seconds(4))
  }

  @Test func connectToAnUnreachableReaderWaitsUntilItIsBack() {
    let w = World([m2])
    let host = w.listen()
    w.world.setInRange("STRM2-1", false)
    w.world.connect(serialNumber: "STRM2-1")
    w.clock.advance(by: .seconds(60))
    #expect(host.links.isEmpty)
    w.world.setInRange("STRM2-1", true)
    w.clock.advance(by: m2.connectLatency - .milliseconds(1))
    #expect(host.links.isEmpty)
    w.clock.advance(by: .milliseconds(1))
    #expect(host.links.count == 1)
    guard case .didConnect("STRM2-1", _)? = host.links.first else {
      Issue.record("expected a connect, got \(host.links)")
      return
    }
  }

  @Test func abandonedConnectNeverCompletes() {
    let w = World([m2])
    let host = w.listen()
    w.world.connect(serialNumber: "STRM2-1")
    w.clock.advance(by: .milliseconds(500))
    w.world.cancelConnect(serialNumber: "STRM2-1")
    w.clock.advance(by: .seconds(10))
    #expect(host.links.isEmpty)
  }

  @Test func lettingGoOfALiveLinkSaysNothingAndTheReaderAdvertisesAgain() {
    let w = World([m2])
    let host = w.listen()
    w.world.connect(serialNumber: "STRM2-1")
    w.clock.advance(by: .seconds(2))
    let linkEvents = host.links.count
    w.world.cancelConnect(serialNumber: "STRM2-1")
    w.world.startScan()
    w.clock.advance(by: .seconds(3))
    #expect(host.links.count == linkEvents, "no event follows")
    #expect(host.advertisers == ["STRM2-1"])
    #expect(w.kinds(of: "STRM2-1").contains("linkAbandoned"))
  }

  @Test func connectRequestsAreCountedEvenWhenTheRadioRefusesThem() {
    let w = World([m2])
    let host = w.listen()
    w.world.setRadio(on: false)
    w.world.connect(serialNumber: "STRM2-1")
    w.clock.runUntilIdle()
    #expect(w.world.connectRequestCount("STRM2-1") == 1)
    #expect(
      host.links.last
        == .didFailToConnect(serialNumber: "STRM2-1", error: ReaderError(.bluetoothDisabled, "Bluetooth is off")))
    w.world.setRadio(on: true)
    w.world.connect(serialNumber: "STRM2-1")
    #expect(w.world.connectRequestCount("STRM2-1") == 2)
    #expect(w.world.connectRequestCount("nobody") == 0)
  }

  @Test func eachFaultDropsTheLinkWithItsReason() {
    let faults: [(String, DisconnectReason, (SimulatedBluetoothCentral) -> Void)] = [
      ("range", .bluetoothSignalLost, { $0.setInRange("STRM2-1", false) }),
      ("power", .poweredOff, { $0.setPower("STRM2-1", on: false) }),
      ("radio", .bluetoothDisabled, { $0.setRadio(on: false) }),
      ("battery", .criticallyLowBattery, { $0.setBattery("STRM2-1", level: 0.05, isCharging: false) }),
      ("security", .securityReboot, { $0.forceSecurityReboot("STRM2-1") }),
      ("link loss", .unknown, { $0.dropLink("STRM2-1") }),
    ]
    for (name, reason, inflict) in faults {
      let w = World([m2])
      let host = w.listen()
      w.world.connect(serialNumber: "STRM2-1")
      w.clock.advance(by: .seconds(2))
      inflict(w.world)
      w.clock.runUntilIdle()
      #expect(host.links.last == .didDisconnect(serialNumber: "STRM2-1", reason: reason), "\(name)")
    }
  }

  @Test func aLostLinkLeavesTheReaderReadyToConnectAgainAtOnce() {
    let w = World([m2])
    let host = w.listen()
    w.world.dropLink("STRM2-1")  // Nothing to drop yet: ignored.
    #expect(!w.kinds().contains("linkLost"))
    w.world.connect(serialNumber: "STRM2-1")
    w.clock.advance(by: .seconds(2))
    w.world.dropLink("STRM2-1")
    w.world.dropLink("STRM2-1")  // Already down: ignored.
    #expect(w.kinds(of: "STRM2-1").filter { $0 == "linkLost" }.count == 1)
    w.world.connect(serialNumber: "STRM2-1")
    w.clock.advance(by: .seconds(2))
    guard case .didConnect(let serial, _)? = host.links.last else {
      Issue.record("expected a reconnection, got \(host.links)")
      return
    }
    #expect(serial == "STRM2-1")
    #expect(host.links.filter { $0 == .didDisconnect(serialNumber: "STRM2-1", reason: .unknown) }.count == 1)
  }

  @Test func securityRebootComesTwentyFourHoursAfterStartAndRestartsAfterAReboot() {
    let w = World([m2, chipper])
    w.clock.advance(by: hour * 24 - .milliseconds(1))
    #expect(!w.kinds().contains("securityReboot"))
    w.clock.advance(by: .milliseconds(1))
    #expect(w.kinds(of: "STRM2-1") == ["securityReboot"])
    w.clock.advance(by: m2.rebootDuration)
    #expect(w.kinds(of: "STRM2-1") == ["securityReboot", "rebooted"])
    // The next one counts from the end of this reboot; the Chipper never reboots.
    w.clock.advance(by: hour * 24 - .milliseconds(1))
    #expect(w.kinds(of: "STRM2-1").count == 2)
    w.clock.advance(by: .milliseconds(1))
    #expect(w.kinds(of: "STRM2-1").last == "securityReboot")
    #expect(!w.kinds(of: "CHB20-2").contains("securityReboot"))
  }

  @Test func forcedSecurityRebootIsIgnoredByAChipper() {
    let w = World([chipper])
    w.world.forceSecurityReboot("CHB20-2")
    w.clock.advance(by: .seconds(30))
    #expect(w.kinds().isEmpty)
  }

  @Test func readerOnBatteryPowersDownWhenIdleButNotOnItsCharger() {
    let w = World([m2, chipper])
    w.clock.advance(by: hour * 10 - .milliseconds(1))
    #expect(!w.kinds().contains("idlePowerDown"))
    w.clock.advance(by: .milliseconds(1))
    #expect(w.world.worldEvents.filter { $0.kind == "idlePowerDown" }.map(\.serialNumber) == ["CHB20-2"])
    #expect(w.world.reader("CHB20-2")?.isPoweredOn == false)
    #expect(w.world.reader("STRM2-1")?.isPoweredOn == true)
  }

  @Test func aWorldOfSwitchedOffReadersLeavesNoWorkOnTheClock() {
    let w = World([m2, chipper])
    _ = w.listen()
    w.world.startScan()
    w.world.connect(serialNumber: "STRM2-1")
    w.clock.advance(by: .seconds(5))
    w.world.stopScan()
    w.world.setPower("STRM2-1", on: false)
    w.world.setPower("CHB20-2", on: false)
    w.world.connect(serialNumber: "CHB20-2")  // A request to a reader that is off arms nothing.
    w.clock.runUntilIdle()
    #expect(w.clock.checkNoPendingWork() == nil)
  }

  @Test func terminatingTheHostAppDropsLinksSilentlyAndReadersAdvertiseAgain() {
    let w = World([m2])
    let oldHost = w.listen()
    w.world.connect(serialNumber: "STRM2-1")
    w.clock.advance(by: .seconds(2))
    #expect(oldHost.links.count == 1)
    w.world.terminateHostApp()
    #expect(!w.world.isScanning)
    w.clock.advance(by: .seconds(5))
    #expect(oldHost.links.count == 1)

    let newHost = w.listen()
    w.world.startScan()
    w.clock.advance(by: .seconds(2))
    #expect(newHost.advertisers == ["STRM2-1"])
    w.world.connect(serialNumber: "STRM2-1")
    w.clock.advance(by: .seconds(2))
    #expect(newHost.links.count == 1)
  }

  @Test func rebootAnswersThenDropsTheLinkThenComesBack() {
    let w = World([m2])
    let host = w.listen()
    w.world.connect(serialNumber: "STRM2-1")
    w.clock.advance(by: .seconds(2))
    w.world.reboot(serialNumber: "STRM2-1")
    w.clock.advance(by: .seconds(1))
    #expect(
      host.heard.suffix(2) == [
        .link(.rebootResponse(serialNumber: "STRM2-1", error: nil)),
        .radio(.didDisconnect(serialNumber: "STRM2-1", reason: .rebootRequested)),
      ])
    w.clock.advance(by: m2.rebootDuration)
    #expect(w.kinds(of: "STRM2-1").suffix(2) == ["rebooting", "rebooted"])
  }

  @Test func anInstallRestartsTheIdleCountAndLeavesNoEarlierCountRunning() {
    let w = World([SimulatedReader(serialNumber: "STRM2-1", deviceType: .stripeM2, isCharging: false)])
    _ = w.listen()
    w.world.connect(serialNumber: "STRM2-1")
    w.clock.advance(by: .seconds(2))
    let update = ReaderSoftwareUpdate(
      deviceSoftwareVersion: "2.01.00.18", durationEstimate: .estimateLessThan1Minute, components: [.config],
      requiredAt: VirtualClock.simulationEpoch)
    w.clock.advance(to: .seconds(3600))
    w.world.installUpdate(serialNumber: "STRM2-1", update: update, image: nil)
    w.clock.advance(to: .seconds(6 * 3600))
    w.world.setSoftwareVersion("STRM2-1", "2.01.00.17")
    w.world.installUpdate(serialNumber: "STRM2-1", update: update, image: nil)
    // The count of the first install would end at 11 h; the second one's at 16 h.
    w.clock.advance(to: .seconds(12 * 3600))
    #expect(w.world.reader("STRM2-1")?.isPoweredOn == true, "\(w.kinds(of: "STRM2-1"))")
    w.clock.advance(to: .seconds(16 * 3600 + 1))
    #expect(w.kinds(of: "STRM2-1").last == "idlePowerDown")
  }

  @Test func aWorldWhoseReadersAdvertisedAndItsClockAreFreedOnceItsWorkHasStopped() {
    // Each reader's advertising work holds the world's state, which holds it and the clock: without the
    // world breaking that cycle when it is freed, the state and the clock would never be.
    weak var freedClock: VirtualClock?
    weak var freedWorld: SimulatedBluetoothCentral?
    do {
      let clock = VirtualClock()
      freedClock = clock
      let world = SimulatedBluetoothCentral(clock: clock, seed: 3)
      freedWorld = world
      for reader in [m2, chipper] { world.add(reader) }
      let recorder = Recorder()
      world.setEventHandler { event in recorder.append(.radio(event)) }
      world.startScan()
      clock.advance(to: .seconds(5))
      #expect(recorder.advertisers == ["STRM2-1", "CHB20-2"])
      world.terminateHostApp()
      for reader in world.readers { world.setPower(reader.serialNumber, on: false) }
      #expect(clock.runUntilQuiet(limit: clock.elapsed + .seconds(86_400)))
    }
    #expect(freedWorld == nil, "the world outlives its work")
    #expect(freedClock == nil, "the readers' advertising work keeps the world's clock alive")
  }
}
