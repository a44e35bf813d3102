/// The whole reader system as one pure machine: the composer of the line of sessions
/// (`NFCSessionLineStateMachine`) and of each begun session's own machine (`NFCSessionStateMachine`),
/// held here by identifier, which alone decides the order of everything.
///
/// How it composes: the driver (`NFCSystemEngine`) feeds every input — an app's call on a session, a
/// radio event, a time limit, the delegate's answer to an offer of tags — into `handle(_:)` and
/// performs the actions that come back, in order; it decides nothing. The input goes to the child it
/// concerns; each child's outputs are routed in order (one switch per child): an effect becomes an
/// action, and an output that concerns the other child becomes a follow-up input, queued (FIFO)
/// behind the batch being routed. No child is fed while another's batch is half routed, so no session
/// drives the line or another session, and the line never drives a session from inside its own step.
///
/// The rules that span sessions live in the routing, and nowhere else:
/// - A session begun joins the line (`submit`), which gives it the radio, queues it, or ends it
///   (refused on a busy `.refuse` system, no capability); the line's `activate` and `end` go to that
///   session's machine.
/// - A session that lets go (`release`) leaves the line, which hands the radio to the next in line;
///   from then on the session has no machine here: a late radio event of one of its rounds or requests
///   finds nobody and is dropped, a tag operation fails as on an invalidated session.
/// - A radio event goes to the session that issued its round or request; termination goes to the line,
///   which ends the running session, then the waiting ones in line order.
/// - A session whose delegate's kind is not known yet offers its first tags (`offerTags`) instead of
///   reporting them; the delegate's answer (`tagDelegateAnswered`) settles its mode, and the event is
///   published only if the delegate took them.
struct NFCSystemStateMachine {
  typealias SessionID = UInt64
  typealias Session = NFCSessionStateMachine

  /// What happened.
  enum Input: Sendable {
    /// A session's `begin()`, with what the session was created with and its alert message as it stood
    /// when `begin()` was called; the radio's policy at that moment, and why it cannot read (`nil`: it
    /// can).
    case begin(
      SessionID, mode: Session.Mode, alertMessage: String, policy: NFCSystemPolicy, unavailable: NFCRadioFailure?)
    /// A session's `invalidate()`; `begun`: the session had been begun (or had ended) when it was called.
    case invalidate(SessionID, errorMessage: String?, begun: Bool)
    /// A session's `alertMessage` set after `begin()` (before it, `begin` carries the message).
    case setAlertMessage(SessionID, String)
    /// A session's `restartPolling()`.
    case restartPolling(SessionID)
    /// An operation on a tag handle, asked of session `SessionID`.
    case perform(SessionID, Session.Operation, on: Session.TagRef, id: Session.OperationID)
    /// The delegate was offered `offered` (`offerTags`); `implemented`: its own method ran.
    case tagDelegateAnswered(SessionID, implemented: Bool, offered: [Session.TagRef])
    /// The radio reported something.
    case radio(NFCRadioEvent)
    /// A session's time limit passed.
    case timeLimitReached(SessionID)
  }

  /// What the driver must do, in order.
  enum Action: Equatable, Sendable {
    /// Session `SessionID` waits in line; `position` counts from 1.
    case queued(SessionID, position: Int)
    /// Arms the session's time limit.
    case armTimeout(SessionID, after: Duration)
    /// Drops the session's time limit.
    case disarmTimeout(SessionID)
    /// What a session's machine asks (a radio command, the sheet, a delegate call, a completion);
    /// never `submit` or `release`, which are routed here.
    case session(SessionID, Session.Action)
    /// Offers new tag handles to the delegate, whose answer comes back as `tagDelegateAnswered`.
    case offerTags(SessionID, [Session.TagRef])
    /// The delegate took the tags offered: publish `didDetectTags` (the delegate has had them).
    case publishTags(SessionID, [Session.TagRef])
    /// The session's mode is settled (`detectsTags`).
    case modeSettled(SessionID, Session.Mode)
    /// The session let go of the radio and of its place in line: the driver drops what it keeps for it.
    case ended(SessionID)
  }

  /// An input for a child, queued behind the batch of outputs that asked for it.
  private enum FollowUp {
    /// A session asks for the radio.
    case join(SessionID, policy: NFCSystemPolicy, unavailable: NFCRadioFailure?)
    /// A session let go.
    case leave(SessionID)
    /// The line hands the radio to a session.
    case activate(SessionID)
    /// The line ends a session.
    case end(SessionID, NFCReaderError)
  }

  /// The line: who holds the radio, who waits.
  private(set) var line = NFCSessionLineStateMachine()
  /// The machines of the sessions begun and not yet released.
  private var sessions = SessionTable<Session>()
  private var followUps: [FollowUp] = []
  private var actions: [Action] = []
  /// An empty array with room, lent to a session's machine for its next step's outputs.
  private var sessionOutputs: [Session.Action] = []
  /// An empty array with room, lent to the line for its next step's outputs.
  private var lineOutputs: [NFCSessionLineStateMachine.Action] = []

  /// The session holding the radio.
  var running: SessionID? { line.running }

  /// How many sessions wait in line.
  var waitingCount: Int { line.waitingCount }

  /// How many sessions have a machine here (begun and not yet released).
  var sessionCount: Int { sessions.count }

  /// Handles one input and every follow-up it leads to; returns the actions, in order.
  mutating func handle(_ input: Input) -> [Action] {
    var actions: [Action] = []
    handle(input, into: &actions)
    return actions
  }

  /// Handles one input and every follow-up it leads to; appends the actions to `out`, in order. A
  /// driver that hands back the same emptied buffer each time allocates no array per input.
  /// The input is taken, not copied: its payload moves into the step that handles it.
  mutating func handle(_ input: consuming Input, into out: inout [Action]) {
    swap(&actions, &out)
    defer { swap(&actions, &out) }
    step(input)
    var next = 0
    while next < followUps.count {
      // Moved out (`leave(0)` left in its place), not copied: the buffer is emptied next.
      let followUp = followUps.take(at: next, leaving: .leave(0))
      next += 1
      step(followUp)
    }
    followUps.empty()
  }

  // MARK: Inputs

  private mutating func step(_ input: consuming Input) {
    switch consume input {
    case .begin(let id, let mode, let alertMessage, let policy, let unavailable):
      guard !sessions.contains(id) else { return }
      var session = Session(id: id, mode: mode, alertMessage: alertMessage)
      var outputs = takeSessionOutputs()
      session.begin(into: &outputs)
      sessions.insertNew(id, session)
      route(id, &outputs, joining: (policy, unavailable))
      giveBack(&outputs)
    case .invalidate(let id, let errorMessage, let begun):
      if !routeSession(id, { $0.invalidate(errorMessage: errorMessage, into: &$1) }), !begun {
        // Never begun: it ends without ever having reached the line.
        var unbegun = Session(id: id, mode: .readWrite)
        var outputs = unbegun.invalidate(errorMessage: errorMessage)
        route(id, &outputs)
      }
    case .setAlertMessage(let id, let message):
      if var outputs = sessions.update(id, { $0.setAlertMessage(message) }) { route(id, &outputs) }
    case .restartPolling(let id):
      if var outputs = sessions.update(id, { $0.restartPolling() }) { route(id, &outputs) }
    case .perform(let id, let operation, let ref, let op):
      if var outputs = sessions.update(id, { $0.perform(operation, on: ref, id: op) }) {
        route(id, &outputs)
      } else {
        var ended = Session.ended(id: id)
        var outputs = ended.perform(operation, on: ref, id: op)
        route(id, &outputs)
      }
    case .tagDelegateAnswered(let id, let implemented, let offered):
      guard sessions.contains(id) else { return }
      if implemented { actions.append(.publishTags(id, offered)) }
      guard
        let (answered, mode) = sessions.update(id, { ($0.tagDelegateAnswered(implemented: implemented), $0.mode) })
      else { return }
      actions.append(.modeSettled(id, mode))
      var outputs = answered
      route(id, &outputs)
    case .radio(let event):
      radio(event)
    case .timeLimitReached(let id):
      routeLine { $0.timeLimitReached(id, into: &$1) }
    }
  }

  private mutating func radio(_ event: consuming NFCRadioEvent) {
    switch consume event {
    case .pollingStarted(let round):
      _ = routeSession(round.session) { $0.pollingStarted(round, into: &$1) }
    case .pollingFailed(let round, let failure):
      feed(round) { $0.pollingFailed(round, failure) }
    case .tagsDetected(let round, let tags):
      feed(round) { $0.tagsDetected(round, tags) }
    case .tagRemoved(let round, let tag):
      feed(round) { $0.tagRemoved(round, tag) }
    case .response(let request, let response):
      feed(request) { $0.response(request, response) }
    case .userCanceled(let round):
      feed(round) { $0.userCanceled(round) }
    case .terminated:
      routeLine { $0.terminated(into: &$1) }
    }
  }

  /// Gives a radio event to the session that issued the round or request; an event of a session that
  /// has let go finds nobody.
  private mutating func feed(_ request: NFCRadioRequestID, _ input: (inout Session) -> [Session.Action]) {
    let id = request.session
    guard var outputs = sessions.update(id, input) else { return }
    route(id, &outputs)
  }

  private mutating func step(_ followUp: consuming FollowUp) {
    switch consume followUp {
    case .join(let id, let policy, let unavailable):
      routeLine { $0.begin(id, policy: policy, unavailable: unavailable, into: &$1) }
    case .leave(let id):
      routeLine { $0.released(id, into: &$1) }
    case .activate(let id):
      _ = routeSession(id) { $0.activate(into: &$1) }
    case .end(let id, let error):
      _ = routeSession(id) { $0.end(error, into: &$1) }
    }
  }

  // MARK: Routing

  /// Runs a step of the line and routes its outputs, through a buffer kept between steps (the line's
  /// outputs are routed before its next step, so one is enough).
  private mutating func routeLine(
    _ step: (inout NFCSessionLineStateMachine, inout [NFCSessionLineStateMachine.Action]) -> Void
  ) {
    var outputs = lineOutputs
    lineOutputs = []
    step(&line, &outputs)
    route(outputs)
    outputs.empty()
    lineOutputs = outputs
  }

  /// Runs a step of session `id`'s machine and routes its outputs, through a buffer kept between steps
  /// (a session's outputs are routed before any other step); false when the session has no machine here.
  private mutating func routeSession(_ id: SessionID, _ step: (inout Session, inout [Session.Action]) -> Void) -> Bool {
    var outputs = takeSessionOutputs()
    defer { giveBack(&outputs) }
    guard sessions.update(id, { step(&$0, &outputs) }) != nil else { return false }
    route(id, &outputs)
    return true
  }

  private mutating func takeSessionOutputs() -> [Session.Action] {
    var outputs: [Session.Action] = []
    swap(&outputs, &sessionOutputs)
    return outputs
  }

  private mutating func giveBack(_ outputs: inout [Session.Action]) {
    outputs.empty()
    swap(&outputs, &sessionOutputs)
  }

  /// The line's outputs: its own effects become actions; what it asks of a session becomes a follow-up.
  private mutating func route(_ outputs: [NFCSessionLineStateMachine.Action]) {
    for output in outputs {
      switch output {
      case .queued(let id, let position): actions.append(.queued(id, position: position))
      case .armTimeout(let id, let delay): actions.append(.armTimeout(id, after: delay))
      case .disarmTimeout(let id): actions.append(.disarmTimeout(id))
      case .activate(let id): followUps.append(.activate(id))
      case .end(let id, let error): followUps.append(.end(id, error))
      }
    }
  }

  /// A session's outputs: joining and leaving the line become follow-ups; everything else is an action.
  /// An output that becomes an action is moved into it (`submit` is left in its place), not copied: the
  /// caller empties the buffer next.
  private mutating func route(
    _ id: SessionID, _ outputs: inout [Session.Action],
    joining: (policy: NFCSystemPolicy, unavailable: NFCRadioFailure?)? = nil
  ) {
    for index in outputs.indices {
      switch outputs[index] {
      case .submit:
        guard let joining else { continue }
        followUps.append(.join(id, policy: joining.policy, unavailable: joining.unavailable))
      case .release:
        sessions[id] = nil
        actions.append(.ended(id))
        followUps.append(.leave(id))
      case .didDetectTags(let refs):
        if case .undecided? = sessions[id]?.mode {
          actions.append(.offerTags(id, refs))
        } else {
          actions.append(.session(id, outputs.take(at: index, leaving: .submit)))
        }
      default:
        actions.append(.session(id, outputs.take(at: index, leaving: .submit)))
      }
    }
  }
}
