/// The life of one NDEF reader session, from `begin()` to its one invalidation.
///
/// Pure: inputs in (the app's calls, the system's decisions, the radio's answers), actions out. The
/// guarantees it carries:
/// - Exactly one `didInvalidate` per session that was begun or invalidated, and nothing for the
///   delegate after it: every later input is absorbed. Tag operations still pending complete with
///   `readerTransceiveErrorSessionInvalidated` just before it.
/// - `didBecomeActive` before any detection: detections are handled only once polling runs (a tag
///   reported with the start of polling makes the session active first).
/// - A tag handle is good for the polling round it came from: after `restartPolling()`, after it
///   left the field and after the session ended it fails, with a code naming why.
/// - Read-only sessions read each tag that enters the field and report its message (or why it has
///   none); with `invalidateAfterFirstRead`, the first message read ends the session. Read-write
///   sessions hand tags to the app and never end themselves.
struct NFCSessionStateMachine {
  typealias OperationID = UInt64

  /// Whether the session reads tags itself or hands them to the app.
  enum Mode: Equatable, Sendable {
    /// The session reads every tag and reports messages (`didDetectNDEFs`).
    case readOnly(invalidateAfterFirstRead: Bool)
    /// The session reports tags (`didDetect tags`) and the app connects, reads and writes.
    case readWrite
    /// Not known yet whether the delegate implements `didDetect tags` (Core NFC decides by whether the
    /// method exists; Swift cannot ask): the first detection offers the tags, as a read-write session
    /// does, and `tagDelegateAnswered(implemented:)` settles the mode.
    case undecided(invalidateAfterFirstRead: Bool)

    /// Whether detected tags go to the app (read-write, or offered while undecided).
    var handsOutTags: Bool {
      if case .readOnly = self { return false }
      return true
    }
  }

  /// A tag as the session hands it out: one presentation, in one polling round.
  struct TagRef: Hashable, Sendable, Comparable {
    /// The polling round the tag was detected in.
    var round: NFCRadioRequestID
    /// The radio's name for the presentation.
    var tag: NFCRadioTagID

    static func < (lhs: TagRef, rhs: TagRef) -> Bool { (lhs.round, lhs.tag) < (rhs.round, rhs.tag) }
  }

  /// What the app asks: connect to a tag, or one of the tag's commands.
  enum Operation: Equatable, Sendable {
    case connect
    case queryNDEFStatus
    case readNDEF
    /// `writeNDEF`, with the bytes of the message as written.
    case writeNDEF([UInt8])
    case writeLock

    var name: String {
      switch self {
      case .connect: "connect"
      case .queryNDEFStatus: "queryNDEFStatus"
      case .readNDEF: "readNDEF"
      case .writeNDEF: "writeNDEF"
      case .writeLock: "writeLock"
      }
    }
  }

  /// How an app operation ended.
  enum Outcome: Equatable, Sendable {
    /// `connect(to:)` succeeded.
    case connected
    /// `queryNDEFStatus`: the status and the capacity in bytes.
    case status(NFCNDEFStatus, capacity: Int)
    /// `readNDEF`: the message.
    case message(NDEFMessage)
    /// `writeNDEF` or `writeLock` succeeded.
    case done
    /// The operation failed.
    case failed(NFCReaderError)
  }

  /// A command for the radio.
  enum RadioCommand: Equatable, Sendable {
    case connect(NFCRadioTagID)
    case queryNDEFStatus(NFCRadioTagID)
    case readNDEF(NFCRadioTagID)
    case writeNDEF([UInt8], NFCRadioTagID)
    case writeLock(NFCRadioTagID)
  }

  /// What the driver must do, in order.
  enum Action: Equatable, Sendable {
    /// Hand the session to the system, which queues it or gives it the radio.
    case submit
    /// Tell the system the session has let go of the radio and of its place in line.
    case release
    case startPolling(NFCRadioRequestID)
    case stopPolling(NFCRadioRequestID)
    /// Boxed: the largest payload (a command and its request), which would otherwise make every action,
    /// and every action of the system's machine that carries one, two words longer to move.
    indirect case send(RadioCommand, NFCRadioRequestID)
    case presentSheet(alertMessage: String)
    case updateSheet(alertMessage: String)
    case dismissSheet(errorMessage: String?)
    /// Delegate: `readerSessionDidBecomeActive`.
    case didBecomeActive
    /// Delegate: `didDetectNDEFs`.
    case didDetectNDEFs([NDEFMessage])
    /// Delegate: `didDetect tags` (new handles).
    case didDetectTags([TagRef])
    /// Delegate: a tag gave no message (read-only sessions).
    case didFailToReadNDEF(NFCReaderError)
    /// These handles are no longer available (`isAvailable` turns false).
    case tagsUnavailable([TagRef])
    /// Completes an app operation.
    indirect case complete(OperationID, Outcome)
    /// Delegate: `didInvalidateWithError`; the last delivery of the session.
    case didInvalidate(NFCReaderError)
  }

  /// A command sent to the radio and not yet answered.
  private enum Pending: Equatable {
    /// A read-only session reading a tag that entered the field.
    case autoRead(NFCRadioTagID)
    /// An app operation on a tag.
    case app(OperationID, Operation, NFCRadioTagID)
  }

  /// A session that holds the radio and polls.
  private struct Active {
    /// The current polling round; handles from other rounds are stale.
    var round: NFCRadioRequestID
    /// Tags of this round still in the field.
    var tags: Set<NFCRadioTagID> = []
    /// The tag selected with `connect(to:)`.
    var connected: NFCRadioTagID?
    /// Commands in flight.
    var pending: [NFCRadioRequestID: Pending] = [:]
  }

  /// The phases of a session. Every payload is one reference (the active session's boxed, the error's
  /// storage shared), so the machine of a session waiting in line (the system keeps one per session
  /// begun) costs a word for its state, and a session that starts or ends allocates nothing for it.
  private enum State {
    /// Created; `begin()` not called.
    case idle
    /// Begun; in the system's hands (waiting in line, or about to get the radio).
    case waiting
    /// Holds the radio; polling requested for the round `lastRequest` (nothing else is sent before
    /// polling starts, so the round needs no box of its own).
    case starting
    /// Polling, with no tag seen and nothing sent in the round `lastRequest`: an `Active` with nothing in
    /// it, which the session needs no box for (most sessions end this way). The first tag or command
    /// makes it `active` (`activeValue`).
    case polling
    /// Polling: ready, detecting tags.
    indirect case active(Active)
    /// Over, for this reason; every later input is absorbed.
    case invalidated(NFCReaderError)
    /// Transient: the active value is out being changed, so its collections are not copied.
    case updating
  }

  /// The session's identifier, the first part of every radio request it makes.
  let id: UInt64
  private var state = State.idle
  private var alertMessage: String
  private var sequence: UInt64 = 0
  private(set) var mode: Mode

  init(id: UInt64, mode: Mode, alertMessage: String = "") {
    self.id = id
    self.mode = mode
    self.alertMessage = alertMessage
  }

  /// The machine of a session that has ended and let go, as the system answers for it once it keeps no
  /// machine of its own: every input is absorbed, and a tag operation fails as on any invalidated
  /// session (`readerTransceiveErrorSessionInvalidated`; `readerErrorInvalidParameter` for a foreign tag).
  static func ended(id: UInt64) -> Self {
    var machine = Self(id: id, mode: .readWrite)
    machine.state = .invalidated(
      NFCReaderError(.readerSessionInvalidationErrorUserCanceled, "the session has ended"))
    return machine
  }

  /// Whether the session polls (`isReady`).
  var isActive: Bool {
    switch state {
    case .polling, .active: return true
    case .idle, .waiting, .starting, .invalidated, .updating: return false
    }
  }

  /// Whether the session polls in `round` (`polling` or `active`).
  private func polls(in round: NFCRadioRequestID) -> Bool {
    switch state {
    case .polling: return lastRequest == round
    case .active(let active): return active.round == round
    case .idle, .waiting, .starting, .invalidated, .updating: return false
    }
  }

  /// The polling session's round, tags and commands: an empty one for the round `lastRequest` while
  /// `polling`; `nil` when the session does not poll.
  private var activeValue: Active? {
    switch state {
    case .polling: return Active(round: lastRequest)
    case .active(let active): return active
    case .idle, .waiting, .starting, .invalidated, .updating: return nil
    }
  }

  /// The reason the session ended, once it has.
  var invalidation: NFCReaderError? {
    if case .invalidated(let error) = state { return error }
    return nil
  }

  // MARK: The app

  /// `begin()`: the system takes it from here.
  mutating func begin() -> [Action] {
    var actions: [Action] = []
    begin(into: &actions)
    return actions
  }

  /// `begin()`, its actions appended to `out`.
  mutating func begin(into out: inout [Action]) {
    guard case .idle = state else { return }
    state = .waiting
    out.append(.submit)
  }

  /// `invalidate()` / `invalidate(errorMessage:)`. It reports `readerSessionInvalidationErrorUserCanceled`,
  /// as Core NFC does: there is no separate code for an app's own request, and apps already treat 200
  /// as "closed, show nothing".
  mutating func invalidate(errorMessage: String?) -> [Action] {
    var actions: [Action] = []
    invalidate(errorMessage: errorMessage, into: &actions)
    return actions
  }

  /// `invalidate(errorMessage:)`, its actions appended to `out`.
  mutating func invalidate(errorMessage: String?, into out: inout [Action]) {
    end(Self.invalidatedByApp, errorMessage: errorMessage, into: &out)
  }

  /// The app's `invalidate()`: the same error every time, built once.
  private static let invalidatedByApp = NFCReaderError(
    .readerSessionInvalidationErrorUserCanceled, "the app invalidated the session", context: ["by": "app"])

  /// `alertMessage = message`: kept for the sheet, shown at once if the sheet is up.
  mutating func setAlertMessage(_ message: String) -> [Action] {
    alertMessage = message
    if isActive { return [.updateSheet(alertMessage: message)] }
    return []
  }

  /// `restartPolling()`: a new round; the handles of the old one go stale and their operations fail.
  /// No effect on read-only sessions (they restart by themselves as tags leave) or sessions not polling.
  mutating func restartPolling() -> [Action] {
    guard mode.handsOutTags, let old = activeValue else { return [] }
    _ = nextRequest()
    state = .polling
    let lost = NFCReaderError(
      .readerTransceiveErrorTagConnectionLost, "polling restarted; the tag handle is stale",
      context: ["reason": "pollingRestarted"])
    var actions: [Action] = [.stopPolling(old.round)]
    let refs = old.tags.sorted().map { TagRef(round: old.round, tag: $0) }
    if !refs.isEmpty { actions.append(.tagsUnavailable(refs)) }
    actions += completions(of: old.pending, with: lost)
    actions.append(.startPolling(lastRequest))
    return actions
  }

  /// An operation on a tag handle the session gave out (`connect(to:)` included).
  mutating func perform(_ operation: Operation, on ref: TagRef, id op: OperationID) -> [Action] {
    func fail(_ code: NFCReaderError.Code, _ message: String, reason: String) -> [Action] {
      [
        .complete(
          op,
          .failed(NFCReaderError(code, message, context: ["operation": operation.name, "reason": reason])))
      ]
    }
    guard ref.round.session == id else {
      return fail(.readerErrorInvalidParameter, "the tag belongs to another session", reason: "foreignTag")
    }
    guard var active = activeValue else {
      if case .invalidated = state {
        return fail(
          .readerTransceiveErrorSessionInvalidated, "the session is invalidated", reason: "sessionInvalidated")
      }
      return fail(.readerTransceiveErrorTagConnectionLost, "the tag is not in the field", reason: "tagGone")
    }
    guard active.round == ref.round else {
      return fail(
        .readerTransceiveErrorTagConnectionLost, "polling restarted; the tag handle is stale",
        reason: "pollingRestarted")
    }
    guard active.tags.contains(ref.tag) else {
      return fail(.readerTransceiveErrorTagConnectionLost, "the tag left the field", reason: "tagGone")
    }
    if operation == .connect, active.connected == ref.tag { return [.complete(op, .connected)] }
    if operation != .connect, active.connected != ref.tag {
      return fail(.readerTransceiveErrorTagNotConnected, "connect to the tag first", reason: "notConnected")
    }
    let command: RadioCommand
    switch operation {
    case .connect: command = .connect(ref.tag)
    case .queryNDEFStatus: command = .queryNDEFStatus(ref.tag)
    case .readNDEF: command = .readNDEF(ref.tag)
    case .writeNDEF(let bytes): command = .writeNDEF(bytes, ref.tag)
    case .writeLock: command = .writeLock(ref.tag)
    }
    state = .updating
    let request = nextRequest()
    active.pending[request] = .app(op, operation, ref.tag)
    state = .active(active)
    return [.send(command, request)]
  }

  // MARK: The system

  /// The system hands the radio to the session.
  mutating func activate() -> [Action] {
    var actions: [Action] = []
    activate(into: &actions)
    return actions
  }

  /// `activate()`, its actions appended to `out`.
  mutating func activate(into out: inout [Action]) {
    switch state {
    case .waiting:
      let round = nextRequest()
      state = .starting
      out.append(.startPolling(round))
    case .invalidated:
      out.append(.release)  // Gone already: the radio goes back at once.
    case .idle, .starting, .polling, .active, .updating:
      break
    }
  }

  /// The system ends the session (time limit, busy, no capability, termination).
  mutating func end(_ error: NFCReaderError) -> [Action] {
    end(error, errorMessage: nil)
  }

  /// `end(_:)`, its actions appended to `out`.
  mutating func end(_ error: NFCReaderError, into out: inout [Action]) {
    end(error, errorMessage: nil, into: &out)
  }

  // MARK: The radio

  mutating func pollingStarted(_ round: NFCRadioRequestID) -> [Action] {
    var actions: [Action] = []
    pollingStarted(round, into: &actions)
    return actions
  }

  /// `pollingStarted(_:)`, its actions appended to `out`.
  mutating func pollingStarted(_ round: NFCRadioRequestID, into out: inout [Action]) {
    guard case .starting = state, lastRequest == round else { return }
    state = .polling
    out.append(.presentSheet(alertMessage: alertMessage))
    out.append(.didBecomeActive)
  }

  mutating func pollingFailed(_ round: NFCRadioRequestID, _ failure: NFCRadioFailure) -> [Action] {
    switch state {
    case .starting where lastRequest == round:
      return end(Self.error(for: failure, operation: "startPolling"))
    case .polling, .active:
      return polls(in: round) ? end(Self.error(for: failure, operation: "polling")) : []
    default:
      return []
    }
  }

  mutating func tagsDetected(_ round: NFCRadioRequestID, _ tags: [NFCRadioTagID]) -> [Action] {
    var actions: [Action] = []
    if case .starting = state, lastRequest == round {
      actions = pollingStarted(round)  // A radio may report a tag with the start of polling.
    }
    guard var active = activeValue, active.round == round else { return actions }
    state = .updating
    let new = tags.filter { active.tags.insert($0).inserted }
    switch mode {
    case .readWrite, .undecided:
      if !new.isEmpty { actions.append(.didDetectTags(new.map { TagRef(round: round, tag: $0) })) }
    case .readOnly:
      actions += autoRead(new, in: &active)
    }
    state = .active(active)
    return actions
  }

  /// The delegate was offered tags while the mode was undecided: `implemented` says whether its own
  /// `didDetect tags` ran. If it did, the session is read-write for good; if not, it is read-only: the
  /// offered handles become unavailable and the tags in the field are read as a read-only session reads
  /// them.
  mutating func tagDelegateAnswered(implemented: Bool) -> [Action] {
    guard case .undecided(let invalidateAfterFirstRead) = mode else { return [] }
    mode = implemented ? .readWrite : .readOnly(invalidateAfterFirstRead: invalidateAfterFirstRead)
    guard !implemented, var active = activeValue else { return [] }
    state = .updating
    let inField = active.tags.sorted()
    var actions: [Action] = []
    if !inField.isEmpty { actions.append(.tagsUnavailable(inField.map { TagRef(round: active.round, tag: $0) })) }
    active.connected = nil
    actions += autoRead(inField, in: &active)
    state = .active(active)
    return actions
  }

  /// Sends a read of each of `tags`, as a read-only session does for a tag that enters the field.
  private mutating func autoRead(_ tags: [NFCRadioTagID], in active: inout Active) -> [Action] {
    tags.map { tag in
      let request = nextRequest()
      active.pending[request] = .autoRead(tag)
      return .send(.readNDEF(tag), request)
    }
  }

  mutating func tagRemoved(_ round: NFCRadioRequestID, _ tag: NFCRadioTagID) -> [Action] {
    guard case .active(var active) = state, active.round == round else { return [] }  // `polling`: no tags.
    state = .updating
    defer { state = .active(active) }
    guard active.tags.remove(tag) != nil else { return [] }
    if active.connected == tag { active.connected = nil }
    return mode.handsOutTags ? [.tagsUnavailable([TagRef(round: round, tag: tag)])] : []
  }

  mutating func userCanceled(_ round: NFCRadioRequestID) -> [Action] {
    switch state {
    case .starting where lastRequest == round: break
    case .polling, .active: if !polls(in: round) { return [] }
    default: return []
    }
    return end(
      NFCReaderError(
        .readerSessionInvalidationErrorUserCanceled, "the user canceled the session", context: ["by": "user"]))
  }

  mutating func response(_ request: NFCRadioRequestID, _ response: NFCRadioResponse) -> [Action] {
    guard case .active(var active) = state else { return [] }  // `polling`: nothing sent.
    state = .updating
    guard let pending = active.pending.removeValue(forKey: request) else {
      state = .active(active)
      return []
    }
    switch pending {
    case .autoRead:
      state = .active(active)
      let result: Result<NDEFMessage, NFCReaderError>
      switch response {
      case .read(let bytes): result = Self.decode(bytes)
      case .failed(let failure): result = .failure(Self.error(for: failure, operation: "readNDEF"))
      default: result = .failure(Self.unexpected(response, operation: "readNDEF"))
      }
      switch result {
      case .success(let message):
        guard case .readOnly(invalidateAfterFirstRead: true) = mode else { return [.didDetectNDEFs([message])] }
        return [.didDetectNDEFs([message])]
          + end(
            NFCReaderError(
              .readerSessionInvalidationErrorFirstNDEFTagRead, "the first NDEF message was read"))
      case .failure(let error):
        return [.didFailToReadNDEF(error)]
      }
    case .app(let op, let operation, let tag):
      let outcome = Self.outcome(of: operation, response)
      if outcome == .connected { active.connected = tag }
      var actions: [Action] = []
      if response == .failed(.tagLost), active.tags.remove(tag) != nil {
        // The tag left the field: its handle is unavailable before the completion that says so runs.
        if active.connected == tag { active.connected = nil }
        if mode.handsOutTags { actions.append(.tagsUnavailable([TagRef(round: active.round, tag: tag)])) }
      }
      state = .active(active)
      return actions + [.complete(op, outcome)]
    }
  }

  // MARK: Rules

  private mutating func end(_ error: NFCReaderError, errorMessage: String?) -> [Action] {
    var actions: [Action] = []
    end(error, errorMessage: errorMessage, into: &actions)
    return actions
  }

  private mutating func end(_ error: NFCReaderError, errorMessage: String?, into out: inout [Action]) {
    switch state {
    case .idle:
      state = .invalidated(error)
      out.append(.didInvalidate(error))
    case .waiting:
      state = .invalidated(error)
      out.append(.didInvalidate(error))
      out.append(.release)
    case .starting:
      state = .invalidated(error)
      out.append(.stopPolling(lastRequest))
      out.append(.didInvalidate(error))
      out.append(.release)
    case .polling:
      // `active`'s ending with nothing seen or sent, without making the empty `Active` for it.
      state = .invalidated(error)
      out.append(.stopPolling(lastRequest))
      out.append(.dismissSheet(errorMessage: errorMessage))
      out.append(.didInvalidate(error))
      out.append(.release)
    case .active(let active):
      state = .invalidated(error)
      out.append(.stopPolling(active.round))
      out.append(.dismissSheet(errorMessage: errorMessage))
      if mode.handsOutTags, !active.tags.isEmpty {
        out.append(.tagsUnavailable(active.tags.sorted().map { TagRef(round: active.round, tag: $0) }))
      }
      if !active.pending.isEmpty {
        out += completions(
          of: active.pending,
          with: NFCReaderError(
            .readerTransceiveErrorSessionInvalidated, "the session was invalidated during the operation",
            context: ["reason": "sessionInvalidated"]))
      }
      out.append(.didInvalidate(error))
      out.append(.release)
    case .invalidated, .updating:
      break
    }
  }

  /// Fails the app operations among `pending`, in the order they were sent.
  private func completions(of pending: [NFCRadioRequestID: Pending], with error: NFCReaderError) -> [Action] {
    pending.sorted { $0.key < $1.key }.compactMap { _, pending in
      guard case .app(let op, let operation, _) = pending else { return nil }
      var error = error
      error.context["operation"] = operation.name
      return .complete(op, .failed(error))
    }
  }

  /// The last request the session made (its polling round while it is `starting`).
  private var lastRequest: NFCRadioRequestID { NFCRadioRequestID(session: id, sequence: sequence) }

  private mutating func nextRequest() -> NFCRadioRequestID {
    sequence += 1
    return NFCRadioRequestID(session: id, sequence: sequence)
  }

  /// The message in a tag's NDEF area: none for a blank tag, a typed error with its byte offset for a
  /// malformed one.
  static func decode(_ bytes: [UInt8]) -> Result<NDEFMessage, NFCReaderError> {
    guard !bytes.isEmpty else {
      return .failure(
        NFCReaderError(
          .ndefReaderSessionErrorZeroLengthMessage, "the tag holds no NDEF message", context: ["reason": "blankTag"]))
    }
    do {
      return .success(try NDEFDecoder().decode(bytes))
    } catch {
      return .failure(
        NFCReaderError(
          .readerTransceiveErrorTagResponseError, "the tag's NDEF message is malformed: \(error.message)",
          context: ["reason": "malformedMessage", "offset": String(error.offset), "ndefCode": "\(error.code)"],
          ndefError: error))
    }
  }

  private static func outcome(of operation: Operation, _ response: NFCRadioResponse) -> Outcome {
    switch (operation, response) {
    case (_, .failed(let failure)):
      return .failed(error(for: failure, operation: operation.name))
    case (.connect, .connected):
      return .connected
    case (.queryNDEFStatus, .status(let status)):
      let ndefStatus: NFCNDEFStatus =
        !status.isNDEFFormatted ? .notSupported : status.isWritable ? .readWrite : .readOnly
      return .status(ndefStatus, capacity: max(status.capacity, 0))
    case (.readNDEF, .read(let bytes)):
      switch decode(bytes) {
      case .success(let message): return .message(message)
      case .failure(var error):
        error.context["operation"] = "readNDEF"
        return .failed(error)
      }
    case (.writeNDEF, .written), (.writeLock, .locked):
      return .done
    default:
      return .failed(unexpected(response, operation: operation.name))
    }
  }

  private static func unexpected(_ response: NFCRadioResponse, operation: String) -> NFCReaderError {
    NFCReaderError(
      .readerTransceiveErrorTagResponseError, "the radio answered \(operation) with \(response)",
      context: ["operation": operation, "reason": "unexpectedResponse"])
  }

  /// The Core NFC code for what the radio reported.
  static func error(for failure: NFCRadioFailure, operation: String) -> NFCReaderError {
    let (code, message, reason): (NFCReaderError.Code, String, String)
    switch failure {
    case .unsupported:
      (code, message, reason) = (.readerErrorUnsupportedFeature, "this device cannot read NFC tags", "unsupported")
    case .radioOff: (code, message, reason) = (.readerErrorRadioDisabled, "the NFC radio is off", "radioOff")
    case .busy:
      (code, message, reason) = (
        .readerSessionInvalidationErrorSystemIsBusy, "the NFC system is busy: another app holds the radio", "busy"
      )
    case .terminated:
      (code, message, reason) = (
        .readerSessionInvalidationErrorSessionTerminatedUnexpectedly, "the system ended the session", "terminated"
      )
    case .tagLost:
      (code, message, reason) = (.readerTransceiveErrorTagConnectionLost, "the tag left the field", "tagLost")
    case .notNDEFFormatted:
      (code, message, reason) = (
        .readerTransceiveErrorTagResponseError, "the tag is not NDEF-formatted", "notNDEFFormatted"
      )
    case .notWritable:
      (code, message, reason) = (.ndefReaderSessionErrorTagNotWritable, "the tag is read-only", "notWritable")
    case .capacityExceeded:
      (code, message, reason) = (
        .ndefReaderSessionErrorTagSizeTooSmall, "the message is larger than the tag holds", "capacityExceeded"
      )
    case .updateFailed:
      (code, message, reason) = (
        .ndefReaderSessionErrorTagUpdateFailure, "the tag did not take the write", "updateFailed"
      )
    case .tagResponse(let detail):
      return NFCReaderError(
        .readerTransceiveErrorTagResponseError, "the tag answered with an error: \(detail)",
        context: ["operation": operation, "reason": "tagResponse", "detail": detail])
    case .detailed(let failure, let message, let cause, let context):
      var error = self.error(for: failure, operation: operation)
      if let message { error.message = message }
      error.cause = cause ?? error.cause
      error.context.merge(context) { _, detail in detail }
      return error
    }
    return NFCReaderError(code, message, context: ["operation": operation, "reason": reason])
  }
}
