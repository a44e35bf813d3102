public import ReaderCore

/// An `NFCRadio` that plays a recording back on a `VirtualClock`: every recorded event at its recorded
/// time, the recorded policy and `isReadingAvailable` answers.
///
/// An event is delivered once its time has come and the commands recorded before it have been given
/// again, so that an answer never overtakes the command it answers (a poll started and its first event
/// at the same instant stay in that order). The commands the system gives are checked against the
/// recorded ones, in order: the same session code asks the same things at the same times, and any
/// difference is a `divergences` entry (what was expected, what came), which is how a replay shows
/// that the code has changed its behaviour; from the first difference on, events no longer wait for
/// commands. `notes`
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
    /// The next event to deliver, and whether its delivery is scheduled.
    var nextEvent = 0
    var scheduled = false
    var diverged = false
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
  /// Each event with its time and how many commands the recording held before it.
  private let events: [(time: Duration, event: NFCRadioEvent, after: Int)]
  private let start: Duration
  private let state: Locked<State>

  /// A radio playing `records` on `clock`, from the clock's time now.
  public init(records: [NFCRadioRecord], clock: VirtualClock) {
    self.clock = clock
    var policy = NFCSystemPolicy(sessionTimeout: .seconds(60))
    var events: [(time: Duration, event: NFCRadioEvent, after: Int)] = []
    var commands: [(Duration, NFCRadioCommand)] = []
    var availability: [Bool] = []
    var notes: [(time: Duration, text: String)] = []
    for record in records {
      switch record.entry {
      case .policy(let recorded): policy = recorded
      case .readingAvailable(let available): availability.append(available)
      case .command(let command): commands.append((record.time, command))
      case .event(let event): events.append((record.time, event, commands.count))
      case .note(let text): notes.append((record.time, text))
      }
    }
    self.policy = policy
    self.events = events
    self.notes = notes
    duration = records.map(\.time).max() ?? .zero
    start = clock.elapsed
    state = Locked(State(commands: commands, availability: availability))
  }

  /// Where the replayed commands differed from the recorded ones, in order.
  public var divergences: [String] { state.withLock { $0.divergences } }

  /// Recorded commands the replay has not given (yet).
  public var commandsLeft: Int { state.withLock { $0.commands.count - $0.nextCommand } }

  public func setEventHandler(_ handler: @escaping @Sendable (NFCRadioEvent) -> Void) {
    state.withLock { $0.handler = handler }
    scheduleNext()
  }

  /// Schedules the next event when the commands recorded before it have come: at its time, or now
  /// when that has passed.
  private func scheduleNext() {
    state.withLock { state in
      guard !state.scheduled, state.handler != nil, state.nextEvent < events.count else { return }
      let next = events[state.nextEvent]
      guard state.diverged || state.nextCommand >= next.after else { return }
      state.scheduled = true
      clock.schedule(after: start + next.time - clock.elapsed) { [self] in deliver() }
    }
  }

  private func deliver() {
    let (event, handler) = state.withLock { state -> (NFCRadioEvent?, (@Sendable (NFCRadioEvent) -> Void)?) in
      state.scheduled = false
      guard state.nextEvent < events.count else { return (nil, nil) }
      defer { state.nextEvent += 1 }
      return (events[state.nextEvent].event, state.handler)
    }
    if let event, let handler { handler(event) }
    scheduleNext()
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
        state.diverged = true
        return
      }
      let (time, expected) = state.commands[state.nextCommand]
      state.nextCommand += 1
      if expected != command {
        state.divergences.append("at \(time): recorded \(expected), replayed \(command)")
        state.diverged = true
      }
    }
    // An event waiting for this command is delivered after it, never inside it.
    scheduleNext()
  }
}
