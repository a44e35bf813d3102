import Foundation
import ReaderCore

/// Faults to inflict on a `SimulatedBluetoothCentral` at given times: written by hand, or drawn
/// from a seed for soak tests and demos.
///
/// Every fault that takes something away also gives it back (a walk-away returns, a power cycle
/// switches the reader on again), except a battery drain, whose reader stays down if it drained to
/// the critical level until a later `charge` — `random(seed:…)` always schedules one.
///
/// ```swift
/// let schedule = SimulatedFaultSchedule.random(seed: 42, serialNumbers: ["STRM2-0002"], over: .seconds(3 * 3600))
/// schedule.apply(to: world)           // times count from now on the world's clock
/// world.clock.advance(to: schedule.end)
/// ```
///
/// The same seed and arguments always give the same schedule, and applying it is deterministic.
public struct SimulatedFaultSchedule: Sendable, Hashable, CustomStringConvertible {
  /// One fault: what happens, to which reader, and when.
  public struct Fault: Sendable, Hashable, CustomStringConvertible {
    /// What happens.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
      /// The reader leaves Bluetooth range (`bluetoothSignalLost`) and comes back after the duration.
      case walkAway(Duration)
      /// The reader is switched off (`poweredOff`) and on again after the duration.
      case powerCycle(Duration)
      /// The host's Bluetooth radio is turned off (`bluetoothDisabled`) and on again after the
      /// duration. Concerns no particular reader.
      case radioOff(Duration)
      /// The reader is taken off its charger and its battery drains linearly to the level (in
      /// `0...1`) over the duration; at or below 5 % it shuts down (`criticallyLowBattery`).
      case batteryDrain(to: Double, over: Duration)
      /// A person puts the reader on its charger with the battery at the level, and switches it on
      /// if it was off.
      case charge(to: Double)
      /// An M2 or WisePad 3 performs its security reboot now (`securityReboot`).
      case securityReboot
      /// The reader's link drops for no reason it reports (`unknown`); it stays on and in range.
      case linkLoss

      /// How long the fault lasts after it starts (zero for the instantaneous ones).
      public var duration: Duration {
        switch self {
        case .walkAway(let duration), .powerCycle(let duration), .radioOff(let duration): duration
        case .batteryDrain(_, let duration): duration
        case .charge, .securityReboot, .linkLoss: .zero
        }
      }

      public var description: String {
        switch self {
        case .walkAway(let duration): "walkAway(\(duration))"
        case .powerCycle(let duration): "powerCycle(\(duration))"
        case .radioOff(let duration): "radioOff(\(duration))"
        case .batteryDrain(let level, let duration): "batteryDrain(to: \(level), over: \(duration))"
        case .charge(let level): "charge(to: \(level))"
        case .securityReboot: "securityReboot"
        case .linkLoss: "linkLoss"
        }
      }
    }

    /// When it starts, counted from the moment the schedule is applied.
    public var time: Duration
    /// The reader concerned; `nil` for the host (`radioOff`).
    public var serialNumber: String?
    /// What happens.
    public var kind: Kind

    /// Creates a fault.
    public init(at time: Duration, _ kind: Kind, serialNumber: String?) {
      self.time = time
      self.kind = kind
      self.serialNumber = serialNumber
    }

    /// `time reader kind`, e.g. `3600.0 seconds STRM2-0002 walkAway(90.0 seconds)`.
    public var description: String { "\(time) \(serialNumber ?? "host") \(kind)" }
  }

  /// Which kinds of fault `random(seed:…)` draws.
  public enum Category: String, Sendable, Hashable, CaseIterable {
    case walkAway, powerCycle, radioOff, batteryDrain, securityReboot, linkLoss
  }

  /// The faults, in time order (faults at the same time keep their order).
  public let faults: [Fault]

  /// A schedule of `faults`, sorted by time.
  public init(_ faults: [Fault]) {
    self.faults = faults.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
      .map(\.element)
  }

  /// When the last fault is over, counted like `Fault.time`.
  public var end: Duration {
    faults.map { $0.time + $0.kind.duration }.max() ?? .zero
  }

  public var description: String { faults.map(\.description).joined(separator: "\n") }

  /// Draws a schedule from `seed`: faults start at random times within `duration` (on average one
  /// every `meanInterval`), each picks a reader from `serialNumbers` and a kind from `categories`.
  ///
  /// Durations are drawn so that some faults end within the terminal's default 60-second reconnect
  /// deadline and others outlast it: walk-aways of 2 s to 5 min, power cycles of 5 s to 3 min,
  /// radio outages of 2 s to 3 min, battery drains to 1–50 % over 1–30 min (each followed 1–20 min
  /// later by a `charge` to 90 %). Every fault is over by `end`, which may lie past `duration`.
  public static func random(
    seed: UInt64, serialNumbers: [String], over duration: Duration, meanInterval: Duration = .seconds(600),
    categories: Set<Category> = Set(Category.allCases)
  ) -> SimulatedFaultSchedule {
    var random = SeededRandom(seed: seed ^ 0xFA17_5C4E_D01E)
    let kinds = Category.allCases.filter(categories.contains)
    guard !serialNumbers.isEmpty, !kinds.isEmpty, duration > .zero, meanInterval > .zero else { return .init([]) }

    func between(_ low: Duration, _ high: Duration) -> Duration {
      // Whole milliseconds, so schedules print and compare cleanly.
      let span = (high - low) / .milliseconds(1)
      return low + .milliseconds(Int64(random.nextUnit() * span))
    }

    var faults: [Fault] = []
    var time = Duration.zero
    while true {
      // Exponential gaps: a Poisson process with the requested mean.
      time += meanInterval * -log1p(-random.nextUnit())
      time = .milliseconds(Int64(time / .milliseconds(1)))
      guard time < duration else { break }
      let serial = serialNumbers[Int(random.next() % UInt64(serialNumbers.count))]
      switch kinds[Int(random.next() % UInt64(kinds.count))] {
      case .walkAway:
        faults.append(Fault(at: time, .walkAway(between(.seconds(2), .seconds(300))), serialNumber: serial))
      case .powerCycle:
        faults.append(Fault(at: time, .powerCycle(between(.seconds(5), .seconds(180))), serialNumber: serial))
      case .radioOff:
        faults.append(Fault(at: time, .radioOff(between(.seconds(2), .seconds(180))), serialNumber: nil))
      case .batteryDrain:
        let level = (1 + random.nextUnit() * 49).rounded() / 100
        let drain = between(.seconds(60), .seconds(1800))
        faults.append(Fault(at: time, .batteryDrain(to: level, over: drain), serialNumber: serial))
        let charged = time + drain + between(.seconds(60), .seconds(1200))
        faults.append(Fault(at: charged, .charge(to: 0.9), serialNumber: serial))
      case .securityReboot:
        faults.append(Fault(at: time, .securityReboot, serialNumber: serial))
      case .linkLoss:
        faults.append(Fault(at: time, .linkLoss, serialNumber: serial))
      }
    }
    return .init(faults)
  }

  /// Schedules every fault on `world`'s clock, counting from now. Faults naming a reader the world
  /// does not have do nothing.
  public func apply(to world: SimulatedBluetoothCentral) {
    for fault in faults {
      world.clock.schedule(after: fault.time) { fault.inflict(on: world) }
    }
  }
}

extension SimulatedFaultSchedule.Fault {
  fileprivate func inflict(on world: SimulatedBluetoothCentral) {
    let serial = serialNumber ?? ""
    switch kind {
    case .walkAway(let duration):
      world.walkAway(serial, for: duration)
    case .powerCycle(let duration):
      world.setPower(serial, on: false)
      world.clock.schedule(after: duration) { world.setPower(serial, on: true) }
    case .radioOff(let duration):
      world.setRadio(on: false)
      world.clock.schedule(after: duration) { world.setRadio(on: true) }
    case .batteryDrain(let level, let duration):
      guard let reader = world.reader(serial) else { return }
      world.setBattery(serial, level: reader.batteryLevel, isCharging: false)
      world.drainBattery(serial, to: level, over: duration)
    case .charge(let level):
      world.setBattery(serial, level: level, isCharging: true)
      world.setPower(serial, on: true)
    case .securityReboot:
      world.forceSecurityReboot(serial)
    case .linkLoss:
      world.dropLink(serial)
    }
  }
}
