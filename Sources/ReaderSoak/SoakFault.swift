import Foundation
import ReaderKit

/// One thing done to a station: a fault of its world, the death of its app, or a command the merchant
/// gives at a bad moment.
public struct SoakAction: Sendable, Hashable, CustomStringConvertible {
  /// What is done.
  public enum Kind: String, Sendable, Hashable, CaseIterable {
    // The Bluetooth world.
    /// The reader leaves range for `duration`.
    case walkAway
    /// The reader is switched off for `duration`.
    case powerCycle
    /// The phone's Bluetooth radio is off for `duration`.
    case hostRadioOff
    /// The reader, off its charger, drains to `amount` over `duration`, and is charged later.
    case batteryDrain
    /// An M2 or WisePad 3 performs its security reboot now.
    case securityReboot
    /// The link drops for no reason the reader reports.
    case linkLoss
    /// The reader's next install fails once it reaches `amount`.
    case updateFails
    /// The reader drops its link during its next install once it reaches `amount`.
    case updateDropsLink
    // The update catalog.
    /// The catalog's next answer is an error.
    case catalogFails
    /// The catalog's next image download fails.
    case imageFails
    // The app's process.
    /// The app is killed, and launched again after `duration`.
    case appKill
    /// The phone loses power: the app dies and whatever the disk had not flushed is lost; the app is
    /// launched again after `duration`.
    case powerLoss
    /// The app is killed at its file system call number `amount` from now (a save is about ten calls),
    /// and launched again after `duration`.
    case killDuringSave
    // The merchant's commands.
    /// `rebootReader()`.
    case reboot
    /// `disconnectReader()`.
    case disconnect
    /// `installAvailableUpdate()`.
    case installUpdate
    /// Cancels the running install with its `Cancelable`.
    case cancelInstall
    /// Cancels the running reconnection with its `Cancelable`.
    case cancelReconnect
    /// Cancels the running connect or reconnect at launch.
    case cancelConnect
    /// The merchant moves to reader `reader`: disconnects, and connects that one.
    case switchReader
    // The NFC world.
    /// A tag passes through the field for `duration` (a short one).
    case tagFlicker
    /// The next tag read or write loses its tag halfway.
    case tagRemovedMidRead
    /// Another app holds the NFC radio for `duration`.
    case nfcBusy
    /// The system ends every NFC session of the app (it moved to the background).
    case nfcTermination
    /// The NFC radio is off for `duration`.
    case nfcRadioOff
    /// The person taps Cancel on the scan sheet.
    case userCancel
    /// The system's session time limit changes (20 s ↔ 60 s); sessions begun from now on get the new one.
    case nfcLimitChange
    /// A tag arrives at the very instant the running session ends: the person taps Cancel, the app
    /// invalidates it, or the system terminates it (`amount` 0, 1, 2). On a phone that detects at once,
    /// the detection is already on its way when the session ends.
    case tagRace
    // The NFC app.
    /// The app begins `amount` sessions at once.
    case nfcBurst
    /// The app invalidates one of its sessions, waiting or running.
    case nfcInvalidate

    /// Whether it concerns the NFC side of the station.
    public var isNFC: Bool {
      switch self {
      case .tagFlicker, .tagRemovedMidRead, .nfcBusy, .nfcTermination, .nfcRadioOff, .userCancel, .nfcLimitChange,
        .tagRace, .nfcBurst,
        .nfcInvalidate:
        true
      default:
        false
      }
    }
  }

  /// What is done.
  public var kind: Kind
  /// The reader (or tag) concerned, as an index in the station's; `nil` for the reader the app uses now.
  public var target: Int?
  /// How long it lasts, or when the app comes back; zero for instantaneous kinds.
  public var duration: Duration
  /// A battery level, a progress, a call number or a count, depending on the kind.
  public var amount: Double

  /// Creates an action.
  public init(_ kind: Kind, target: Int? = nil, duration: Duration = .zero, amount: Double = 0) {
    self.kind = kind
    self.target = target
    self.duration = duration
    self.amount = amount
  }

  public var description: String {
    var parts: [String] = []
    if let target { parts.append("#\(target)") }
    if duration > .zero { parts.append(duration.soakText) }
    if amount != 0 { parts.append(amount == amount.rounded() ? "\(Int(amount))" : String(format: "%.2f", amount)) }
    return parts.isEmpty ? kind.rawValue : "\(kind.rawValue)(\(parts.joined(separator: ", ")))"
  }
}

/// One entry of a soak's fault schedule: one or more actions (more than one happen at the same
/// instant), due at `time`, on one station.
///
/// An aimed fault waits from `time` for its station to enter `aim` (or strikes at once if it is there),
/// then strikes `delay` later; one that waits more than `SoakFault.maximumWait` strikes anyway. The
/// schedule is drawn from the seed before the run, so removing entries (to shrink a failure) leaves
/// the others as they were.
public struct SoakFault: Sendable, Hashable, CustomStringConvertible {
  /// Its number in the schedule, from 0: what `--keep` lists.
  public var id: Int
  /// The station it strikes.
  public var station: Int
  /// When it becomes due, from the start of the run.
  public var time: Duration
  /// The state it waits for, if any.
  public var aim: SoakState?
  /// How long after its state is entered (or after `time`) it strikes.
  public var delay: Duration
  /// What it does, in order, at one instant.
  public var actions: [SoakAction]

  /// How long an aimed fault waits for its state before striking anyway.
  public static let maximumWait = Duration.seconds(24 * 3600)

  /// Creates an entry.
  public init(id: Int, station: Int, time: Duration, aim: SoakState?, delay: Duration, actions: [SoakAction]) {
    self.id = id
    self.station = station
    self.time = time
    self.aim = aim
    self.delay = delay
    self.actions = actions
  }

  /// `#id station@time [aim+delay] actions`, e.g. `#12 s1@3600.0s installing+4.2s walkAway(42.0s)`.
  public var description: String {
    let aimed = aim.map { " \($0)+\(delay.soakText)" } ?? ""
    return "#\(id) s\(station)@\(time.soakText)\(aimed) \(actions.map(\.description).joined(separator: " & "))"
  }

  /// Draws a schedule: on each station and each side (Bluetooth, NFC), entries at exponential intervals
  /// (`perHour` a simulated hour on average) over `duration`, each with a kind of its side drawn
  /// uniformly, three in four aimed at a state of its side, and one in six with companions of its side
  /// at the same instant.
  public static func schedule(
    seed: UInt64, stations: Int, readers: Int, tags: Int, over duration: Duration, perHour: Double
  ) -> [SoakFault] {
    guard perHour > 0, duration > .zero else { return [] }
    var faults: [SoakFault] = []
    for station in 0..<stations {
      for nfc in [false, true] {
        let stream = UInt64(station * 2 + (nfc ? 1 : 0))
        var random = SeededRandom(seed: seed ^ 0xFA17_5EED ^ (stream &+ 1) &* 0x9E37_79B9_7F4A_7C15)
        let kinds = SoakAction.Kind.allCases.filter { $0.isNFC == nfc }
        var time = Duration.zero
        while true {
          time += .seconds(3600 / perHour) * -log1p(-random.nextUnit())
          time = .milliseconds(Int64(time / .milliseconds(1)))
          guard time < duration else { break }
          var actions = [action(&random, kinds: kinds, readers: readers, tags: tags)]
          if random.nextUnit() < 1.0 / 6 {
            for _ in 0...(random.next() % 2) {
              actions.append(action(&random, kinds: kinds, readers: readers, tags: tags))
            }
          }
          var aim: SoakState?
          var delay = Duration.zero
          if random.nextUnit() < 0.75 {
            let state =
              nfc ? nfcAim(random.nextUnit()) : bluetoothAims[Int(random.next() % UInt64(bluetoothAims.count))]
            aim = state
            if random.nextUnit() >= 0.2 { delay = between(.zero, state.typicalSpan, &random) }
          }
          faults.append(SoakFault(id: 0, station: station, time: time, aim: aim, delay: delay, actions: actions))
        }
      }
    }
    // Numbered in time order across the stations, so ids read chronologically.
    faults.sort {
      ($0.time, $0.station, $0.actions[0].kind.isNFC ? 1 : 0) < ($1.time, $1.station, $1.actions[0].kind.isNFC ? 1 : 0)
    }
    for index in faults.indices { faults[index].id = index }
    return faults
  }

  private static let bluetoothAims = SoakState.aimable.filter { !$0.isNFC }

  /// NFC faults mostly aim at a session that runs or waits: half at an active one, three in ten at a
  /// line, the rest at no session at all.
  private static func nfcAim(_ unit: Double) -> SoakState {
    unit < 0.5 ? .nfcActive : unit < 0.8 ? .nfcQueued : .nfcIdle
  }

  private static func action(
    _ random: inout SeededRandom, kinds: [SoakAction.Kind], readers: Int, tags: Int
  ) -> SoakAction {
    let kind = kinds[Int(random.next() % UInt64(kinds.count))]
    let reader = random.nextUnit() < 0.25 ? Int(random.next() % UInt64(max(readers, 1))) : nil
    /// Outages are as often over within the 60-second reconnect deadline (with time to spare) as not.
    func outage(_ low: Duration, _ high: Duration) -> Duration {
      random.nextUnit() < 0.5 ? between(low, .seconds(40), &random) : between(.seconds(40), high, &random)
    }
    switch kind {
    case .walkAway: return SoakAction(kind, target: reader, duration: outage(.seconds(2), .seconds(300)))
    case .powerCycle: return SoakAction(kind, target: reader, duration: outage(.seconds(5), .seconds(180)))
    case .hostRadioOff: return SoakAction(kind, duration: outage(.seconds(2), .seconds(180)))
    case .batteryDrain:
      let level = (1 + random.nextUnit() * 49).rounded() / 100
      return SoakAction(kind, target: reader, duration: between(.seconds(60), .seconds(1800), &random), amount: level)
    case .securityReboot, .linkLoss: return SoakAction(kind, target: reader)
    case .updateFails, .updateDropsLink:
      return SoakAction(kind, target: reader, amount: (2 + random.nextUnit() * 96).rounded() / 100)
    case .catalogFails, .imageFails, .reboot, .disconnect, .installUpdate, .cancelInstall, .cancelReconnect,
      .cancelConnect, .tagRemovedMidRead, .nfcTermination, .userCancel, .nfcLimitChange:
      return SoakAction(kind)
    case .appKill, .powerLoss:
      return SoakAction(kind, duration: between(.milliseconds(500), .seconds(120), &random))
    case .killDuringSave:
      return SoakAction(
        kind, duration: between(.milliseconds(500), .seconds(60), &random), amount: Double(1 + random.next() % 14))
    case .switchReader: return SoakAction(kind, target: Int(random.next() % UInt64(max(readers, 1))))
    case .tagFlicker:
      return SoakAction(
        kind, target: Int(random.next() % UInt64(max(tags, 1))),
        duration: between(.milliseconds(20), .milliseconds(400), &random))
    case .tagRace:
      return SoakAction(
        kind, target: Int(random.next() % UInt64(max(tags, 1))),
        duration: between(.milliseconds(300), .seconds(3), &random), amount: Double(random.next() % 3))
    case .nfcBusy: return SoakAction(kind, duration: between(.milliseconds(100), .seconds(5), &random))
    case .nfcRadioOff: return SoakAction(kind, duration: between(.seconds(1), .seconds(10), &random))
    case .nfcBurst: return SoakAction(kind, amount: Double(2 + random.next() % 3))
    case .nfcInvalidate: return SoakAction(kind, amount: Double(random.next() % 1000))
    }
  }

  /// A duration drawn uniformly from `low...high`, in whole milliseconds.
  static func between(_ low: Duration, _ high: Duration, _ random: inout SeededRandom) -> Duration {
    let span = (high - low) / .milliseconds(1)
    return low + .milliseconds(Int64(random.nextUnit() * span))
  }
}

extension Duration {
  /// Seconds with the milliseconds that matter: `42.5s`, `0.02s`, `3600s`.
  var soakText: String {
    let milliseconds = self / .milliseconds(1)
    let text = String(format: "%.3f", milliseconds / 1000)
    var trimmed = Substring(text)
    while trimmed.hasSuffix("0") { trimmed = trimmed.dropLast() }
    if trimmed.hasSuffix(".") { trimmed = trimmed.dropLast() }
    return "\(trimmed)s"
  }
}
