import Foundation
import ReaderCore

/// Plays a recording (`RecordingTransport`'s lines) back to a terminal on a `VirtualClock`: it is the
/// terminal's `BluetoothCentral` and `ReaderLink`, reports each recorded event at its recorded instant,
/// and checks that the terminal gives the recorded commands, in order.
///
/// `run(until:limit:)` drives the clock from one instant to the next — a recorded event's or the
/// terminal's own timer's — checking the condition after each. When they coincide, the terminal's
/// timers of the instant run first, then the condition is checked, then the recorded events play:
/// the order a live `--bluez` session keeps by construction, as it delivers its transport's work only
/// at instants where none of the terminal's work ran before it. The events a
/// transport reports at the instant of a command (the answers it defers until after the command)
/// are scheduled when the terminal gives that command, so they run where they ran live.
///
/// A terminal that gives a command the recording does not have, or leaves out one it has, makes the
/// replay diverge: `divergences` says where, and from there the replay may not match the recording.
public final class ReplayingTransport: BluetoothCentral, ReaderLink, Sendable {
  private struct State {
    var remaining: ArraySlice<TransportRecord>
    var handler: (@Sendable (BluetoothEvent) -> Void)?
    var linkHandler: (@Sendable (ReaderLinkEvent) -> Void)?
    var isPoweredOn: Bool
    var divergences: [String] = []
  }

  /// The most divergences kept (the first one matters; the rest usually follow from it).
  public static let maximumDivergences = 20

  private let clock: VirtualClock
  private let origin: Duration
  private let state: Locked<State>

  /// A replay of `records` (read with `TransportRecord.read`) on `clock`, whose time `origin` is the
  /// recording's start.
  public init(header: TransportRecordHeader, records: [TransportRecord], clock: VirtualClock, origin: Duration) {
    self.clock = clock
    self.origin = origin
    state = Locked(State(remaining: records[...], isPoweredOn: header.isPoweredOn))
  }

  /// Where the terminal departed from the recording, in order; empty while it follows it.
  public var divergences: [String] { state.withLock { $0.divergences } }

  /// Whether every recorded command and event has been played.
  public var isFinished: Bool { state.withLock { $0.remaining.isEmpty } }

  /// Runs the clock, instant by instant, until `condition` holds (checked after each instant) or `limit`
  /// has passed; returns whether `condition` holds.
  @discardableResult
  public func run(until condition: () -> Bool, limit: Duration) -> Bool {
    let end = clock.elapsed + max(limit, .zero)
    while !condition() {
      let recorded = state.withLock { $0.remaining.first?.time.map { origin + $0 } }
      let timer = clock.nextDeadline.map { max($0, clock.elapsed) }
      guard let next = [recorded, timer].compactMap({ $0 }).min(), next <= end else {
        clock.advance(to: end)
        return condition()
      }
      clock.advance(to: next)
      // A clock that does not move would offer the same instant for ever: give up instead.
      guard clock.elapsed >= next else { return condition() }
      if let timer, timer == next { continue }
      playRecordsDue()
    }
    return true
  }

  /// Plays the events recorded for now, in order, up to the next command; a command recorded for now
  /// that the terminal did not give by then is a divergence.
  private func playRecordsDue() {
    let now = clock.elapsed
    let events = state.withLock { state -> [TransportEvent] in
      var events: [TransportEvent] = []
      while case .event(let time, let event)? = state.remaining.first, origin + time == now {
        events.append(event)
        state.remaining.removeFirst()
      }
      return events
    }
    if events.isEmpty {
      state.withLock { state in
        guard case .command(let time, let command)? = state.remaining.first, origin + time <= now else { return }
        state.remaining.removeFirst()
        Self.diverge(&state, "at \(time) the recording has \(command), which the terminal did not give")
      }
      return
    }
    for event in events { clock.execute { [self] in deliver(event) } }
    clock.runUntilIdle()
  }

  private func deliver(_ event: TransportEvent) {
    switch event {
    case .central(let event):
      let handler = state.withLock { state -> (@Sendable (BluetoothEvent) -> Void)? in
        if case .radioStateChanged(let on) = event { state.isPoweredOn = on }
        return state.handler
      }
      handler?(event)
    case .link(let event):
      state.withLock { $0.linkHandler }?(event)
    }
  }

  /// The terminal gave `command`: it must be the next record. The events recorded at the same instant
  /// right after it are its deferred answers: they are scheduled now, behind the work already due.
  private func gave(_ command: TransportCommand) {
    let now = clock.elapsed
    let answers = state.withLock { state -> [TransportEvent] in
      guard case .command(let time, let recorded)? = state.remaining.first, recorded == command else {
        let expected = state.remaining.first.map { "\($0)" } ?? "the end of the recording"
        Self.diverge(&state, "at \(now - origin) the terminal gave \(command) where the recording has \(expected)")
        return []
      }
      state.remaining.removeFirst()
      var answers: [TransportEvent] = []
      while case .event(let next, let event)? = state.remaining.first, next == time {
        answers.append(event)
        state.remaining.removeFirst()
      }
      return answers
    }
    for event in answers { clock.execute { [self] in deliver(event) } }
  }

  private static func diverge(_ state: inout State, _ what: String) {
    guard state.divergences.count < maximumDivergences else { return }
    state.divergences.append(what)
  }

  // MARK: BluetoothCentral

  public func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) {
    state.withLock { $0.handler = handler }
  }

  public var isPoweredOn: Bool { state.withLock { $0.isPoweredOn } }
  public func startScan() { gave(.startScan) }
  public func stopScan() { gave(.stopScan) }
  public func connect(serialNumber: String) { gave(.connect(serialNumber: serialNumber)) }
  public func cancelConnect(serialNumber: String) { gave(.cancelConnect(serialNumber: serialNumber)) }
  public func disconnect(serialNumber: String) { gave(.disconnect(serialNumber: serialNumber)) }

  // MARK: ReaderLink

  public func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {
    state.withLock { $0.linkHandler = handler }
  }

  public func flashLEDs(serialNumber: String) { gave(.flashLEDs(serialNumber: serialNumber)) }
  public func reboot(serialNumber: String) { gave(.reboot(serialNumber: serialNumber)) }
  public func cancelUpdate(serialNumber: String) { gave(.cancelUpdate(serialNumber: serialNumber)) }

  public func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?) {
    gave(
      .installUpdate(
        serialNumber: serialNumber, update: update, imageSize: image?.count,
        imageSHA256: image.map { SHA256Checksum.compute($0) }))
  }
}
