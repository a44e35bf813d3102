import Foundation
import ReaderCore
import ReaderKit
import ReaderSimulator

/// The simulated world a command runs in, and the loop that drives its virtual clock.
///
/// Nothing happens in the world until the session advances the clock. Paced runs keep simulated
/// time at `speed` times the wall clock so a person can watch; unpaced runs go as fast as the machine
/// allows. Either way the clock stops at the same simulated instants, so what happens, and when in
/// simulated time, does not depend on pacing. Loops stop early when Ctrl-C was pressed (`Interrupt`),
/// except the ones that wind an operation down after it.
final class SimulationSession: Sendable {
  let seed: UInt64
  let clock: VirtualClock
  let world: SimulatedBluetoothCentral
  let console: Console
  /// Simulated seconds per wall-clock second for paced runs; 0 runs everything unpaced.
  let speed: Double
  /// Whether events are printed as JSON lines (and narration is silent).
  let json: Bool
  /// The screen narration and live tables go to.
  let screen: LiveRegion
  /// The clock's time when the session started: zero, or how far after `Terminal.simulationEpoch` the
  /// session's start date is.
  private let origin: Duration
  private let wallStart = ContinuousClock.now
  /// What prints each terminal's events with `--json`.
  private let printing: TerminalEventPrinter
  /// The granularity of paced runs.
  private let step = Duration.milliseconds(50)

  /// A world with `readers` readers drawn from `seed` (see `SimulatedFleet`), whose terminals see the
  /// date `start` when the session starts (`Terminal.simulationEpoch` unless given; not earlier).
  init(seed: UInt64, readers: Int, console: Console, speed: Double, json: Bool, start: Date? = nil) {
    self.seed = seed
    // A terminal on a virtual clock dates its events from the simulation's epoch: advancing the empty
    // clock before the world exists makes the session start at `start`, at no cost.
    let offset = start.flatMap { Duration.seconds(exactly: $0.timeIntervalSince(Terminal.simulationEpoch)) } ?? .zero
    origin = max(offset, .zero)
    let clock = VirtualClock()
    clock.advance(to: origin)
    self.clock = clock
    self.world = SimulatedBluetoothCentral(clock: clock, seed: seed)
    self.console = console
    self.speed = speed
    self.json = json
    self.screen = LiveRegion(console: console)
    printing = TerminalEventPrinter(console: console, origin: origin)
    for reader in SimulatedFleet.readers(count: readers, seed: seed) { world.add(reader) }
  }

  /// A terminal on this world, with `updateCatalog` if given; with `--json` every event it publishes
  /// is printed as one line, its time counted from the session's start.
  func makeTerminal(store: any ReaderStore, updateCatalog: (any UpdateCatalog)? = nil) -> Terminal {
    // Simulated readers only: a record an app saved for real hardware must not be looked for here.
    let terminal = Terminal(
      simulatorOnly: world, scheduler: clock, store: store, seed: seed, updateCatalog: updateCatalog)
    if json { printing.start(terminal) }
    return terminal
  }

  /// Stops printing `terminal`'s events: the app that owned it is gone (`terminateHostApp`), though
  /// its timers still run on the clock.
  func stopPrinting(_ terminal: Terminal) { printing.stop(terminal) }

  /// Simulated time since the session started.
  var now: Duration { clock.elapsed - origin }

  /// The date the session's terminals see now.
  var date: Date { Terminal.simulationEpoch.addingTimeInterval(clock.elapsed.inSeconds) }

  /// Wall-clock time since the session started.
  var wallElapsed: Duration { ContinuousClock.now - wallStart }

  /// Runs the world for `duration` of simulated time; false when interrupted.
  @discardableResult
  func run(for duration: Duration, paced: Bool = true) -> Bool {
    run(until: { false }, limit: duration, paced: paced)
    return !Interrupt.requested
  }

  /// Runs the world until `condition` holds (checked after every step) or `limit` of simulated time
  /// has passed, or Ctrl-C unless not `interruptible`; returns whether `condition` holds.
  ///
  /// `pace` multiplies the speed of a paced run, step by step: what is long and dull to watch (an
  /// install) can go faster than the rest.
  @discardableResult
  func run(
    until condition: () -> Bool, limit: Duration, paced: Bool = true, interruptible: Bool = true,
    pace: () -> Double = { 1 }
  ) -> Bool {
    let end = clock.elapsed + limit
    let pacing = paced && speed > 0
    let segmentWall = ContinuousClock.now
    var due = Duration.zero
    while !condition(), clock.elapsed < end, !(interruptible && Interrupt.requested) {
      // Stop at every piece of work, paced or not, so the condition is checked at the same simulated
      // instants and the run ends at the same one; pacing only adds stops between them.
      let next = min(clock.nextDeadline.map { max($0, clock.elapsed) } ?? end, end)
      if pacing {
        let before = clock.elapsed
        clock.advance(to: min(next, clock.elapsed + step))
        due += (clock.elapsed - before) / (speed * max(pace(), 1))
        let ahead = due - (ContinuousClock.now - segmentWall)
        if ahead > .zero { Thread.sleep(forTimeInterval: ahead.inSeconds) }
      } else {
        clock.advance(to: next)
      }
    }
    return condition()
  }

  /// Ends the command: with `--json` prints its outcome as the last line,
  /// `{"t": …, "event": "result", "exitStatus": N, "error": null | {…}, …fields}`; returns the status.
  func finish(_ outcome: CommandOutcome) -> Int32 {
    if json {
      console.line(outcome.json(at: now).rendered)
    }
    return outcome.status
  }

  /// Prints a narration line stamped with the simulated time (`time`, or now); silent with `--json`.
  ///
  /// Piped, it is one line, `[00:01:57.7] text`. On a terminal the stamp has the width of the widest
  /// a run shows (`[1d 00:01:56.2]`, narrower ones right-aligned in it), so the text starts in the same
  /// column on every line, and the text wraps at word boundaries to the window's width, continuation
  /// lines indented under it.
  func say(_ text: String) { narrate(text, at: nil) }

  /// `say(_:)` with the stamp of `time` (now when `nil`).
  func narrate(_ text: String, at time: Duration?) {
    guard !json else { return }
    let stamp = "[\(Self.format(time ?? now))]"
    guard console.isTerminal else {
      screen.say(stamp + " " + text)
      return
    }
    let padded = String(repeating: " ", count: max(0, Self.stampWidth - stamp.count)) + stamp + " "
    screen.say(console.fitted(text, prefix: padded))
  }

  /// The width of a stamp up to 9 days: `[1d 00:00:00.0]`.
  static let stampWidth = 15

  /// Prints a paragraph that is not stamped (a heading, a summary, a `name  value` row after `prefix`):
  /// one line piped, wrapped at word boundaries to the window's width on a terminal.
  func note(_ text: String, prefix: String = "") {
    console.line(console.fitted(text, prefix: prefix))
  }

  /// `1d 02:03:04.5`, `02:03:04.5`.
  static func format(_ duration: Duration) -> String {
    let tenths = Int((duration.inSeconds * 10).rounded(.down))
    let days = tenths / 864_000
    let hours = tenths / 36_000 % 24
    let minutes = tenths / 600 % 60
    let seconds = tenths / 10 % 60
    let clock = "\(pad(hours)):\(pad(minutes)):\(pad(seconds)).\(tenths % 10)"
    return days > 0 ? "\(days)d \(clock)" : clock
  }

  private static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

/// A value set from inside callbacks (which run on the thread that drives the clock) and read by
/// the command's loop.
final class Outcome<Value: Sendable>: Sendable {
  private let storage = Locked<Value?>(nil)

  init() {}

  /// The value, once set.
  var value: Value? { storage.withLock { $0 } }

  /// Whether a value was set.
  var isSet: Bool { value != nil }

  /// Sets the value (the last call wins).
  func set(_ value: Value) { storage.withLock { $0 = value } }
}
