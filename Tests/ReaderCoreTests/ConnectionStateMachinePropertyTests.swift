import Testing

@testable import ReaderCore

/// Random input sequences against the invariants the terminal's events promise.
///
/// The driver is modelled the way `TerminalEngine` behaves: a timer fires only while armed (arming
/// replaces, disarming drops), and hardware events arrive at any time, for our reader or another.
/// Stray timer fires are injected too; the machine must ignore them.
@Suite struct ConnectionStateMachinePropertyTests {
  private typealias Machine = ConnectionStateMachine
  private typealias Action = Machine.Action

  private enum Input: CustomStringConvertible {
    case connect(String, locationId: String)
    case disconnect, reboot, cancelConnect, cancelReconnect
    case linkUp(String), linkFailed(String), linkDown(String, DisconnectReason)
    case rebootResponse(String, accepted: Bool)
    case battery(String, Double)
    case radio(Bool)
    case fire(Machine.Timer)

    var description: String {
      switch self {
      case .connect(let serial, let location): "connect(\(serial), \(location))"
      case .disconnect: "disconnect"
      case .reboot: "reboot"
      case .cancelConnect: "cancelConnect"
      case .cancelReconnect: "cancelReconnect"
      case .linkUp(let serial): "linkUp(\(serial))"
      case .linkFailed(let serial): "linkFailed(\(serial))"
      case .linkDown(let serial, let reason): "linkDown(\(serial), \(reason))"
      case .rebootResponse(let serial, let accepted): "rebootResponse(\(serial), accepted: \(accepted))"
      case .battery(let serial, let level): "battery(\(serial), \(level))"
      case .radio(let on): "radio(\(on))"
      case .fire(let timer): "fire(\(timer))"
      }
    }
  }

  private static let readers = [
    Reader(serialNumber: "STRM2-0001", deviceType: .stripeM2),
    Reader(serialNumber: "CHB20-0002", deviceType: .chipper2X),
  ]
  /// The disconnects the reader does not come back from by itself, so no reconnection follows.
  private static let final: Set<DisconnectReason> = [.disconnectRequested, .criticallyLowBattery, .idlePowerDown]
  private static let timers: [Machine.Timer] = [
    .connect, .reconnectAttempt, .reconnectBackoff, .reconnectDeadline, .disconnectReply, .rebootReply, .rebootDrop,
  ]

  /// One randomized run: the machine, the driver's view of it, and what has happened so far.
  private struct Run {
    let seed: UInt64
    let autoReconnect: Bool
    var random: SeededRandom
    var machine: Machine
    var armed: Set<Machine.Timer> = []
    /// The reader of the current connection (from `connect` until the final event).
    var target: Reader?
    var locationId: String?
    var reconnecting = false
    var trace: [String] = []
    var failure: String?
    /// Statuses and outcomes the run went through, to check that the generator goes deep enough.
    var seen: Set<String> = []

    init(seed: UInt64) {
      self.seed = seed
      var random = SeededRandom(seed: seed)
      autoReconnect = random.next() % 4 != 0
      let policy = ReconnectPolicy(
        deadline: .seconds(Int(random.next() % 90) + 1), initialDelay: .milliseconds(Int(random.next() % 2_000) + 1))
      machine = Machine(
        autoReconnect: autoReconnect, policy: policy, connectTimeout: .seconds(15),
        random: SeededRandom(seed: random.next()))
      self.random = random
    }

    mutating func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }

    /// Mostly the current reader, sometimes another: late and foreign events are part of the game.
    mutating func someSerial() -> String {
      if let target, random.next() % 8 != 0 { return target.serialNumber }
      return pick(ConnectionStateMachinePropertyTests.readers).serialNumber
    }

    mutating func nextInput() -> Input {
      switch random.next() % 16 {
      case 0:
        return .connect(
          pick(ConnectionStateMachinePropertyTests.readers).serialNumber, locationId: pick(["tml_1", "tml_2"]))
      case 1: return .disconnect
      case 2: return .reboot
      case 3: return .cancelConnect
      case 4: return .cancelReconnect
      case 5, 6: return .linkUp(someSerial())
      case 7: return .linkFailed(someSerial())
      case 8, 9: return .linkDown(someSerial(), pick(DisconnectReason.allCases))
      case 10: return .rebootResponse(someSerial(), accepted: random.next() % 2 == 0)
      case 11: return .battery(someSerial(), Double(random.next() % 101) / 100)
      case 12: return .radio(random.next() % 2 == 0)
      case 13:
        // Usually a stray: a fire the driver would not deliver, which the machine must ignore.
        return .fire(pick(ConnectionStateMachinePropertyTests.timers))
      default:
        let live = ConnectionStateMachinePropertyTests.timers.filter { armed.contains($0) }
        return live.isEmpty ? .linkUp(someSerial()) : .fire(pick(live))
      }
    }

    mutating func fail(_ message: String) {
      guard failure == nil else { return }
      failure =
        "seed \(seed) (autoReconnect \(autoReconnect)): \(message)\nlast inputs:\n"
        + trace.suffix(12).joined(separator: "\n")
    }

    mutating func step() {
      let input = nextInput()
      let before = machine.status
      let stray: Bool
      if case .fire(let timer) = input {
        stray = !armed.contains(timer)
        armed.remove(timer)
      } else {
        stray = false
      }
      var commandFailed = false
      var actions: [Action] = []
      var result: Result<[Action], ReaderError>?
      switch input {
      case .connect(let serial, let location):
        let reader = ConnectionStateMachinePropertyTests.readers.first { $0.serialNumber == serial }!
        switch machine.connect(reader, locationId: location) {
        case .success(let result):
          actions = result
          target = reader
          locationId = location
        case .failure(let error):
          commandFailed = true
          if before == .notConnected { fail("connect failed while not connected: \(error)") }
          if error.code != .alreadyConnected { fail("connect failed with \(error.code)") }
        }
      case .disconnect, .reboot:
        if case .disconnect = input { result = machine.disconnect() } else { result = machine.reboot() }
      case .cancelConnect: actions = machine.cancelConnect() ?? []
      case .cancelReconnect: actions = machine.cancelReconnect() ?? []
      case .linkUp(let serial): actions = machine.linkUp(serialNumber: serial, info: ReaderInfo(batteryLevel: 0.5))
      case .linkFailed(let serial):
        actions = machine.linkFailed(serialNumber: serial, error: ReaderError(.connectionFailed, "failed"))
      case .linkDown(let serial, let reason): actions = machine.linkDown(serialNumber: serial, reason: reason)
      case .rebootResponse(let serial, let accepted):
        actions = machine.rebootResponse(
          serialNumber: serial, error: accepted ? nil : ReaderError(.rebootFailed, "refused"))
      case .battery(let serial, let level):
        actions = machine.battery(serialNumber: serial, level: level, isCharging: false)
      case .radio(let on): actions = machine.radio(isPoweredOn: on)
      case .fire(let timer): actions = machine.timerFired(timer)
      }
      switch result {
      case .success(let result)?: actions = result
      case .failure(let error)?:
        commandFailed = true
        if error.code != .notConnected { fail("\(input) failed with \(error.code)") }
      case nil: break
      }
      let shown = actions.map { "\($0)".replacing("ReaderCore.ConnectionStateMachine.", with: "") }
      trace.append("\(before) --\(input)--> \(machine.status): \(shown)")
      check(input, before: before, actions: actions, stray: stray, commandFailed: commandFailed)
    }

    mutating func check(_ input: Input, before: ConnectionStatus, actions: [Action], stray: Bool, commandFailed: Bool) {
      let after = machine.status
      let isConnect = if case .connect = input { true } else { false }
      seen.insert("\(after)")

      if stray && !actions.isEmpty { fail("a timer fired while not armed and produced \(actions)") }
      if commandFailed && after != before { fail("a failed command changed the status") }

      // Nothing but absorbed no-ops while not connected, until a new connect.
      if before == .notConnected && !isConnect {
        let absorbed = actions.allSatisfy { if case .closeLink = $0 { true } else { false } }
        if !absorbed || after != .notConnected { fail("not connected, yet \(input) produced \(actions)") }
      }

      for (index, action) in actions.enumerated() {
        switch action {
        case .arm(let timer, let delay):
          if armed.contains(timer) { fail("\(timer) armed twice without a disarm or fire") }
          if delay < .zero { fail("\(timer) armed with negative delay \(delay)") }
          armed.insert(timer)
        case .disarm(let timer):
          armed.remove(timer)
        case .reconnectFailed(let reader, _):
          guard index + 1 < actions.count, case .disconnected(let next, _) = actions[index + 1], next == reader else {
            fail("reconnectFailed not immediately followed by disconnected")
            break
          }
          if !reconnecting { fail("reconnectFailed without a reconnection") }
          seen.insert("reconnectFailed")
          reconnecting = false
        case .reconnectStarted(_, let reason):
          if reconnecting { fail("reconnectStarted twice") }
          if !autoReconnect { fail("reconnectStarted without autoReconnect") }
          if ConnectionStateMachinePropertyTests.final.contains(reason) { fail("reconnectStarted after \(reason)") }
          reconnecting = true
        case .reconnectSucceeded(let reader):
          if !reconnecting { fail("reconnectSucceeded without a reconnection") }
          if reader.locationId != locationId {
            fail("reconnected at \(reader.locationId ?? "nil"), not \(locationId ?? "nil")")
          }
          seen.insert("reconnectSucceeded")
          reconnecting = false
        case .connected(let reader):
          if before != .connecting { fail("connected while \(before)") }
          if reader.locationId != locationId || reader.serialNumber != target?.serialNumber {
            fail("connected \(reader) at \(reader.locationId ?? "nil")")
          }
        case .disconnected:
          if index > 0, case .reconnectFailed = actions[index - 1] {
          } else if reconnecting {
            fail("disconnected during a reconnection without reconnectFailed")
          }
        case .openLink(let serial), .abandonLink(let serial), .sendReboot(let serial):
          if serial != target?.serialNumber { fail("\(action) for a reader that is not ours") }
        case .lowBatteryWarning(let reader):
          guard index > 0, case .readerUpdated(let updated) = actions[index - 1], updated == reader,
            let level = reader.batteryLevel, level <= BatteryStatus.warningThreshold
          else {
            fail("lowBatteryWarning without a low readerUpdated before it")
            break
          }
        case .closeLink, .connectFailed, .disconnectCompleted, .rebootAnswered, .readerUpdated, .rebootNotCarriedOut,
          .listen, .stopListening, .linkReady:
          break
        }
      }

      // The status agrees with the last action that says where the link stands.
      if let implied = actions.lazy.reversed().compactMap(Run.impliedStatus).first {
        if after != implied { fail("status \(after) after actions implying \(implied)") }
      } else if isConnect && !commandFailed {
        if after != .connecting { fail("status \(after) after a connect") }
      } else if after != before {
        fail("status moved \(before) -> \(after) without an action saying so")
      }

      if (after == .reconnecting) != reconnecting { fail("status \(after) but reconnection open: \(reconnecting)") }
      if after == .notConnected {
        if !armed.isEmpty { fail("not connected with timers still armed: \(armed)") }
        target = nil
        locationId = nil
      }
      if after == .connected && machine.connectedReader?.locationId != locationId {
        fail("connected reader lost its location")
      }
    }

    static func impliedStatus(_ action: Action) -> ConnectionStatus? {
      switch action {
      case .connected, .reconnectSucceeded, .rebootAnswered, .lowBatteryWarning, .readerUpdated, .rebootNotCarriedOut:
        .connected
      case .connectFailed, .disconnectCompleted, .disconnected: .notConnected
      case .reconnectStarted: .reconnecting
      case .openLink, .abandonLink, .closeLink, .sendReboot, .arm, .disarm, .reconnectFailed, .listen, .stopListening,
        .linkReady:
        nil
      }
    }
  }

  @Test func randomInputSequencesKeepTheEventContract() {
    var reached: Set<String> = []
    for seed in UInt64(1)...400 {
      var run = Run(seed: seed)
      for _ in 0..<250 {
        run.step()
        if run.failure != nil { break }
      }
      reached.formUnion(run.seen)
      if let failure = run.failure { Issue.record(Comment(rawValue: failure)) }
    }
    // Guard the generator itself: runs that never reach these prove little.
    let expected: Set = [
      "notConnected", "connecting", "connected", "reconnecting", "reconnectFailed", "reconnectSucceeded",
    ]
    #expect(reached.isSuperset(of: expected), "\(reached)")
  }

  @Test func theSameSeedReplaysTheSameRun() {
    for seed: UInt64 in [5, 77, 1_234] {
      var a = Run(seed: seed)
      var b = Run(seed: seed)
      for _ in 0..<200 {
        a.step()
        b.step()
      }
      #expect(a.trace == b.trace, "seed \(seed)")
    }
  }
}
