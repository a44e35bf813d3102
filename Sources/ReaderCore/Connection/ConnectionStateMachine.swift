/// The life of the terminal's reader link: locate, connect, lose, reconnect, reboot, disconnect.
///
/// One machine serves every connection of a terminal, so "a reader is already connected" is decided
/// here and nowhere else. Pure: inputs come in, actions come out; the driver opens links, arms
/// timers and calls delegates. Late hardware events (a link-up after the attempt was abandoned, a
/// disconnect after the app disconnected) are absorbed explicitly.
package struct ConnectionStateMachine {
  /// How long the reader has to answer a disconnect or a reboot, and to drop the link after
  /// accepting a reboot, before the machine stops waiting for it.
  package static let replyTimeout = Duration.seconds(10)

  /// Where the link stands.
  private enum State {
    /// No reader.
    case idle
    /// A connect to a reader not heard lately listens for it before opening a link.
    case locating(Reader, locationId: String)
    /// The first connection is under way.
    case connecting(Reader, locationId: String)
    /// The link is up; the reader is being prepared before it counts as connected (or reconnected).
    case preparing(Reader, Preparation)
    /// A reader is connected.
    case connected(Reader)
    /// The app asked to disconnect; waiting for the link to close.
    case disconnecting(Reader)
    /// A reboot was requested; waiting for the reader's answer.
    case rebootRequested(Reader)
    /// The reader accepted the reboot; waiting for it to drop the link.
    case rebootAccepted(Reader)
    /// Winning the reader back after `reason`.
    case reconnecting(Reconnection)
  }

  /// What a connection follows: taken from its `ConnectionSettings` (all but the location, which
  /// its states carry).
  private struct Rules {
    var autoReconnect: Bool
    var policy: ReconnectPolicy
    var connectTimeout: Duration
    var preparesReader = false
  }

  private var state: State = .idle
  /// The rules of the current (or next) connection.
  private var settings: Rules
  /// The jitter source; a value, so the machine stays pure and a seed replays exactly.
  private var random: SeededRandom
  /// How long the current connect listens for its reader.
  private var listenWindow = Duration.zero

  private var policy: ReconnectPolicy { settings.policy }
  private var connectTimeout: Duration { settings.connectTimeout }

  /// A machine whose connections use these settings unless `connect(_:settings:…)` gives others.
  package init(
    autoReconnect: Bool, policy: ReconnectPolicy, connectTimeout: Duration = ConnectionSettings.defaultConnectTimeout,
    random: SeededRandom
  ) {
    self.settings = Rules(autoReconnect: autoReconnect, policy: policy, connectTimeout: connectTimeout)
    self.random = random
  }

  /// The status the terminal shows for this machine (discovery is tracked elsewhere).
  package var status: ConnectionStatus {
    switch state {
    case .idle: .notConnected
    case .locating, .connecting, .preparing(_, .connect): .connecting
    case .preparing(_, .reconnect): .reconnecting
    case .connected, .disconnecting, .rebootRequested, .rebootAccepted: .connected
    case .reconnecting: .reconnecting
    }
  }

  /// The reader once the connection is complete (and while it is being rebooted or disconnected).
  package var connectedReader: Reader? {
    switch state {
    case .connected(let reader), .disconnecting(let reader), .rebootRequested(let reader),
      .rebootAccepted(let reader):
      reader
    case .idle, .locating, .connecting, .preparing, .reconnecting: nil
    }
  }

  /// The reader being prepared, if any.
  package var preparingReader: Reader? {
    if case .preparing(let reader, _) = state { return reader }
    return nil
  }

  /// Whether a connect is listening for its reader.
  package var isListening: Bool {
    if case .locating = state { return true }
    return false
  }

  /// The serial number of the reader a connect listens for.
  package var listeningFor: String? {
    if case .locating(let reader, _) = state { return reader.serialNumber }
    return nil
  }

  /// Whether a reconnection is in progress.
  package var isReconnecting: Bool {
    switch state {
    case .reconnecting, .preparing(_, .reconnect): true
    default: false
    }
  }

  // MARK: Commands

  /// Whether the machine has no reader at all (not even one being connected).
  package var isIdle: Bool {
    if case .idle = state { return true }
    return false
  }

  /// Why a connect would be refused now (a reader is connected, or being connected), or nil.
  package var connectRefusal: ReaderError? {
    guard !isIdle else { return nil }
    return ReaderError(
      .alreadyConnected, "a reader is already connected; disconnect it first",
      context: ["serialNumber": busyReader?.serialNumber ?? "", "status": status.rawValue])
  }

  /// Starts connecting to a reader heard just now, with the machine's settings at `locationId`.
  package mutating func connect(_ reader: Reader, locationId: String) -> Result<[Action], ReaderError> {
    start(
      reader, locationId: locationId, rules: settings, heard: .fresh, radioOn: true, listenFor: .zero, random: random)
  }

  /// Starts connecting to `reader` with `settings`; fails without side effects if a reader is
  /// connected or connecting, or if `reader` was never heard (`readerNotFound`). A reader heard, but
  /// not lately (`heard == .stale`), is listened for during `listenFor` before a link is opened (with
  /// the radio off there is nothing to listen with, and the link attempt reports the radio).
  /// `random` reseeds the reconnection jitter of this connection.
  package mutating func connect(
    _ reader: Reader, settings: ConnectionSettings, heard: DiscoveryStateMachine.Freshness, radioOn: Bool,
    listenFor: Duration, random: SeededRandom
  ) -> Result<[Action], ReaderError> {
    let rules = Rules(
      autoReconnect: settings.autoReconnect, policy: settings.policy, connectTimeout: settings.connectTimeout,
      preparesReader: settings.preparesReader)
    return start(
      reader, locationId: settings.locationId, rules: rules, heard: heard, radioOn: radioOn, listenFor: listenFor,
      random: random)
  }

  private mutating func start(
    _ reader: Reader, locationId: String, rules: Rules, heard: DiscoveryStateMachine.Freshness, radioOn: Bool,
    listenFor: Duration, random: SeededRandom
  ) -> Result<[Action], ReaderError> {
    if let connectRefusal { return .failure(connectRefusal) }
    guard heard != .never else {
      return .failure(
        ReaderError(
          .readerNotFound, "the reader was never discovered; discover it first",
          context: ["serialNumber": reader.serialNumber]))
    }
    self.settings = rules
    self.random = random
    if heard == .stale && radioOn {
      listenWindow = listenFor
      state = .locating(reader, locationId: locationId)
      return .success([.listen, .arm(.locate, after: listenFor)])
    }
    return .success(openFirstLink(reader, locationId: locationId))
  }

  /// A reader advertised; a connect listening for it opens its link now.
  package mutating func heard(serialNumber: String) -> [Action] {
    guard case .locating(let reader, let locationId) = state, reader.serialNumber == serialNumber else { return [] }
    return [.disarm(.locate), .stopListening] + openFirstLink(reader, locationId: locationId)
  }

  private mutating func openFirstLink(_ reader: Reader, locationId: String) -> [Action] {
    state = .connecting(reader, locationId: locationId)
    return [.openLink(serialNumber: reader.serialNumber), .arm(.connect, after: connectTimeout)]
  }

  /// Starts the app's disconnect.
  package mutating func disconnect() -> Result<[Action], ReaderError> {
    guard case .connected(let reader) = state else {
      return .failure(.notConnected(status: status))
    }
    state = .disconnecting(reader)
    return .success([.closeLink(serialNumber: reader.serialNumber), .arm(.disconnectReply, after: Self.replyTimeout)])
  }

  /// Asks the connected reader to reboot.
  package mutating func reboot() -> Result<[Action], ReaderError> {
    guard case .connected(let reader) = state else {
      return .failure(.notConnected(status: status))
    }
    state = .rebootRequested(reader)
    return .success([.sendReboot(serialNumber: reader.serialNumber), .arm(.rebootReply, after: Self.replyTimeout)])
  }

  /// Abandons the first connection (listening or linking) while it is under way; nil when none is.
  package mutating func cancelConnect(_ operation: String = "connectReader") -> [Action]? {
    switch state {
    case .locating:
      state = .idle
      return [.disarm(.locate), .stopListening, .connectFailed(ReaderError.canceled(operation))]
    case .connecting(let reader, _):
      state = .idle
      return [
        .disarm(.connect), .abandonLink(serialNumber: reader.serialNumber),
        .connectFailed(ReaderError.canceled(operation)),
      ]
    case .preparing(let reader, .connect):
      state = .idle
      return [.abandonLink(serialNumber: reader.serialNumber), .connectFailed(ReaderError.canceled(operation))]
    case .idle, .connected, .disconnecting, .rebootRequested, .rebootAccepted, .reconnecting, .preparing(_, .reconnect):
      return nil  // No first connection under way (a reconnection has its own handle).
    }
  }

  /// Cancels a running reconnection: it fails with `canceled`, then the reader is disconnected.
  /// Returns nil when no reconnection is running.
  package mutating func cancelReconnect() -> [Action]? {
    switch state {
    case .reconnecting(let reconnection):
      return giveUp(reconnection, ReaderError.canceled("reconnect"))
    case .preparing(let reader, .reconnect(let reconnection)):
      state = .idle
      let canceled = ReaderError.canceled("reconnect")
      return [
        .abandonLink(serialNumber: reader.serialNumber), .reconnectFailed(reader, canceled),
        .disconnected(reader, reason: reconnection.reason),
      ]
    default:
      return nil
    }
  }

  // MARK: Preparation

  /// The reader is ready (its update installed, or none needed): it counts as connected, or
  /// reconnected, now. `reader` carries what the preparation learnt (software version, update).
  package mutating func prepared(_ reader: Reader) -> [Action] {
    guard case .preparing(let linked, let preparation) = state, linked.serialNumber == reader.serialNumber else {
      return []
    }
    state = .connected(reader)
    switch preparation {
    case .connect:
      let warn = Self.crossesWarning(from: nil, to: reader.batteryLevel)
      return [.connected(reader)] + (warn ? [.lowBatteryWarning(reader)] : [])
    case .reconnect:
      return [.reconnectSucceeded(reader)]
    }
  }

  /// The reader cannot be used (a required update failed or was cancelled): the link is let go of
  /// at once (no late link-down can reach a connect the app starts from the failure's completion) and
  /// the connect, or the reconnection, fails with `error`.
  package mutating func preparationFailed(_ error: ReaderError) -> [Action] {
    guard case .preparing(let reader, let preparation) = state else { return [] }
    state = .idle
    switch preparation {
    case .connect:
      return [.abandonLink(serialNumber: reader.serialNumber), .connectFailed(error)]
    case .reconnect(let reconnection):
      return [
        .abandonLink(serialNumber: reader.serialNumber), .reconnectFailed(reader, error),
        .disconnected(reader, reason: reconnection.reason),
      ]
    }
  }

  /// How many times a reconnection starts over after its reader was lost while being prepared
  /// before it gives up: a reader that keeps dropping during its install must not hold the line
  /// forever.
  package static let maximumPreparationLosses = 2

  /// Changes the connected reader's details (its software version after an update, the update it
  /// has available); nothing when no reader is connected.
  package mutating func updateReader(_ change: (inout Reader) -> Void) {
    switch state {
    case .connected(var reader):
      change(&reader)
      state = .connected(reader)
    case .disconnecting(var reader):
      change(&reader)
      state = .disconnecting(reader)
    case .rebootRequested(var reader):
      change(&reader)
      state = .rebootRequested(reader)
    case .rebootAccepted(var reader):
      change(&reader)
      state = .rebootAccepted(reader)
    case .idle, .locating, .connecting, .preparing, .reconnecting:
      break
    }
  }

  // MARK: Link events

  package mutating func linkUp(serialNumber: String, info: ReaderInfo) -> [Action] {
    switch state {
    case .connecting(var reader, let locationId) where reader.serialNumber == serialNumber:
      reader.apply(info)
      reader.locationId = locationId
      if settings.preparesReader {
        state = .preparing(reader, .connect)
        return [.disarm(.connect), .linkReady(reader)]
      }
      state = .connected(reader)
      // A reader that is already low when it connects warns at once: there is no crossing to wait for.
      let warn = Self.crossesWarning(from: nil, to: reader.batteryLevel)
      return [.disarm(.connect), .connected(reader)] + (warn ? [.lowBatteryWarning(reader)] : [])
    case .reconnecting(var reconnection)
    where reconnection.reader.serialNumber == serialNumber && reconnection.phase == .attempting:
      reconnection.reader.apply(info)
      if settings.preparesReader {
        state = .preparing(reconnection.reader, .reconnect(reconnection))
        return [.disarm(.reconnectAttempt), .disarm(.reconnectDeadline), .linkReady(reconnection.reader)]
      }
      state = .connected(reconnection.reader)
      return [.disarm(.reconnectAttempt), .disarm(.reconnectDeadline), .reconnectSucceeded(reconnection.reader)]
    case .idle, .locating, .connecting, .preparing, .connected, .disconnecting, .rebootRequested, .rebootAccepted,
      .reconnecting:
      // A link nobody is waiting for (an abandoned attempt, another reader, a reconnection backing
      // off): close it, unless it is the link already up.
      return connectedReader?.serialNumber == serialNumber ? [] : [.closeLink(serialNumber: serialNumber)]
    }
  }

  package mutating func linkFailed(serialNumber: String, error: ReaderError) -> [Action] {
    switch state {
    case .connecting(let reader, _) where reader.serialNumber == serialNumber:
      state = .idle
      return [.disarm(.connect), .connectFailed(error)]
    case .reconnecting(let reconnection)
    where reconnection.reader.serialNumber == serialNumber && reconnection.phase == .attempting:
      return backOff(reconnection, disarmAttempt: true)
    case .idle, .locating, .connecting, .preparing, .connected, .disconnecting, .rebootRequested, .rebootAccepted,
      .reconnecting:
      return []  // A late failure of an attempt already abandoned, or of another reader.
    }
  }

  /// The link to `serialNumber` went down for `reason`; `isRadioOn` is the host radio's state now
  /// (a reconnection after `bluetoothDisabled` waits for the radio only while it is off). A first
  /// connection lost while its reader was prepared fails with `preparationError` (what the
  /// preparation made of the loss, e.g. an interrupted update), or `connectionFailed`; a
  /// reconnection lost then starts over.
  package mutating func linkDown(
    serialNumber: String, reason: DisconnectReason, isRadioOn: Bool = false, preparationError: ReaderError? = nil
  ) -> [Action] {
    switch state {
    case .preparing(let reader, .connect) where reader.serialNumber == serialNumber:
      state = .idle
      return [
        .connectFailed(
          preparationError
            ?? ReaderError(.connectionFailed, "the link dropped while connecting", context: ["reason": reason.rawValue])
        )
      ]
    case .preparing(let reader, .reconnect(let reconnection)) where reader.serialNumber == serialNumber:
      let losses = reconnection.preparationLosses + 1
      guard losses <= Self.maximumPreparationLosses else {
        state = .idle
        let error =
          preparationError
          ?? ReaderError(
            .connectionFailed, "the reader was lost again while it was being prepared",
            context: ["reason": reason.rawValue])
        return [.reconnectFailed(reader, error), .disconnected(reader, reason: reconnection.reason)]
      }
      return lost(reader, reason: reason, isRadioOn: isRadioOn, restart: true, preparationLosses: losses)
    case .connected(let reader) where reader.serialNumber == serialNumber:
      return lost(reader, reason: reason, isRadioOn: isRadioOn)
    case .rebootRequested(let reader) where reader.serialNumber == serialNumber:
      // The reader dropped before answering: the reboot was not confirmed.
      return [
        .disarm(.rebootReply),
        .rebootAnswered(ReaderError(.rebootFailed, "the reader disconnected before accepting the reboot")),
      ] + lost(reader, reason: reason, isRadioOn: isRadioOn)
    case .rebootAccepted(let reader) where reader.serialNumber == serialNumber:
      return [.disarm(.rebootDrop)]
        + lost(reader, reason: reason == .unknown ? .rebootRequested : reason, isRadioOn: isRadioOn)
    case .disconnecting(let reader) where reader.serialNumber == serialNumber:
      state = .idle
      return [.disarm(.disconnectReply), .disconnectCompleted(reader)]
    case .connecting(let reader, _) where reader.serialNumber == serialNumber:
      state = .idle
      return [
        .disarm(.connect),
        .connectFailed(
          ReaderError(.connectionFailed, "the link dropped while connecting", context: ["reason": reason.rawValue])),
      ]
    case .reconnecting(let reconnection)
    where reconnection.reader.serialNumber == serialNumber && reconnection.phase == .attempting:
      return backOff(reconnection, disarmAttempt: true)
    case .idle, .locating, .connecting, .preparing, .connected, .disconnecting, .rebootRequested, .rebootAccepted,
      .reconnecting:
      return []  // A late drop after the app disconnected, of an abandoned attempt, or of another reader.
    }
  }

  package mutating func rebootResponse(serialNumber: String, error: ReaderError?) -> [Action] {
    guard case .rebootRequested(let reader) = state, reader.serialNumber == serialNumber else { return [] }
    guard error == nil else {
      state = .connected(reader)
      return [.disarm(.rebootReply), .rebootAnswered(error)]
    }
    state = .rebootAccepted(reader)
    return [.disarm(.rebootReply), .rebootAnswered(nil), .arm(.rebootDrop, after: Self.replyTimeout)]
  }

  /// A connected reader's battery reading: reported while the link is up (also while a disconnect or
  /// reboot is pending), with the low-battery warning when the level crosses below 15 %.
  package mutating func battery(serialNumber: String, level: Double, isCharging: Bool) -> [Action] {
    guard var reader = connectedReader, reader.serialNumber == serialNumber else { return [] }
    let previous = reader.batteryLevel
    reader.batteryLevel = level
    reader.isCharging = isCharging
    switch state {
    case .connected: state = .connected(reader)
    case .disconnecting: state = .disconnecting(reader)
    case .rebootRequested: state = .rebootRequested(reader)
    case .rebootAccepted: state = .rebootAccepted(reader)
    case .idle, .locating, .connecting, .preparing, .reconnecting: return []
    }
    var actions: [Action] = [.readerUpdated(reader)]
    if Self.crossesWarning(from: previous, to: level) { actions.append(.lowBatteryWarning(reader)) }
    return actions
  }

  /// Whether a reading of `level` after `previous` (nil: none yet) should raise the low-battery
  /// warning: the first reading at or below the threshold, and every new crossing below it.
  private static func crossesWarning(from previous: Double?, to level: Double?) -> Bool {
    guard let level else { return false }
    let warning = BatteryStatus.warningThreshold
    return level <= warning && (previous ?? 1) > warning
  }

  /// The reader the link is busy with in any state, for error context.
  private var busyReader: Reader? {
    switch state {
    case .idle: nil
    case .locating(let reader, _), .connecting(let reader, _), .preparing(let reader, _): reader
    case .reconnecting(let reconnection): reconnection.reader
    case .connected(let reader), .disconnecting(let reader), .rebootRequested(let reader), .rebootAccepted(let reader):
      reader
    }
  }

  package mutating func radio(isPoweredOn: Bool) -> [Action] {
    if case .locating(let reader, _) = state, !isPoweredOn {
      state = .idle
      return [
        .disarm(.locate), .stopListening,
        .connectFailed(
          ReaderError(
            .bluetoothDisabled, "Bluetooth was turned off before the reader was heard",
            context: ["serialNumber": reader.serialNumber])),
      ]
    }
    guard case .reconnecting(var reconnection) = state else { return [] }
    switch (isPoweredOn, reconnection.phase) {
    case (false, .attempting):
      reconnection.phase = .waitingForRadio
      state = .reconnecting(reconnection)
      return [.disarm(.reconnectAttempt), .abandonLink(serialNumber: reconnection.reader.serialNumber)]
    case (false, .backingOff):
      reconnection.phase = .waitingForRadio
      state = .reconnecting(reconnection)
      return [.disarm(.reconnectBackoff)]
    case (true, .waitingForRadio):
      return attempt(reconnection)
    case (true, .attempting), (true, .backingOff), (false, .waitingForRadio):
      return []  // Already doing what the radio allows.
    }
  }

  // MARK: Timers

  package mutating func timerFired(_ timer: Timer) -> [Action] {
    switch (timer, state) {
    case (.locate, .locating(let reader, _)):
      state = .idle
      return [
        .stopListening,
        .connectFailed(
          ReaderError(
            .readerNotFound, "the reader is no longer advertising; discover it again",
            context: ["serialNumber": reader.serialNumber, "listened": listenWindow.contextSeconds])),
      ]
    case (.connect, .connecting(let reader, _)):
      state = .idle
      return [
        .abandonLink(serialNumber: reader.serialNumber),
        .connectFailed(
          ReaderError(
            .bluetoothConnectTimedOut, "the reader did not answer in time",
            context: ["serialNumber": reader.serialNumber, "timeout": connectTimeout.contextSeconds])),
      ]
    case (.reconnectAttempt, .reconnecting(let reconnection)) where reconnection.phase == .attempting:
      return [.abandonLink(serialNumber: reconnection.reader.serialNumber)]
        + backOff(reconnection, disarmAttempt: false)
    case (.reconnectBackoff, .reconnecting(let reconnection)) where reconnection.phase == .backingOff:
      return attempt(reconnection)
    case (.disconnectReply, .disconnecting(let reader)):
      // The reader never confirmed: the link is abandoned here, and the app's disconnect stands.
      state = .idle
      return [.abandonLink(serialNumber: reader.serialNumber), .disconnectCompleted(reader)]
    case (.rebootReply, .rebootRequested(let reader)):
      state = .connected(reader)
      return [
        .rebootAnswered(
          ReaderError(
            .rebootFailed, "the reader did not answer the reboot request",
            context: ["serialNumber": reader.serialNumber, "timeout": Self.replyTimeout.contextSeconds]))
      ]
    case (.rebootDrop, .rebootAccepted(let reader)):
      // Accepted but never went down: treat it as connected again, so commands work on it.
      state = .connected(reader)
      return [.rebootNotCarriedOut(reader)]
    case (.reconnectDeadline, .reconnecting(let reconnection)):
      let error = ReaderError(
        .bluetoothConnectTimedOut, "the reader could not be reconnected before the deadline",
        context: [
          "serialNumber": reconnection.reader.serialNumber, "attempts": "\(reconnection.attempt)",
          "deadline": policy.deadline.contextSeconds,
        ])
      return giveUp(reconnection, error)
    case (_, .idle), (_, .locating), (_, .connecting), (_, .preparing), (_, .connected), (_, .disconnecting),
      (_, .rebootRequested), (_, .rebootAccepted), (_, .reconnecting):
      return []  // A timer that outlived the state that armed it.
    }
  }

  // MARK: Helpers

  /// The link was lost for `reason`: reconnect, or disconnect for good. `restart` is a reconnection
  /// whose reader was lost again while it was prepared: it starts over without a second
  /// `reconnectStarted`, or fails (`reconnectFailed`, then `disconnected`) when it may not go on.
  private mutating func lost(
    _ reader: Reader, reason: DisconnectReason, isRadioOn: Bool, restart: Bool = false, preparationLosses: Int = 0
  ) -> [Action] {
    guard settings.autoReconnect, Self.reconnects(after: reason) else {
      state = .idle
      let failed: [Action] =
        restart
        ? [
          .reconnectFailed(
            reader, ReaderError(.connectionFailed, "the reader was lost again", context: ["reason": reason.rawValue]))
        ]
        : []
      return failed + [.disconnected(reader, reason: reason)]
    }
    let reconnection = Reconnection(
      reader: reader, reason: reason, attempt: 0, phase: .attempting, preparationLosses: preparationLosses)
    let start: [Action] =
      (restart ? [] : [.reconnectStarted(reader, reason: reason)]) + [.arm(.reconnectDeadline, after: policy.deadline)]
    if reason == .bluetoothDisabled && !isRadioOn {
      var waiting = reconnection
      waiting.phase = .waitingForRadio
      state = .reconnecting(waiting)
      return start
    }
    return start + attempt(reconnection)
  }

  private mutating func attempt(_ reconnection: Reconnection) -> [Action] {
    var reconnection = reconnection
    reconnection.phase = .attempting
    state = .reconnecting(reconnection)
    return [
      .openLink(serialNumber: reconnection.reader.serialNumber), .arm(.reconnectAttempt, after: policy.attemptTimeout),
    ]
  }

  private mutating func backOff(_ reconnection: Reconnection, disarmAttempt: Bool) -> [Action] {
    var reconnection = reconnection
    let delay = policy.delay(afterAttempt: reconnection.attempt, unit: random.nextUnit())
    reconnection.attempt += 1
    reconnection.phase = .backingOff
    state = .reconnecting(reconnection)
    return (disarmAttempt ? [.disarm(.reconnectAttempt)] : []) + [.arm(.reconnectBackoff, after: delay)]
  }

  private mutating func giveUp(_ reconnection: Reconnection, _ error: ReaderError) -> [Action] {
    state = .idle
    var actions: [Action] = [.disarm(.reconnectAttempt), .disarm(.reconnectBackoff), .disarm(.reconnectDeadline)]
    if reconnection.phase == .attempting {
      actions.append(.abandonLink(serialNumber: reconnection.reader.serialNumber))
    }
    return actions + [
      .reconnectFailed(reconnection.reader, error), .disconnected(reconnection.reader, reason: reconnection.reason),
    ]
  }
}
