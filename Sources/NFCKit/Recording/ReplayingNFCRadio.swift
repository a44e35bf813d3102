public import ReaderCore
import Synchronization

/// An `NFCRadio` that plays a recording back on a `VirtualClock`: every recorded event at its recorded
/// time, the recorded policy and `isReadingAvailable` answers, whatever the reader system asks.
///
/// The commands the system gives are checked against the recorded ones, in order: the same session code
/// asks the same things at the same times, and any difference is a `divergences` entry (what was
/// expected, what came), which is how a replay shows that the code has changed its behaviour. `notes`
/// are the recording app's marks with their times (`stop`: where the recorded run was ended), for the
/// replaying app to act on.
///
/// ```swift
/// let clock = VirtualClock()
/// let radio = ReplayingNFCRadio(records: try NFCRadioRecord.parse(text), clock: clock)
/// let system = NFCReaderSystem(radio: radio, scheduler: clock)
/// // begin the same sessions, then run the clock:
/// clock.runUntilQuiet(limit: radio.duration + .seconds(120))
/// ```
public final class ReplayingNFCRadio: NFCRadio, Sendable {
  private struct State {
    var handler: (@Sendable (NFCRadioEvent) -> Void)?
    var commands: [(Duration, NFCRadioCommand)]
    var nextCommand = 0
    var availability: [Bool]
    var nextAvailability = 0
    var divergences: [String] = []
  }

  /// The clock events are played on; the reader system must run on it too.
  public let clock: VirtualClock
  /// The recorded policy (Core NFC's 60-second limit and a queue when none was recorded).
  public let policy: NFCSystemPolicy
  /// The app's marks, with their times.
  public let notes: [(time: Duration, text: String)]
  /// The time of the last line.
  public let duration: Duration
  private let events: [(Duration, NFCRadioEvent)]
  private let state: Mutex<State>

  /// A radio playing `records` on `clock`, from the clock's time now.
  public init(records: [NFCRadioRecord], clock: VirtualClock) {
    self.clock = clock
    var policy = NFCSystemPolicy(sessionTimeout: .seconds(60))
    var events: [(Duration, NFCRadioEvent)] = []
    var commands: [(Duration, NFCRadioCommand)] = []
    var availability: [Bool] = []
    var notes: [(time: Duration, text: String)] = []
    for record in records {
      switch record.entry {
      case .policy(let recorded): policy = recorded
      case .readingAvailable(let available): availability.append(available)
      case .command(let command): commands.append((record.time, command))
      case .event(let event): events.append((record.time, event))
      case .note(let text): notes.append((record.time, text))
      }
    }
    self.policy = policy
    self.events = events
    self.notes = notes
    duration = records.map(\.time).max() ?? .zero
    state = Mutex(State(commands: commands, availability: availability))
  }

  /// Where the replayed commands differed from the recorded ones, in order.
  public var divergences: [String] { state.withLock { $0.divergences } }

  /// Recorded commands the replay has not given (yet).
  public var commandsLeft: Int { state.withLock { $0.commands.count - $0.nextCommand } }

  public func setEventHandler(_ handler: @escaping @Sendable (NFCRadioEvent) -> Void) {
    let start = clock.elapsed
    state.withLock { $0.handler = handler }
    for (time, event) in events {
      clock.schedule(after: start + time - clock.elapsed) { handler(event) }
    }
  }

  /// The recorded answers in order; the last one again once they run out (true without any).
  public var isReadingAvailable: Bool {
    state.withLock { state in
      guard !state.availability.isEmpty else { return true }
      defer { state.nextAvailability += 1 }
      return state.availability[min(state.nextAvailability, state.availability.count - 1)]
    }
  }

  public func startPolling(_ round: NFCRadioRequestID) { check(.startPolling(round)) }
  public func stopPolling(_ round: NFCRadioRequestID) { check(.stopPolling(round)) }
  public func connect(to tag: NFCRadioTagID, request: NFCRadioRequestID) { check(.connect(tag, request)) }
  public func queryNDEFStatus(of tag: NFCRadioTagID, request: NFCRadioRequestID) {
    check(.queryNDEFStatus(tag, request))
  }
  public func readNDEF(from tag: NFCRadioTagID, request: NFCRadioRequestID) { check(.readNDEF(tag, request)) }
  public func writeNDEF(_ bytes: [UInt8], to tag: NFCRadioTagID, request: NFCRadioRequestID) {
    check(.writeNDEF(bytes, tag, request))
  }
  public func writeLock(_ tag: NFCRadioTagID, request: NFCRadioRequestID) { check(.writeLock(tag, request)) }
  public func presentSheet(alertMessage: String) { check(.presentSheet(alertMessage)) }
  public func updateSheet(alertMessage: String) { check(.updateSheet(alertMessage)) }
  public func dismissSheet(errorMessage: String?) { check(.dismissSheet(errorMessage)) }

  private func check(_ command: NFCRadioCommand) {
    state.withLock { state in
      guard state.nextCommand < state.commands.count else {
        state.divergences.append("unrecorded command \(command)")
        return
      }
      let (time, expected) = state.commands[state.nextCommand]
      state.nextCommand += 1
      if expected != command {
        state.divergences.append("at \(time): recorded \(expected), replayed \(command)")
      }
    }
  }
}
