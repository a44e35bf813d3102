import Foundation
import ReaderKit
import ReaderSimulator

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Benchmarks discovery at scale: `readers` simulated readers advertising at `rate` Hz while a `Terminal` on a
/// `VirtualClock` scans with a delegate, for each size of `sizes` and each rate of `rates`; prints the times
/// and returns the ratios, each taken within one round (see `Comparison`).
///
/// Each size and rate runs in a child process of its own (`reader-bench discovery --size N --rate R`, see
/// `measureDiscovery(readers:rate:)`), so that the peak memory reported for it is its own.
func runDiscoveryBenchmark(sizes: [Int], rates: [Int]) -> [Ratio] {
  var value: [String: [Double]] = [:]
  for rate in rates {
    for size in sizes {
      do {
        value.merge(try DiscoveryChild.measure(readers: size, rate: rate)) { $1 }
      } catch {
        FileHandle.standardError.write(
          Data("reader-bench: discovery at \(size) readers and \(rate) Hz failed: \(error)\n".utf8))
        exit(1)
      }
    }
  }
  return printDiscoveryBenchmark(value, sizes: sizes, rates: rates)
}

/// The fleet sizes and advertising rates (Hz) `reader-bench discovery` measures.
let discoveryBenchmarkSizes = [100, 1_000, 10_000]
let discoveryBenchmarkRates = [10, 1]

/// The names of the cases of one size and rate, in the order they are printed.
private let discoveryCases = ["pipeline", "simulator", "terminal", "baseline", "bareApp"]

/// Measures discovery with `readers` readers advertising at `rate` Hz in this process; the body of
/// `reader-bench discovery --size N --rate R`. Returns `key values…` pairs: one value for counts, one per round
/// for times and ratios.
///
/// In order: one scene with the terminal, after which the process's peak resident memory is read (nothing
/// bigger ran before it); one scene recording the advertisements; then, taking turns round after round: the
/// terminal on the simulated world (the pipeline), the same world with a handler that does nothing (the
/// simulator's own cost), the same world with a handler storing each advertisement in a dictionary (an app
/// doing only that), the recorded advertisements replayed to a terminal without the simulator (the
/// terminal's own cost), and the recorded window stored into a dictionary by a loop (the baseline). Every
/// scene must see the same advertisements in the same order, or the run stops: the comparison is only fair
/// on the same work.
func measureDiscovery(readers: Int, rate: Int) -> [(String, [Double])] {
  let startRSS = DiscoveryMemory.residentMegabytes(peak: false)
  let plan = DiscoveryPlan(readers: readers, rate: rate)

  let probe = plan.scene(.terminal)
  probe.scan()
  let peakRSS = DiscoveryMemory.residentMegabytes(peak: true)
  let expected = probe.finish()

  let recorder = plan.scene(.recorder)
  recorder.scan()
  let (warmUp, window) = recorder.recorded()
  precondition(recorder.finish() == expected, "the recorder saw the terminal's advertisements")

  func trial(_ name: String, _ makeScene: @escaping () -> any DiscoveryBenchScene) -> Comparison.Case {
    Comparison.Case.withSetUp(name) {
      let scene = makeScene()
      return (
        { scene.scan() },
        {
          let seen = scene.finish()
          precondition(seen == expected, "\(scene.name) saw \(seen), the terminal \(expected): not the same work")
        }
      )
    }
  }
  let timings = Comparison([
    trial("pipeline") { plan.scene(.terminal) }, trial("simulator") { plan.scene(.nothing) },
    trial("bareApp") { plan.scene(.bareTable) },
    trial("terminal") { ReplayScene(plan: plan, warmUp: warmUp, window: window) },
    Comparison.Case.withSetUp("baseline") {
      let table = BareTable(warmUp)
      return ({ table.store(window) }, {})
    },
  ]).measure()

  let count = Double(expected.count)
  let key = "discovery.\(readers).\(rate)"
  var results: [(String, [Double])] = [
    ("\(key).advertisements", [count]),
    ("\(key).simulatedSeconds", [plan.window.seconds]),
    ("\(key).updates", [Double(expected.updates)]),
    ("\(key).peakRSS.MB", [peakRSS]),
    ("\(key).startRSS.MB", [startRSS]),
    ("\(key).realTime", timings.times("pipeline").map { plan.window.seconds / $0 }),
    ("\(key).realTimeCPU", timings.times("pipeline", .cpu).map { plan.window.seconds / $0 }),
  ]
  for clock in [Timings.Clock.wall, .cpu] {
    func times(_ name: String) -> [Double] { timings.times(name, clock) }
    results += discoveryCases.map { name in ("\(key).\(clock).\(name).ns", times(name).map { $0 / count * 1e9 }) }
    results += [
      ("\(key).\(clock).terminalToBaseline", zip(times("terminal"), times("baseline")).map(/)),
      (
        "\(key).\(clock).pipelineLessSimulatorToBaseline",
        zip(zip(times("pipeline"), times("simulator")), times("baseline")).map { ($0.0 - $0.1) / $1 }
      ),
      ("\(key).\(clock).pipelineToBareApp", zip(times("pipeline"), times("bareApp")).map(/)),
    ]
  }
  return results
}

/// Prints the discovery benchmark's results: what was measured, the times per advertisement for each size and
/// rate, then the ratios; returns the ratios.
func printDiscoveryBenchmark(_ value: [String: [Double]], sizes: [Int], rates: [Int]) -> [Ratio] {
  func values(_ size: Int, _ rate: Int, _ name: String) -> [Double] { value["discovery.\(size).\(rate).\(name)"] ?? [] }
  func number(_ size: Int, _ rate: Int, _ name: String) -> Double { Ratio.median(values(size, rate, name)) }
  var lines = [
    "Discovery benchmark: readers advertising at 10 Hz or 1 Hz (every 0.8 to 1.2 intervals) to a Terminal scanning "
      + "with a delegate on a VirtualClock, each size and rate in a process of its own",
    "  each round: a fresh world, 2 simulated seconds of scanning (not timed), then a timed window of about 200,000 "
      + "advertisements; \(BenchOptions.current.rounds) rounds, the cases taking turns",
    "  pipeline  simulated world -> engine -> discovery machine -> delegate (every 0.5 s: the list in order, a "
      + "report when it changed, a delegate call that reads it)",
    "  simulator the same world and scan with a handler that does nothing: making the advertisements and delivering "
      + "each as a work item on the clock",
    "  terminal  the same advertisements (recorded) played straight to a terminal's radio handler, 100 ms of them per "
      + "work item: the engine, the machine, its ticks and reports, the delegate",
    "  baseline  a loop storing the same advertisements (the same serial strings in the same order) in a "
      + "[String: (advertisement, lastSeen)]",
    "  bare app  the same world with a handler doing the baseline's update; pipeline / bare app compares whole runs",
    "  times per advertisement (medians): wall time, and below it the thread's CPU time (less disturbed by a busy "
      + "machine)",
    "",
    "   readers  rate  advertisements  delegate calls    pipeline   simulator    terminal    baseline    bare app",
  ]
  for rate in rates {
    for size in sizes where !values(size, rate, "advertisements").isEmpty {
      for clock in ["wall", "cpu"] {
        let head =
          clock == "wall"
          ? grouped(size).leftPadded(10) + "\(rate) Hz".leftPadded(6)
            + grouped(Int(number(size, rate, "advertisements"))).leftPadded(16)
            + String(Int(number(size, rate, "updates"))).leftPadded(16)
          : "  (CPU)".padding(toLength: 48, withPad: " ", startingAt: 0)
        let times = discoveryCases.map { nanoseconds(number(size, rate, "\(clock).\($0).ns")).leftPadded(12) }
        lines.append(head + times.joined())
      }
    }
  }
  lines.append("")
  var ratios: [Ratio] = []
  for rate in rates {
    for size in sizes where !values(size, rate, "advertisements").isEmpty {
      let name = "discovery(\(grouped(size)) readers, \(rate) Hz)"
      ratios += [
        Ratio(
          name: "\(name): terminal / baseline", samples: values(size, rate, "wall.terminalToBaseline"),
          goal: .atMost(3)),
        Ratio(
          name: "\(name): terminal / baseline, CPU", samples: values(size, rate, "cpu.terminalToBaseline"), goal: nil),
        Ratio(
          name: "\(name): (pipeline - simulator) / baseline",
          samples: values(size, rate, "wall.pipelineLessSimulatorToBaseline"), goal: nil),
        Ratio(name: "\(name): pipeline / bare app", samples: values(size, rate, "wall.pipelineToBareApp"), goal: nil),
        Ratio(
          name: "world(\(grouped(size)) readers, \(rate) Hz): simulated / wall time",
          samples: values(size, rate, "realTime"), goal: size >= 10_000 && rate >= 10 ? .atLeast(20) : nil),
        // The thread's CPU time: what the world costs when the machine is not shared.
        Ratio(
          name: "world(\(grouped(size)) readers, \(rate) Hz): simulated / CPU time",
          samples: values(size, rate, "realTimeCPU"), goal: nil),
      ]
      lines.append(
        "  \(grouped(size)) readers at \(rate) Hz: peak RSS "
          + String(
            format: "%.1f MB (%.1f MB at start)", number(size, rate, "peakRSS.MB"), number(size, rate, "startRSS.MB")))
    }
  }
  lines += ratios.map(\.line)
  print(lines.joined(separator: "\n"))
  return ratios
}

private func grouped(_ value: Int) -> String {
  let digits = String(value)
  return digits.enumerated().map { index, digit in
    index > 0 && (digits.count - index) % 3 == 0 ? ",\(digit)" : "\(digit)"
  }.joined()
}

private func nanoseconds(_ value: Double) -> String {
  String(format: value < 10 ? "%.2f ns" : value < 100 ? "%.1f ns" : "%.0f ns", value)
}

extension String {
  fileprivate func leftPadded(_ width: Int) -> String {
    count >= width ? " " + self : String(repeating: " ", count: width - count) + self
  }
}

/// An advertisement and when it was heard.
private typealias Heard = (advertisement: Advertisement, time: Duration)

/// What every scene of one size shares: the fleet, the seed, the warm-up and the timed window.
private struct DiscoveryPlan {
  let readers: [SimulatedReader]
  /// Scanning before the timed window: every reader is heard and the lists are full when timing starts.
  let warmUp = Duration.seconds(2)
  /// The timed window: about 200,000 advertisements at 10 Hz, and whole update intervals.
  let window: Duration

  /// The mean interval between two advertisements of one reader.
  let advertisingInterval: Duration

  init(readers count: Int, rate: Int) {
    readers = SimulatedFleet.readers(count: count, seed: 2_024)
    advertisingInterval = .seconds(1) / max(1, rate)
    window = .seconds(max(2, 200_000 / max(1, count * rate)))
  }

  func scene(_ host: DiscoveryScene.Host) -> DiscoveryScene {
    DiscoveryScene(
      readers: readers, host: host, advertisingInterval: advertisingInterval, warmUp: warmUp, window: window)
  }
}

/// What the timed runs of a size measure: a scan, then a check that it saw the expected advertisements.
private protocol DiscoveryBenchScene: AnyObject {
  /// What it is, for messages.
  var name: String { get }
  /// The timed part: scanning for the window.
  func scan()
  /// Stops everything, so the scene is freed; returns what the window saw.
  func finish() -> DiscoveryScene.Seen
}

/// The recorded advertisements played back to a `Terminal` on its clock, with no simulated world: the
/// terminal's own cost per advertisement.
///
/// Each 100 ms of the recording is one work item on the clock that hands its advertisements to the
/// terminal's radio handler one by one, as a radio would: so the scheduler's cost of one work item per event,
/// which the simulated world pays, is not counted here (it is the simulator's). The terminal sees each
/// advertisement up to 100 ms before its recorded time, which its 0.5 s reporting rhythm does not notice.
private final class ReplayScene: DiscoveryBenchScene, @unchecked Sendable {
  // Only touched on the thread that drives the virtual clock.
  let name = "the replay to a terminal"
  private let clock = VirtualClock()
  private let radio = ReplayRadio()
  /// Held for the scan: the engine only holds its terminal weakly.
  private let terminal: Terminal
  private let discovery: Cancelable
  private let listener = DiscoveryListener()
  private let window: Duration

  init(plan: DiscoveryPlan, warmUp: ArraySlice<Heard>, window: [Heard]) {
    self.window = plan.window
    terminal = Terminal(
      central: radio, scheduler: clock, store: InMemoryReaderStore(), tuning: DiscoveryTuning(), seed: 2_024)
    let scan = try! BluetoothScanDiscoveryConfiguration.Builder().setSimulated(true).build()
    discovery = terminal.discoverReaders(scan, delegate: listener) { _ in }
    clock.runUntilIdle()
    radio.play(warmUp, on: clock)
    radio.play(window[...], on: clock)
    clock.advance(by: plan.warmUp)
    precondition(listener.latestCount == plan.readers.count, "every reader is listed after warm-up")
    radio.resetTap()
    listener.updates = 0
  }

  func scan() {
    clock.advance(by: window)
  }

  func finish() -> DiscoveryScene.Seen {
    let seen = DiscoveryScene.Seen(count: radio.count, fingerprint: radio.fingerprint, updates: listener.updates)
    discovery.cancel()
    clock.runUntilIdle()
    radio.setEventHandler { _ in }
    precondition(clock.pendingWorkCount == 0, "a finished replay leaves no work on its clock")
    return seen
  }
}

/// A radio whose advertisements come from a recording; it counts and fingerprints them as `TappedRadio` does.
private final class ReplayRadio: BluetoothCentral, ReaderLink, @unchecked Sendable {
  // Only touched on the thread that drives the virtual clock.
  private var handler: @Sendable (BluetoothEvent) -> Void = { _ in }
  private(set) var count = 0
  private(set) var fingerprint: UInt64 = 0

  /// Schedules `recording` on `clock`, one work item per 100 ms of it.
  func play(_ recording: ArraySlice<Heard>, on clock: VirtualClock) {
    var start = recording.startIndex
    while start < recording.endIndex {
      let due = recording[start].time
      var end = start
      while end < recording.endIndex && recording[end].time < due + .milliseconds(100) { end += 1 }
      let batch = recording[start..<end]
      clock.schedule(after: due - clock.elapsed) { [self] in
        for (advertisement, _) in batch {
          count += 1
          fingerprint = fingerprint &* 31 &+ UInt64(bitPattern: Int64(advertisement.signalStrength))
          handler(.advertisement(advertisement))
        }
      }
      start = end
    }
  }

  func resetTap() {
    count = 0
    fingerprint = 0
  }

  func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) { self.handler = handler }
  var isPoweredOn: Bool { true }
  func startScan() {}
  func stopScan() {}
  func connect(serialNumber: String) {}
  func cancelConnect(serialNumber: String) {}
  func disconnect(serialNumber: String) {}
  func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {}
  func flashLEDs(serialNumber: String) {}
  func reboot(serialNumber: String) {}
  func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?) {}
  func cancelUpdate(serialNumber: String) {}
}

/// One simulated world, its readers advertising every 100 ms, and one host listening to it.
private final class DiscoveryScene: DiscoveryBenchScene, @unchecked Sendable {
  // Only touched on the thread that drives the virtual clock.

  /// Who listens to the radio.
  enum Host {
    /// A `Terminal` running a scan discovery with a delegate.
    case terminal
    /// A handler that does nothing.
    case nothing
    /// A handler storing each advertisement in a `[String: (advertisement, lastSeen)]`.
    case bareTable
    /// A handler recording each advertisement and when it came.
    case recorder
  }

  /// What a scene saw in its timed window; equal for two scenes that saw the same advertisements.
  struct Seen: Equatable, CustomStringConvertible {
    var count: Int
    var fingerprint: UInt64
    /// Delegate calls (terminal scenes only).
    var updates: Int

    static func == (a: Seen, b: Seen) -> Bool { a.count == b.count && a.fingerprint == b.fingerprint }
    var description: String { "\(count) advertisements (fingerprint \(String(fingerprint, radix: 16)))" }
  }

  let clock = VirtualClock()
  let world: SimulatedBluetoothCentral
  private let radio: TappedRadio
  let host: Host
  var name: String { "the \(host) scene" }
  private let window: Duration
  /// Held for the scan: the engine only holds its terminal weakly.
  private var terminal: Terminal?
  private var discovery: Cancelable?
  private let listener = DiscoveryListener()
  private let table = BareTable([])
  private var recording: [Heard] = []
  private var warmUpCount = 0

  init(readers: [SimulatedReader], host: Host, advertisingInterval: Duration, warmUp: Duration, window: Duration) {
    world = SimulatedBluetoothCentral(clock: clock, seed: 2_024, advertisingInterval: advertisingInterval)
    radio = TappedRadio(world)
    self.host = host
    self.window = window
    for reader in readers { world.add(reader) }
    let clock = self.clock
    switch host {
    case .terminal:
      let terminal = Terminal(
        central: radio, scheduler: clock, store: InMemoryReaderStore(), tuning: DiscoveryTuning(), seed: 2_024)
      // A simulated scan without a timeout: it runs until cancelled.
      let scan = try! BluetoothScanDiscoveryConfiguration.Builder().setSimulated(true).build()
      discovery = terminal.discoverReaders(scan, delegate: listener) { _ in }
      self.terminal = terminal
    case .nothing:
      radio.setEventHandler { _ in }
      radio.startScan()
    case .bareTable:
      radio.setEventHandler { [table] event in
        if case .advertisement(let advertisement) = event { table.store(advertisement, at: clock.elapsed) }
      }
      radio.startScan()
    case .recorder:
      radio.setEventHandler { [self] event in
        if case .advertisement(let advertisement) = event { recording.append((advertisement, clock.elapsed)) }
      }
      radio.startScan()
    }
    clock.advance(by: warmUp)
    precondition(host != .terminal || listener.latestCount == readers.count, "every reader is listed after warm-up")
    warmUpCount = recording.count
    radio.resetTap()
    listener.updates = 0
  }

  /// The timed part: scanning for the window.
  func scan() {
    clock.advance(by: window)
  }

  /// The recorded advertisements, split into the warm-up and the timed window (recorder scenes only).
  func recorded() -> (warmUp: ArraySlice<Heard>, window: [Heard]) {
    (recording[..<warmUpCount], Array(recording[warmUpCount...]))
  }

  /// Stops everything and empties the clock, so the world is freed; returns what the window saw.
  func finish() -> Seen {
    let seen = Seen(count: radio.count, fingerprint: radio.fingerprint, updates: listener.updates)
    if let discovery {
      discovery.cancel()
      clock.runUntilIdle()
    }
    world.terminateHostApp()
    for reader in world.readers { world.setPower(reader.serialNumber, on: false) }
    // What is left on the clock is cancelled work, dropped as it is reached; it holds the world.
    let quiet = clock.runUntilQuiet(limit: clock.elapsed + .seconds(30 * 86_400))
    precondition(quiet, "a finished scene leaves no work on its clock")
    return seen
  }
}

/// The simulated radio, seen through a tap that counts the advertisements and fingerprints their order.
/// Every host of a size listens through it, so each pays for it alike.
private final class TappedRadio: BluetoothCentral, ReaderLink, @unchecked Sendable {
  // Only touched on the thread that drives the virtual clock.
  private let world: SimulatedBluetoothCentral
  private(set) var count = 0
  private(set) var fingerprint: UInt64 = 0

  init(_ world: SimulatedBluetoothCentral) { self.world = world }

  func resetTap() {
    count = 0
    fingerprint = 0
  }

  func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) {
    world.setEventHandler { [self] event in
      if case .advertisement(let advertisement) = event {
        count += 1
        fingerprint = fingerprint &* 31 &+ UInt64(bitPattern: Int64(advertisement.signalStrength))
      }
      handler(event)
    }
  }

  var isPoweredOn: Bool { world.isPoweredOn }
  func startScan() { world.startScan() }
  func stopScan() { world.stopScan() }
  func connect(serialNumber: String) { world.connect(serialNumber: serialNumber) }
  func cancelConnect(serialNumber: String) { world.cancelConnect(serialNumber: serialNumber) }
  func disconnect(serialNumber: String) { world.disconnect(serialNumber: serialNumber) }
  func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {
    world.setLinkEventHandler(handler)
  }
  func flashLEDs(serialNumber: String) { world.flashLEDs(serialNumber: serialNumber) }
  func reboot(serialNumber: String) { world.reboot(serialNumber: serialNumber) }
  func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?) {
    world.installUpdate(serialNumber: serialNumber, update: update, image: image)
  }
  func cancelUpdate(serialNumber: String) { world.cancelUpdate(serialNumber: serialNumber) }
}

/// The app's side of the scan: keeps the latest list's size and nearest reader, as a screen would.
private nonisolated final class DiscoveryListener: DiscoveryDelegate, @unchecked Sendable {
  // Only touched on the thread that drives the virtual clock.
  var updates = 0
  private(set) var latestCount = 0
  private(set) var nearest: String?

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    updates += 1
    latestCount = readers.count
    nearest = readers.first?.serialNumber
  }
}

/// What a bare implementation keeps: the latest advertisement of each reader and when it came.
private final class BareTable: @unchecked Sendable {
  // Only touched on the thread that drives the virtual clock.
  private var entries: [String: (advertisement: Advertisement, lastSeen: Duration)] = [:]

  init(_ advertisements: some Sequence<Heard>) {
    for (advertisement, time) in advertisements { entries[advertisement.serialNumber] = (advertisement, time) }
  }

  func store(_ advertisement: Advertisement, at time: Duration) {
    entries[advertisement.serialNumber] = (advertisement, time)
  }

  /// The baseline loop: the table is taken out of the object while it is updated, as a local variable,
  /// so nothing but the dictionary updates is measured.
  func store(_ advertisements: [Heard]) {
    var table = entries
    entries = [:]
    for (advertisement, time) in advertisements { table[advertisement.serialNumber] = (advertisement, time) }
    entries = table
  }
}

/// Runs each size and rate in a child process: `reader-bench discovery --size N --rate R`, which prints
/// `key values…` lines.
private enum DiscoveryChild {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  static func measure(readers: Int, rate: Int) throws -> [String: [Double]] {
    guard let executable = Bundle.main.executableURL else { throw Failure(description: "no path to reader-bench") }
    let process = Process()
    process.executableURL = executable
    process.arguments =
      ["--rounds", String(BenchOptions.current.rounds)] + (BenchOptions.current.only.map { ["--only", $0] } ?? [])
      + ["discovery", "--size", String(readers), "--rate", String(rate)]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let pid = process.processIdentifier
    let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + 1_800, execute: watchdog)
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    watchdog.cancel()
    guard process.terminationStatus == 0 else {
      throw Failure(description: "the child process exited with status \(process.terminationStatus)")
    }
    var results: [String: [Double]] = [:]
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
      let parts = line.split(separator: " ")
      let values = parts.dropFirst().compactMap { Double($0) }
      guard let key = parts.first, values.count == parts.count - 1 else {
        throw Failure(description: "unexpected line from the child process: \(line)")
      }
      results[String(key)] = values
    }
    return results
  }
}

/// Prints `results` as `key values…` lines, for the parent process.
func printDiscoveryMeasurement(_ results: [(String, [Double])]) {
  print(results.map { ([$0.0] + $0.1.map { "\($0)" }).joined(separator: " ") }.joined(separator: "\n"))
}

/// The process's resident memory.
private enum DiscoveryMemory {
  /// In megabytes (MiB): the peak so far (`VmHWM`) or now (`VmRSS`).
  static func residentMegabytes(peak: Bool) -> Double {
    #if os(Linux)
      let field = peak ? "VmHWM:" : "VmRSS:"
      guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
        let kilobytes = Double(line.dropFirst(field.count).split(whereSeparator: \.isWhitespace).first ?? "")
      else { return .nan }
      return kilobytes / 1024
    #else
      var usage = rusage()
      getrusage(RUSAGE_SELF, &usage)
      return Double(usage.ru_maxrss) / 1024 / 1024  // Bytes on Darwin; the peak only.
    #endif
  }
}
