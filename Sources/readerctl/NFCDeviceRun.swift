import Dispatch
import Foundation
import NFCKit
import ReaderCore
import ReaderKit

/// An NFC reader system that is not the simulator: a real PC/SC reader in real time, or a recording of
/// one played back on a virtual clock. What a command shows of it is what it shows of the simulator:
/// every session event as it is published, as a narration line or (`--json`) as one JSON line, with its
/// time counted from the command's start.
final class NFCDeviceRun: Sendable {
  /// How time passes.
  enum Pace: Sendable {
    /// Real time: the command waits for events.
    case live(any Scheduler)
    /// A virtual clock the command runs, from deadline to deadline.
    case replay(VirtualClock)
  }

  let system: NFCReaderSystem
  let console: Console
  let json: Bool
  let pace: Pace
  /// The scheduler's time when the command started.
  let origin: Duration
  private let voice: NFCSimulation.Voice
  private let log = Locked<[NFCReaderEvent]>([])
  private let signal = DispatchSemaphore(value: 0)

  /// A run whose times count from `origin` on the system's scheduler (now, by default).
  init(
    system: NFCReaderSystem, pace: Pace, console: Console, json: Bool, voice: NFCSimulation.Voice,
    origin: Duration? = nil
  ) {
    self.system = system
    self.pace = pace
    self.console = console
    self.json = json
    self.voice = voice
    self.origin = origin ?? system.scheduler.elapsed
    system.addEventObserver { [weak self] event in self?.show(event) }
  }

  /// Time since the command started.
  var now: Duration { system.scheduler.elapsed - origin }

  /// Every event so far, in order.
  var events: [NFCReaderEvent] { log.withLock { $0 } }

  /// The system's time limit for a session (its configuration's, never the command's).
  var sessionTimeout: Duration? { system.radio.policy.sessionTimeout }

  /// Runs until `condition` holds, `limit` has passed or (when `interruptible`) Ctrl-C; returns whether
  /// `condition` holds. Live, it waits for events; replayed, it moves the clock from deadline to deadline.
  @discardableResult
  func run(until condition: () -> Bool, for limit: Duration, interruptible: Bool = true) -> Bool {
    let end = now + limit
    switch pace {
    case .live:
      while !condition() {
        if interruptible && Interrupt.requested { return false }
        let left = end - now
        guard left > .zero else { return condition() }
        _ = signal.wait(timeout: .now() + min(left, .milliseconds(100)).inSeconds)
      }
      return true
    case .replay(let clock):
      let deadline = origin + end
      while !condition() {
        if interruptible && Interrupt.requested { return false }
        guard let next = clock.nextDeadline, next <= deadline else {
          clock.advance(to: max(clock.elapsed, deadline))
          return condition()
        }
        clock.advance(to: max(next, clock.elapsed))
      }
      return true
    }
  }

  /// Wakes a live `run` to check its condition again (something it waits for happened off the event
  /// stream, such as a delegate call after its event).
  func wake() { signal.signal() }

  /// Prints a narration line stamped with the time now; silent with `--json`.
  func say(_ text: String) {
    guard !json else { return }
    console.line("[\(SimulationSession.format(now))] \(text)")
  }

  /// Ends the command: with `--json` prints its outcome as the last line; returns the status.
  func finish(_ outcome: CommandOutcome, raw: [(String, String)] = []) -> Int32 {
    if json, case .object(let members) = outcome.json(at: now) {
      console.line(NFCJSON.object(members, raw: raw))
    }
    return outcome.status
  }

  /// Reports the NFC error that ended the command, after `what`.
  func fail(_ what: String, _ error: NFCReaderError, fields: [(String, JSONValue)] = [], raw: [(String, String)] = [])
    -> Int32
  {
    console.error("readerctl: \(what): \(error)\n")
    var outcome = CommandOutcome.failure(error)
    outcome.fields = fields
    return finish(outcome, raw: raw)
  }

  private func show(_ event: NFCReaderEvent) {
    log.withLock { $0.append(event) }
    signal.signal()
    if json {
      console.line(event.jsonLine(tag: nil, since: origin))
      return
    }
    if case .didFailToReadNDEF = event.kind, !voice.narratesReadFailures { return }
    let text = NFCNarration.sentence(for: event, tag: nil, messages: voice.messages)
    console.line("[\(SimulationSession.format(event.time - origin))] \(text)")
  }
}
