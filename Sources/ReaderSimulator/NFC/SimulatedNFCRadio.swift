import NFCKit
import ReaderCore

/// A seeded, virtual NFC device: its radio, the tags brought near it, the system's scan sheet and the
/// person holding it.
///
/// It implements `NFCRadio` for an `NFCReaderSystem`, and offers script controls — present and remove
/// tags, interrupt the next tag command by pulling the tag away, let another app hold the radio, turn
/// the radio off, send the app to the background, tap Cancel on the sheet — for tests, demos and apps'
/// own tests; `SimulatedNFCSchedule` drives them from a script or a seed. Everything runs on the
/// `VirtualClock` it is given and all randomness (detection jitter) comes from its seed, so the same
/// seed and script give the same events.
///
/// The system's rules are its own properties, not the app's: `policy` holds the session time limit
/// (Core NFC's documented 60 seconds unless told otherwise) and whether a second session waits or is
/// refused. The sheet is recorded (`sheetLog`, `sheetText`) so tests and demos can check what it shows.
///
/// Behaviour worth knowing:
/// - Polling starts `timing.pollingStart` after it is asked for; a tag in the field is detected
///   `timing.detection` (plus up to 50 ms of seeded jitter) after polling starts or after it is
///   presented, once per presentation and round.
/// - A command takes `timing.command` plus `timing.perByte` for each byte moved; a tag that leaves
///   before its command completes fails it (`.tagLost`), then is reported removed.
/// - Turning the radio off ends the running round (`pollingFailed(.radioOff)`) and refuses new ones;
///   another app holding the radio refuses new rounds (`.busy`); a device without NFC refuses every
///   round (`.unsupported`).
public final class SimulatedNFCRadio: NFCRadio, Sendable {
  /// How long the simulated hardware takes.
  public struct Timing: Sendable, Hashable {
    /// From `startPolling` to `pollingStarted`.
    public var pollingStart: Duration
    /// From polling (or a tag's arrival) to its detection, before jitter.
    public var detection: Duration
    /// The fixed part of every tag command.
    public var command: Duration
    /// The part of a read or write per byte moved.
    public var perByte: Duration

    /// Creates timings; the defaults are in the range of a phone reading an NTAG.
    public init(
      pollingStart: Duration = .milliseconds(100), detection: Duration = .milliseconds(150),
      command: Duration = .milliseconds(20), perByte: Duration = .microseconds(100)
    ) {
      self.pollingStart = pollingStart
      self.detection = detection
      self.command = command
      self.perByte = perByte
    }

    /// No latency at all, for benchmarks that measure the software alone.
    public static let instant = Timing(pollingStart: .zero, detection: .zero, command: .zero, perByte: .zero)
  }

  /// One change of the system's scan sheet.
  public struct SheetEntry: Sendable, Hashable, CustomStringConvertible {
    /// What the sheet did.
    public enum Kind: Sendable, Hashable {
      /// It appeared, showing the message.
      case presented(alertMessage: String)
      /// Its message changed.
      case alertMessageChanged(String)
      /// It closed, showing the error message first when there was one.
      case dismissed(errorMessage: String?)
    }

    /// When (virtual time since the clock's start).
    public var time: Duration
    /// What the sheet did.
    public var kind: Kind

    public var description: String {
      switch kind {
      case .presented(let message): "\(time) presented \"\(message)\""
      case .alertMessageChanged(let message): "\(time) alertMessage \"\(message)\""
      case .dismissed(let message?): "\(time) dismissed with error \"\(message)\""
      case .dismissed(nil): "\(time) dismissed"
      }
    }
  }

  /// Something that happened in the world, for narration and assertions.
  public struct WorldEvent: Sendable, Hashable, CustomStringConvertible {
    /// When it happened.
    public var time: Duration
    /// The tag concerned, if any.
    public var tag: String?
    /// What happened, e.g. `"presented"`, `"removed"`, `"radioOff"`, `"pollingStarted"`.
    public var kind: String

    public var description: String { "\(time) \(tag ?? "device") \(kind)" }
  }

  /// Core NFC's documented session time limit, the simulated system's default.
  public static let documentedSessionTimeout = Duration.seconds(60)

  private struct World {
    var handler: (@Sendable (NFCRadioEvent) -> Void)?
    var policy: NFCSystemPolicy
    var timing: Timing
    var random: SeededRandom
    var radioOn = true
    var heldElsewhere = false
    var tags: [String: SimulatedNFCTag] = [:]
    /// Tags in the field, by presentation.
    var field: [NFCRadioTagID: String] = [:]
    var nextTag: UInt64 = 0
    /// The round asked for or running.
    var round: NFCRadioRequestID?
    var polling = false
    var detected: Set<NFCRadioTagID> = []
    var pendingStart: ScheduledWork?
    var connected: NFCRadioTagID?
    var inFlight: [NFCRadioRequestID: (tag: NFCRadioTagID, work: ScheduledWork)] = [:]
    var interruptNextCommand = false
    var sheetText: String?
    var sheetLog: RecentLog<SheetEntry>
    var log: RecentLog<WorldEvent>
  }

  /// The clock the world runs on; the reader system must use the same one.
  public let clock: VirtualClock
  /// Whether the device has NFC at all.
  public let isReadingAvailable: Bool
  private let world: Locked<World>

  /// Creates a device on `clock`, with randomness from `seed`.
  /// - Parameters:
  ///   - policy: the system's rules; by default Core NFC's 60-second limit and a FIFO queue.
  ///   - isReadingAvailable: `false` for a device without NFC.
  ///   - timing: how long the hardware takes.
  ///   - logCapacity: how many of the latest entries `sheetLog` and `worldEvents` each keep (at least
  ///     one); older ones are dropped, so a world that runs for days holds a bounded log.
  public init(
    clock: VirtualClock, seed: UInt64,
    policy: NFCSystemPolicy = NFCSystemPolicy(sessionTimeout: SimulatedNFCRadio.documentedSessionTimeout),
    isReadingAvailable: Bool = true, timing: Timing = Timing(), logCapacity: Int = SimulatedNFCRadio.defaultLogCapacity
  ) {
    self.clock = clock
    self.isReadingAvailable = isReadingAvailable
    world = Locked(
      World(
        policy: policy, timing: timing, random: SeededRandom(seed: seed),
        sheetLog: RecentLog(capacity: logCapacity), log: RecentLog(capacity: logCapacity)))
  }

  /// How many of the latest entries each log keeps unless told otherwise.
  public static let defaultLogCapacity = 10_000

  // MARK: Ground truth

  /// The system's rules now.
  public var policy: NFCSystemPolicy { world.withLock { $0.policy } }

  /// Changes the system's rules; sessions begun afterwards follow them.
  public func setPolicy(_ policy: NFCSystemPolicy) {
    world.withLock { $0.policy = policy }
  }

  /// The polling round asked for or running, if any.
  public var currentRound: NFCRadioRequestID? { world.withLock { $0.round } }

  /// Whether a round is running (polling started and not stopped).
  public var isPolling: Bool { world.withLock { $0.polling } }

  /// Whether the radio is on.
  public var isRadioOn: Bool { world.withLock { $0.radioOn } }

  /// The sheet's message while it shows; `nil` when no sheet is up.
  public var sheetText: String? { world.withLock { $0.sheetText } }

  /// The changes of the sheet so far, oldest first: the latest `logCapacity` of them.
  public var sheetLog: [SheetEntry] { world.withLock { $0.sheetLog.entries } }

  /// What happened so far, oldest first: the latest `logCapacity` events.
  public var worldEvents: [WorldEvent] { world.withLock { $0.log.entries } }

  /// The names of the tags in the field, in the order they arrived.
  public var tagsInField: [String] {
    world.withLock { world in world.field.sorted { $0.key < $1.key }.map(\.value) }
  }

  /// The tag named `name` as it is now (after any writes).
  public func tag(_ name: String) -> SimulatedNFCTag? {
    world.withLock { $0.tags[name] }
  }

  // MARK: Script controls

  /// Adds a tag to the world (not to the field) or replaces the one with the same name.
  public func add(_ tag: SimulatedNFCTag) {
    world.withLock { $0.tags[tag.name] = tag }
  }

  /// Brings a known tag into the field. A tag already there, or unknown, is ignored.
  public func present(_ name: String) {
    mutate { world in
      guard world.tags[name] != nil, !world.field.values.contains(name) else { return [] }
      world.nextTag += 1
      let id = NFCRadioTagID(world.nextTag)
      world.field[id] = name
      self.record(name, "presented", in: &world)
      if world.polling, let round = world.round { self.scheduleDetection(of: [id], round: round, in: &world) }
      return []
    }
  }

  /// Adds `tag` to the world and brings it into the field.
  public func present(_ tag: SimulatedNFCTag) {
    add(tag)
    present(tag.name)
  }

  /// Brings a known tag into the field and takes it away after `duration`.
  public func present(_ name: String, for duration: Duration) {
    present(name)
    clock.schedule(after: duration) { [self] in remove(name) }
  }

  /// Takes a tag out of the field: commands in flight on it fail (`.tagLost`), then it is reported
  /// removed.
  public func remove(_ name: String) {
    mutate { world in self.takeAway(name, in: &world) }
  }

  /// Makes the next read or write take its tag out of the field halfway through ("tag removed
  /// mid-read": the command fails with `.tagLost`).
  public func interruptNextTagCommand() {
    world.withLock { world in
      world.interruptNextCommand = true
      self.record(nil, "interruptNextTagCommand", in: &world)
    }
  }

  /// Turns the radio on or off. Off ends the running round (`pollingFailed(.radioOff)`) and refuses
  /// new ones until it is on again.
  public func setRadio(on: Bool) {
    mutate { world in
      guard world.radioOn != on else { return [] }
      world.radioOn = on
      self.record(nil, on ? "radioOn" : "radioOff", in: &world)
      guard !on, let round = world.round else { return [] }
      self.endRound(in: &world)
      return [.pollingFailed(round, .radioOff)]
    }
  }

  /// Turns the radio off now and on again after `duration`.
  public func switchRadioOff(for duration: Duration) {
    setRadio(on: false)
    clock.schedule(after: duration) { [self] in setRadio(on: true) }
  }

  /// Lets another app hold the radio, or gives it back: while held, new rounds are refused (`.busy`).
  public func setHeldByAnotherApp(_ held: Bool) {
    world.withLock { world in
      guard world.heldElsewhere != held else { return }
      world.heldElsewhere = held
      self.record(nil, held ? "radioHeldElsewhere" : "radioReleasedElsewhere", in: &world)
    }
  }

  /// Lets another app hold the radio for `duration`.
  public func holdByAnotherApp(for duration: Duration) {
    setHeldByAnotherApp(true)
    clock.schedule(after: duration) { [self] in setHeldByAnotherApp(false) }
  }

  /// Sends the app to the background: the system ends every reader session of the app.
  public func terminateSessions() {
    mutate { world in
      self.record(nil, "appMovedToBackground", in: &world)
      return [.terminated]
    }
  }

  /// The person taps Cancel on the sheet; ignored when no sheet shows.
  public func tapCancel() {
    mutate { world in
      guard world.sheetText != nil, let round = world.round else { return [] }
      self.record(nil, "cancelTapped", in: &world)
      return [.userCanceled(round)]
    }
  }

  // MARK: NFCRadio

  public func setEventHandler(_ handler: @escaping @Sendable (NFCRadioEvent) -> Void) {
    world.withLock { $0.handler = handler }
  }

  public func startPolling(_ round: NFCRadioRequestID) {
    mutateOnce { world in
      if world.round != nil { self.endRound(in: &world) }
      let failure: NFCRadioFailure? =
        !self.isReadingAvailable ? .unsupported : !world.radioOn ? .radioOff : world.heldElsewhere ? .busy : nil
      if let failure {
        self.record(nil, "pollingRefused(\(failure))", in: &world)
        return .pollingFailed(round, failure)
      }
      world.round = round
      // The start captures the radio alone (no context to allocate) and finds its round in the world: a
      // round that ends cancels its start, so the start that runs is the current round's.
      world.pendingStart = self.clock.schedule(after: world.timing.pollingStart) { [self] in
        fire { world in
          guard world.pendingStart != nil, let round = world.round, !world.polling else { return nil }
          world.pendingStart = nil
          world.polling = true
          self.record(nil, "pollingStarted", in: &world)
          if !world.field.isEmpty { self.scheduleDetection(of: world.field.keys.sorted(), round: round, in: &world) }
          return .pollingStarted(round)
        }
      }
      return nil
    }
  }

  public func stopPolling(_ round: NFCRadioRequestID) {
    world.withLock { world in
      guard world.round == round else { return }
      self.endRound(in: &world)
    }
  }

  public func connect(to tag: NFCRadioTagID, request: NFCRadioRequestID) {
    command(request, on: tag, bytes: 0) { world, _ in
      world.connected = tag
      return .connected
    }
  }

  public func queryNDEFStatus(of tag: NFCRadioTagID, request: NFCRadioRequestID) {
    command(request, on: tag, bytes: 0) { _, simulated in .status(simulated.status) }
  }

  public func readNDEF(from tag: NFCRadioTagID, request: NFCRadioRequestID) {
    let size = world.withLock { world in world.field[tag].flatMap { world.tags[$0]?.ndefBytes?.count } ?? 0 }
    command(request, on: tag, bytes: size, interruptible: true) { _, simulated in
      guard let bytes = simulated.ndefBytes else { return .failed(.notNDEFFormatted) }
      return .read(bytes)
    }
  }

  public func writeNDEF(_ bytes: [UInt8], to tag: NFCRadioTagID, request: NFCRadioRequestID) {
    command(request, on: tag, bytes: bytes.count, interruptible: true) { world, simulated in
      guard simulated.ndefBytes != nil else { return .failed(.notNDEFFormatted) }
      guard simulated.isWritable else { return .failed(.notWritable) }
      guard bytes.count <= simulated.capacity else { return .failed(.capacityExceeded) }
      world.tags[simulated.name]?.contents = .ndef(bytes)
      return .written
    }
  }

  public func writeLock(_ tag: NFCRadioTagID, request: NFCRadioRequestID) {
    command(request, on: tag, bytes: 0) { world, simulated in
      guard simulated.ndefBytes != nil else { return .failed(.notNDEFFormatted) }
      guard simulated.isWritable else { return .failed(.notWritable) }
      world.tags[simulated.name]?.isWritable = false
      return .locked
    }
  }

  public func presentSheet(alertMessage: String) {
    world.withLock { world in
      world.sheetText = alertMessage
      world.sheetLog.append(SheetEntry(time: clock.elapsed, kind: .presented(alertMessage: alertMessage)))
    }
  }

  public func updateSheet(alertMessage: String) {
    world.withLock { world in
      guard world.sheetText != nil else { return }
      world.sheetText = alertMessage
      world.sheetLog.append(SheetEntry(time: clock.elapsed, kind: .alertMessageChanged(alertMessage)))
    }
  }

  public func dismissSheet(errorMessage: String?) {
    world.withLock { world in
      guard world.sheetText != nil else { return }
      world.sheetText = nil
      world.sheetLog.append(SheetEntry(time: clock.elapsed, kind: .dismissed(errorMessage: errorMessage)))
    }
  }

  // MARK: World mechanics (called with the lock held; events are delivered after it is released)

  private func mutate(_ body: (inout World) -> [NFCRadioEvent]) {
    // The handler comes out through a variable rather than as part of the lock's result, which would
    // wrap it in a new closure each time.
    var handler: (@Sendable (NFCRadioEvent) -> Void)?
    let events = world.withLock { world in
      handler = world.handler
      return body(&world)
    }
    guard let handler else { return }
    // Queued, never delivered from inside the caller: the system sees one event per work item.
    for event in events { clock.execute { handler(event) } }
  }

  /// `mutate` for a change that reports at most one event, which then needs no array.
  private func mutateOnce(_ body: (inout World) -> NFCRadioEvent?) {
    mutateOnce(body) { [clock] handler, event in clock.execute { handler(event) } }
  }

  /// `mutateOnce` for a change made by the radio's own scheduled work: the event is delivered from that
  /// work item (no caller of the radio is on the stack), rather than queued behind it as a second one.
  private func fire(_ body: (inout World) -> NFCRadioEvent?) {
    mutateOnce(body) { handler, event in handler(event) }
  }

  /// Makes the change under the lock, then hands the event it reports, if any, to `deliver` with the
  /// handler, out of the lock.
  private func mutateOnce(
    _ body: (inout World) -> NFCRadioEvent?,
    deliver: (@escaping @Sendable (NFCRadioEvent) -> Void, consuming NFCRadioEvent) -> Void
  ) {
    var handler: (@Sendable (NFCRadioEvent) -> Void)?
    var event = world.withLock { world in
      handler = world.handler
      return body(&world)
    }
    // Moved out of the optional rather than bound to a copy of it: the closure then holds the only one.
    guard let handler, let event = event.take() else { return }
    deliver(handler, event)
  }

  private func record(_ tag: String?, _ kind: String, in world: inout World) {
    world.log.append(WorldEvent(time: clock.elapsed, tag: tag, kind: kind))
  }

  /// Ends the round: nothing more is detected or answered for it.
  private func endRound(in world: inout World) {
    if let work = world.pendingStart { clock.cancel(work) }
    // Emptied only when not empty already: a round that ends without a tag (the common case) then
    // releases no storage.
    if !world.inFlight.isEmpty {
      for (_, flight) in world.inFlight { clock.cancel(flight.work) }
      world.inFlight = [:]
    }
    world.pendingStart = nil
    world.round = nil
    world.polling = false
    if !world.detected.isEmpty { world.detected = [] }
    world.connected = nil
  }

  private func scheduleDetection(of tags: [NFCRadioTagID], round: NFCRadioRequestID, in world: inout World) {
    let jitter = Duration.milliseconds(Int64(world.random.next() % 51))
    clock.schedule(after: world.timing.detection + (world.timing.detection == .zero ? .zero : jitter)) { [self] in
      mutate { world in
        guard world.polling, world.round == round else { return [] }
        let found = tags.filter { world.field[$0] != nil && world.detected.insert($0).inserted }
        for tag in found { self.record(world.field[tag], "detected", in: &world) }
        return found.isEmpty ? [] : [.tagsDetected(round, found)]
      }
    }
  }

  private func takeAway(_ name: String, in world: inout World) -> [NFCRadioEvent] {
    guard let id = world.field.first(where: { $0.value == name })?.key else { return [] }
    world.field[id] = nil
    if world.connected == id { world.connected = nil }
    record(name, "removed", in: &world)
    var events: [NFCRadioEvent] = []
    for request in world.inFlight.filter({ $0.value.tag == id }).keys.sorted() {
      if let flight = world.inFlight.removeValue(forKey: request) { clock.cancel(flight.work) }
      events.append(.response(request, .failed(.tagLost)))
    }
    if let round = world.round, world.detected.remove(id) != nil { events.append(.tagRemoved(round, id)) }
    return events
  }

  /// Runs a tag command: fails at once if the tag is not in the field or the round is not running,
  /// otherwise completes after its latency with `complete`'s answer, unless the tag leaves first.
  private func command(
    _ request: NFCRadioRequestID, on tag: NFCRadioTagID, bytes: Int, interruptible: Bool = false,
    _ complete: @escaping @Sendable (inout World, SimulatedNFCTag) -> NFCRadioResponse
  ) {
    mutate { world in
      guard world.polling, let round = world.round, round.session == request.session,
        let name = world.field[tag], world.detected.contains(tag)
      else { return [.response(request, .failed(.tagLost))] }
      let latency = world.timing.command + world.timing.perByte * bytes
      let work = clock.schedule(after: latency) { [self] in
        mutate { world in
          guard world.inFlight.removeValue(forKey: request) != nil, let simulated = world.tags[name] else { return [] }
          return [.response(request, complete(&world, simulated))]
        }
      }
      world.inFlight[request] = (tag, work)
      if interruptible && world.interruptNextCommand {
        world.interruptNextCommand = false
        clock.schedule(after: latency / 2) { [self] in remove(name) }
      }
      return []
    }
  }
}
