package import PCSCKit
import ReaderCore

/// A scripted PC/SC service on a `VirtualClock`: readers plugged in and out, simulated cards presented
/// and taken away, another program holding a card, a card that stops answering or leaves in the middle
/// of a command, pcscd stopping. What real readers do that vpcd cannot (unplugging a reader, several
/// readers) is tested here.
///
/// It keeps pcsc-lite's semantics where the radio depends on them: `waitForChange` answers at once when
/// a reader's state (flags and event counter, in the high 16 bits) differs from what the caller last
/// saw, otherwise when it changes, at the timeout (`SCARD_E_TIMEOUT`) or on `cancelWait`
/// (`SCARD_E_CANCELLED`); the plug-and-play pseudo reader counts readers in its high 16 bits; a card is
/// connected exclusively (`SCARD_E_SHARING_VIOLATION` when another program holds it); a card taken
/// away makes its handle answer `SCARD_W_REMOVED_CARD`; a stopped service answers
/// `SCARD_E_NO_SERVICE`, and the wait blocked when it stopped `SCARD_F_COMM_ERROR`. Every answer takes
/// `latency`.
package final class SimulatedPCSCService: PCSCService {
  private struct Reader {
    var card: (any SimulatedSmartCard)?
    var counter: UInt32 = 0
    var heldElsewhere = false
    /// Another program holds a transaction on the card: connects block until it ends.
    var inTransaction = false
    var stalled = false
    var cutsNextCommand = false
    var connection: Int?
  }

  private struct Wait {
    var readers: [PCSCReaderState]
    var completion: @Sendable (Result<[PCSCReaderState], PCSCError>) -> Void
    var timer: ScheduledWork
  }

  private struct Stuck {
    var reader: String
    var completion: @Sendable (Result<[UInt8], PCSCError>) -> Void
  }

  private struct BlockedConnect {
    var reader: String
    var completion: @Sendable (Result<PCSCCard, PCSCError>) -> Void
  }

  private struct World {
    var running = true
    var blockedConnects: [BlockedConnect] = []
    var order: [String] = []
    var readers: [String: Reader] = [:]
    var wait: Wait?
    var handles: [Int: (reader: String, counter: UInt32, lane: UInt64)] = [:]
    var nextHandle = 0
    var lane: UInt64 = 1
    var stuck: [Stuck] = []
    var log: [String] = []
    var transmits = 0
  }

  /// The clock the service answers on; the radio's scheduler must be the same.
  package let clock: VirtualClock
  /// How long every answer takes.
  package let latency: Duration
  private let world = Locked(World())

  package init(clock: VirtualClock, latency: Duration = .milliseconds(1)) {
    self.clock = clock
    self.latency = latency
  }

  // MARK: Ground truth

  /// Every call made, in order (`listReaders`, `wait`, `cancelWait`, `connect <reader>`, …).
  package var calls: [String] { world.withLock { $0.log } }

  /// How many APDUs were sent.
  package var transmitCount: Int { world.withLock { $0.transmits } }

  /// The card in `reader` as it is now (after writes).
  package func card(in reader: String) -> (any SimulatedSmartCard)? {
    world.withLock { $0.readers[reader]?.card }
  }

  /// Whether a wait is blocked now.
  package var isWaiting: Bool { world.withLock { $0.wait != nil } }

  // MARK: Script

  /// Plugs in a reader (no card in it).
  package func plug(_ reader: String) {
    change { world in
      guard world.readers[reader] == nil else { return }
      world.readers[reader] = Reader()
      world.order.append(reader)
    }
  }

  /// Unplugs a reader, its card with it.
  package func unplug(_ reader: String) {
    change { world in
      guard world.readers.removeValue(forKey: reader) != nil else { return }
      world.order.removeAll { $0 == reader }
    }
  }

  /// Puts `card` in `reader` (taking out the one there).
  package func present(_ card: any SimulatedSmartCard, in reader: String) {
    change { world in
      guard world.readers[reader] != nil else { return }
      if world.readers[reader]?.card != nil { world.readers[reader]?.counter += 1 }
      world.readers[reader]?.card = card
      world.readers[reader]?.counter += 1
      world.readers[reader]?.stalled = false
      world.readers[reader]?.cutsNextCommand = false
      world.readers[reader]?.connection = nil
    }
  }

  /// Takes the card out of `reader`.
  package func removeCard(from reader: String) {
    change { world in
      guard world.readers[reader]?.card != nil else { return }
      world.readers[reader]?.card = nil
      world.readers[reader]?.counter += 1
      world.readers[reader]?.connection = nil
    }
  }

  /// Lets another program hold the card in `reader` exclusively, or gives it back.
  package func hold(_ reader: String, byAnotherProgram held: Bool) {
    change { world in world.readers[reader]?.heldElsewhere = held }
  }

  /// Lets another program hold a transaction on the card in `reader` (`SCardBeginTransaction`), or end
  /// it: meanwhile `connect` blocks, as pcsc-lite's does, and returns when it ends.
  package func holdTransaction(_ reader: String, _ held: Bool) {
    let released = world.withLock { world -> [BlockedConnect] in
      world.readers[reader]?.inTransaction = held
      guard !held else { return [] }
      defer { world.blockedConnects.removeAll { $0.reader == reader } }
      return world.blockedConnects.filter { $0.reader == reader }
    }
    for blocked in released { connect(blocked.reader, blocked.completion) }
  }

  /// Makes the card in `reader` stop answering: its commands never return until it is taken away.
  package func stall(_ reader: String) {
    world.withLock { $0.readers[reader]?.stalled = true }
  }

  /// Makes the card in `reader` leave in the middle of its next command (which returns no bytes).
  package func cutNextCommand(in reader: String) {
    world.withLock { $0.readers[reader]?.cutsNextCommand = true }
  }

  /// Stops the service: calls fail with `SCARD_E_NO_SERVICE`, a blocked wait with `SCARD_F_COMM_ERROR`.
  package func stop() {
    change { world in
      world.running = false
      world.handles = [:]
      for name in world.order { world.readers[name]?.connection = nil }
    }
  }

  /// Starts the service again.
  package func start() {
    change { world in world.running = true }
  }

  // MARK: PCSCService

  package func listReaders(_ completion: @escaping @Sendable (Result<[String], PCSCError>) -> Void) {
    let result = world.withLock { world -> Result<[String], PCSCError> in
      world.log.append("listReaders")
      guard world.running else { return .failure(PCSCError("SCardEstablishContext", .noService)) }
      return .success(world.order)
    }
    answer(result, completion)
  }

  package func waitForChange(
    _ readers: [PCSCReaderState], timeout: Duration,
    _ completion: @escaping @Sendable (Result<[PCSCReaderState], PCSCError>) -> Void
  ) {
    let immediate = world.withLock { world -> Result<[PCSCReaderState], PCSCError>? in
      world.log.append("wait")
      guard world.running else { return .failure(PCSCError("SCardEstablishContext", .noService)) }
      if let changed = Self.changes(readers, in: world) { return .success(changed) }
      if let old = world.wait {
        clock.cancel(old.timer)
        clock.execute { old.completion(.failure(PCSCError("SCardGetStatusChange", .cancelled))) }
      }
      let timer = clock.schedule(after: max(timeout, latency)) { [self] in
        let expired = self.world.withLock { world -> Wait? in
          defer { world.wait = nil }
          return world.wait
        }
        expired?.completion(.failure(PCSCError("SCardGetStatusChange", .timeout)))
      }
      world.wait = Wait(readers: readers, completion: completion, timer: timer)
      return nil
    }
    if let immediate { answer(immediate, completion) }
  }

  package func cancelWait() {
    let wait = world.withLock { world -> Wait? in
      world.log.append("cancelWait")
      defer { world.wait = nil }
      return world.wait
    }
    guard let wait else { return }
    clock.cancel(wait.timer)
    answer(.failure(PCSCError("SCardGetStatusChange", .cancelled)), wait.completion)
  }

  package func connect(_ reader: String, _ completion: @escaping @Sendable (Result<PCSCCard, PCSCError>) -> Void) {
    let result = world.withLock { world -> Result<PCSCCard, PCSCError> in
      world.log.append("connect \(reader)")
      guard world.running else { return .failure(PCSCError("SCardEstablishContext", .noService)) }
      guard let state = world.readers[reader] else { return .failure(PCSCError("SCardConnect", .unknownReader)) }
      guard state.card != nil else { return .failure(PCSCError("SCardConnect", .noSmartcard)) }
      if state.inTransaction {
        world.blockedConnects.append(BlockedConnect(reader: reader, completion: completion))
        return .failure(PCSCError("SCardConnect", .cancelled))  // not answered: it blocks
      }
      guard !state.heldElsewhere, state.connection == nil else {
        return .failure(PCSCError("SCardConnect", .sharingViolation))
      }
      world.nextHandle += 1
      world.handles[world.nextHandle] = (reader, state.counter, world.lane)
      world.readers[reader]?.connection = world.nextHandle
      return .success(PCSCCard(handle: world.nextHandle, activeProtocol: 2, lane: world.lane))
    }
    if case .failure(let error) = result, error.code == .cancelled { return }
    answer(result, completion)
    if case .success = result { change { _ in } }
  }

  package func transmit(
    _ apdu: [UInt8], to card: PCSCCard, _ completion: @escaping @Sendable (Result<[UInt8], PCSCError>) -> Void
  ) {
    world.withLock { world in
      world.log.append("transmit")
      world.transmits += 1
    }
    clock.schedule(after: latency) { [self] in
      let result = world.withLock { world -> Result<[UInt8], PCSCError>? in
        guard world.running else { return .failure(PCSCError("SCardTransmit", .commError)) }
        guard card.lane == world.lane, let owner = world.handles[card.handle] else {
          return .failure(PCSCError("SCardTransmit", .invalidHandle))
        }
        guard var reader = world.readers[owner.reader], reader.counter == owner.counter, var smartCard = reader.card
        else { return .failure(PCSCError("SCardTransmit", .removedCard)) }
        if reader.stalled {
          world.stuck.append(Stuck(reader: owner.reader, completion: completion))
          return nil
        }
        if reader.cutsNextCommand {
          reader.cutsNextCommand = false
          reader.card = nil
          reader.counter += 1
          reader.connection = nil
          world.readers[owner.reader] = reader
          return .success([])
        }
        let response = smartCard.respond(to: apdu)
        reader.card = smartCard
        world.readers[owner.reader] = reader
        return .success(response)
      }
      if let result {
        completion(result)
        if case .success([]) = result { change { _ in } }
      }
    }
  }

  package func disconnect(_ card: PCSCCard) {
    change { world in
      world.log.append("disconnect")
      guard card.lane == world.lane, let owner = world.handles.removeValue(forKey: card.handle) else { return }
      if world.readers[owner.reader]?.connection == card.handle { world.readers[owner.reader]?.connection = nil }
    }
  }

  package func abandonCardLane() {
    world.withLock { world in
      world.log.append("abandonCardLane")
      world.lane += 1
      world.handles = [:]
      for name in world.order { world.readers[name]?.connection = nil }
    }
  }

  package func probe() -> Result<[PCSCReaderState], PCSCError> {
    world.withLock { world in
      guard world.running else { return .failure(PCSCError("SCardEstablishContext", .noService)) }
      return .success(
        world.order.map {
          PCSCReaderState(name: $0, eventState: Self.state(of: $0, in: world), atr: Self.atr($0, world))
        })
    }
  }

  // MARK: Mechanics

  private func answer<T: Sendable>(_ result: T, _ completion: @escaping @Sendable (T) -> Void) {
    clock.schedule(after: latency) { completion(result) }
  }

  /// Changes the world, then answers a blocked wait that the change concerns (and stuck commands whose
  /// card went).
  private func change(_ body: (inout World) -> Void) {
    let (wait, changed, stuck, stopped) = world.withLock {
      world -> (Wait?, [PCSCReaderState]?, [Stuck], Bool) in
      body(&world)
      let released = world.stuck.filter { world.readers[$0.reader]?.card == nil || !world.running }
      world.stuck.removeAll { world.readers[$0.reader]?.card == nil || !world.running }
      guard let wait = world.wait else { return (nil, nil, released, false) }
      if !world.running {
        world.wait = nil
        return (wait, nil, released, true)
      }
      guard let changed = Self.changes(wait.readers, in: world) else { return (nil, nil, released, false) }
      world.wait = nil
      return (wait, changed, released, false)
    }
    for command in stuck { answer(.failure(PCSCError("SCardTransmit", .removedCard)), command.completion) }
    guard let wait else { return }
    clock.cancel(wait.timer)
    if stopped {
      answer(.failure(PCSCError("SCardGetStatusChange", .commError)), wait.completion)
    } else if let changed {
      answer(.success(changed), wait.completion)
    }
  }

  private static func state(of name: String, in world: World) -> UInt32 {
    guard let reader = world.readers[name] else { return PCSCReaderState.unknown }
    var flags = reader.card == nil ? PCSCReaderState.empty : PCSCReaderState.present
    if reader.card != nil && (reader.heldElsewhere || reader.connection != nil) {
      flags |= PCSCReaderState.exclusive | PCSCReaderState.inUse
    }
    return reader.counter << 16 | flags
  }

  private static func atr(_ name: String, _ world: World) -> [UInt8] {
    world.readers[name]?.card?.atr ?? []
  }

  /// The readers' new states when one differs from what the caller saw; `nil` when none does.
  private static func changes(_ readers: [PCSCReaderState], in world: World) -> [PCSCReaderState]? {
    var any = false
    let updated = readers.map { reader -> PCSCReaderState in
      var updated = reader
      let seen = reader.currentState & ~PCSCReaderState.changed
      let actual: UInt32
      if reader.name == PCSCReaderState.plugAndPlay {
        actual = UInt32(world.order.count) << 16
        let differs = seen >> 16 != actual >> 16
        any = any || differs
        updated.eventState = actual | (differs ? PCSCReaderState.changed : 0)
        return updated
      }
      actual = state(of: reader.name, in: world)
      let differs = seen == PCSCReaderState.unaware || seen != actual
      any = any || differs
      updated.eventState = actual | (differs ? PCSCReaderState.changed : 0)
      updated.atr = atr(reader.name, world)
      return updated
    }
    return any ? updated : nil
  }
}
