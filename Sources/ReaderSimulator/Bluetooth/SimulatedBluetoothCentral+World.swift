import ReaderCore

// The simulated world's state, and the part of it an advertisement runs through.
extension SimulatedBluetoothCentral {
  typealias Machine = SimulatedReaderStateMachine

  /// One reader: its rules, and the work its timers have on the clock.
  /// What an advertisement reads comes first, beside the machine's own first fields (stored properties are laid
  /// out in order), so that it reads as few lines of an entry as it can.
  struct Entry {
    /// What the advertising timer runs, made once for the reader's life and scheduled again at every
    /// advertisement (no closure made per advertisement). It holds the world's `Core`, strongly: a weak
    /// reference costs a call into the runtime to load at every advertisement. The world breaks the cycle
    /// when it is freed.
    var advertise: @Sendable () -> Void
    var advertising: ScheduledWork?
    var machine: Machine
    var securityReboot: ScheduledWork?
    var idlePowerDown: ScheduledWork?
    var connect: ScheduledWork?
    var installStep: ScheduledWork?

    init(reader: SimulatedReader, advertise: @escaping @Sendable () -> Void) {
      machine = Machine(reader: reader)
      self.advertise = advertise
    }

    /// The work armed for `timer` (the fire-and-forget reboot timers keep none).
    subscript(timer: Machine.Timer) -> ScheduledWork? {
      get {
        switch timer {
        case .advertise: advertising
        case .securityReboot: securityReboot
        case .idlePowerDown: idlePowerDown
        case .connect: connect
        case .installStep: installStep
        case .rebootStart, .rebootDone: nil
        }
      }
      set {
        switch timer {
        case .advertise: advertising = newValue
        case .securityReboot: securityReboot = newValue
        case .idlePowerDown: idlePowerDown = newValue
        case .connect: connect = newValue
        case .installStep: installStep = newValue
        case .rebootStart, .rebootDone: break
        }
      }
    }
  }

  /// The readers, each in a slot of its own for the world's life: a timer reaches its reader by slot, with no
  /// lookup of its serial number (thousands of readers advertising at 10 Hz fire a timer each time).
  struct Entries {
    private(set) var slots: [Entry] = []
    private var slotOf: [String: Int] = [:]

    /// The slot of the reader `serialNumber`, if the world has it.
    func slot(of serialNumber: String) -> Int? { slotOf[serialNumber] }

    /// Empties the world (when it is freed).
    mutating func removeAll() {
      slots.removeAll()
      slotOf.removeAll()
    }

    subscript(slot: Int) -> Entry {
      get { slots[slot] }
      _modify { yield &slots[slot] }
    }

    /// The reader `serialNumber`'s entry; setting one for a serial number already there replaces it in its slot.
    subscript(serialNumber: String) -> Entry? {
      get { slotOf[serialNumber].map { slots[$0] } }
      set {
        guard let newValue else { preconditionFailure("a simulated reader never leaves the world") }
        if let slot = slotOf[serialNumber] {
          slots[slot] = newValue
        } else {
          slotOf[serialNumber] = slots.count
          slots.append(newValue)
        }
      }
    }
  }

  struct World {
    var entries = Entries()
    var order: [String] = []
    var radioOn = true
    var scanning = false
    var handler: (@Sendable (BluetoothEvent) -> Void)?
    var linkHandler: (@Sendable (ReaderLinkEvent) -> Void)?
    var random: SeededRandom
    /// The latest events; `log.appended` counts every one since the world began.
    var log: RecentLog<WorldEvent>
  }

  /// What the readers' advertising work reaches: the world's state, its clock and interval. Apart from the
  /// world itself (which the app holds, and whose other work captures it) so that this work can hold it
  /// strongly without keeping the world alive.
  final class Core: Sendable {
    let clock: VirtualClock
    let interval: Machine.Interval
    let world: Locked<World>

    init(clock: VirtualClock, interval: Machine.Interval, world: World) {
      self.clock = clock
      self.interval = interval
      self.world = Locked(world)
    }

    /// The advertising timer of the reader in `slot` fired: the reader's machine says whether it advertises
    /// and when it does next (`advertisingTimerFired`, the same rules as its `timerFired(.advertise, …)`),
    /// with no list of actions or events built, since this runs for every advertisement of every reader. The
    /// advertisement is delivered from this work item rather than one more queued after it: nothing else
    /// runs in the item, so the terminal still sees one event per work item, and an advertisement costs one
    /// work item instead of two.
    func advertise(at slot: Int) {
      let delivery = world.withLock { world -> Delivery? in
        // Work taken from the clock just as the world was freed finds it empty.
        guard slot < world.entries.slots.count else { return nil }
        let around = Machine.Surroundings(
          radioOn: world.radioOn, scanning: world.scanning, now: clock.elapsed, interval: interval)
        return Self.advertise(&world.entries[slot], around, random: &world.random, handler: world.handler, clock)
      }
      if let delivery { delivery.handler(delivery.event) }
    }

    /// The reader's part of an advertisement, on its entry in place: one access to the entry, not one per field.
    @inline(__always)
    private static func advertise(
      _ entry: inout Entry, _ around: Machine.Surroundings, random: inout SeededRandom,
      handler: (@Sendable (BluetoothEvent) -> Void)?, _ clock: VirtualClock
    ) -> Delivery? {
      entry.advertising = nil
      let (advertisement, next) = entry.machine.advertisingTimerFired(around, random: &random)
      if let next { entry.advertising = clock.schedule(after: next, entry.advertise) }
      guard let advertisement, let handler else { return nil }
      return Delivery(event: .advertisement(advertisement), handler: handler)
    }
  }

  /// An event and the handler to deliver it to, out of the lock. A struct rather than a tuple: its closure
  /// passes through `withLock`'s generic result as it is, where a closure in a tuple is wrapped in a thunk
  /// allocated for the purpose (twice per advertisement).
  struct Delivery {
    var event: BluetoothEvent
    var handler: @Sendable (BluetoothEvent) -> Void
  }
}
