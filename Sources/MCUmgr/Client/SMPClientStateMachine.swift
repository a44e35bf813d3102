import ReaderCore

/// The SMP client of one reader, as a pure machine: requests wait in line, one is in flight at a time
/// (Zephyr's SMP server answers requests in order, one by one), each gets the next sequence number, and
/// a response is matched to it by operation, group, command and sequence number.
///
/// Decisions, documented once here:
/// - A frame that does not match the request in flight (another sequence number, group, command or
///   operation; or no request in flight) is **dropped**: it is most likely the late answer to a request
///   that already timed out, and applying it to the current request (say, an upload offset) would be
///   wrong. The current request keeps waiting for its own answer, up to its timeout.
/// - A frame that does match but whose body is not a well-formed CBOR map (or has `rc`/`err` of the
///   wrong type) **fails** the request at once with `malformedResponse`: the reader did answer it, and
///   waiting would only end in a timeout.
/// - A malformed header or an oversized frame is dropped with the bytes buffered with it (see
///   `SMPReassembler`); the request in flight then times out unless a good answer follows.
/// - A non-zero `rc`, or an `err` map with a non-zero `rc`, fails the request with `rejected`;
///   `rc: 0` and a missing `rc` are success (Zephyr's "minimal response" rule).
/// - A write that the link reports failed (one of the request in flight's writes) fails that request
///   at once with `writeFailed` and the link's error: the reader never got it, so no answer will come.
///   A failed write of a request already over is dropped.
/// - When the link goes down, the request in flight and every queued one fail with `linkDown`; a
///   request made while the link is down fails at once.
///
/// The queue is not bounded here: its users (one reboot or one install per reader at a time) keep at
/// most a request or two in it.
package struct SMPClientStateMachine: Sendable {
  /// Names one submitted request.
  package struct RequestID: Hashable, Sendable, CustomStringConvertible {
    package let value: UInt64
    package var description: String { "#\(value)" }
  }

  package enum Action: Equatable, Sendable {
    /// Write these bytes to the link (one write each, in order).
    case send([UInt8])
    /// Arm the timeout of the request in flight (replacing any armed one).
    case armTimeout(after: Duration)
    /// Disarm the timeout.
    case disarmTimeout
    /// The request is over.
    case completed(RequestID, Result<CBORValue, SMPFailure>)
    /// Something received was dropped, and why (for logs and tests).
    case discarded(String)
  }

  private struct InFlight: Sendable {
    var id: RequestID
    var request: SMPRequest
    var sequence: UInt8
    /// The writes it was sent in, to tell a failed write of its own from one of an earlier request.
    var writes: [[UInt8]]
  }

  private var maximumWriteLength: Int?
  private var queue: [(id: RequestID, request: SMPRequest)] = []
  private var inFlight: InFlight?
  private var nextSequence: UInt8
  private var nextID: UInt64 = 0
  private var reassembler: SMPReassembler

  /// A client whose first request gets sequence number `firstSequence`, and that accepts response
  /// bodies of up to `maximumBodyLength` bytes.
  package init(firstSequence: UInt8 = 0, maximumBodyLength: Int = 16_384) {
    nextSequence = firstSequence
    reassembler = SMPReassembler(maximumBodyLength: maximumBodyLength)
  }

  /// Whether the link is up.
  package var isLinkUp: Bool { maximumWriteLength != nil }
  /// The largest write the link takes, while it is up.
  package var linkWriteLength: Int? { maximumWriteLength }
  /// Whether no request is in flight or waiting.
  package var isIdle: Bool { inFlight == nil && queue.isEmpty }
  /// The request in flight, if any.
  package var requestInFlight: RequestID? { inFlight?.id }

  /// Queues `request`; it is sent when the requests before it are over.
  package mutating func submit(_ request: SMPRequest) -> (RequestID, [Action]) {
    nextID += 1
    let id = RequestID(value: nextID)
    guard isLinkUp else { return (id, [.completed(id, .failure(.linkDown))]) }
    queue.append((id, request))
    return (id, sendNext())
  }

  /// The link came up (again), taking writes of up to `maximumWriteLength` bytes.
  package mutating func linkReady(maximumWriteLength: Int) -> [Action] {
    self.maximumWriteLength = max(1, maximumWriteLength)
    reassembler.reset()
    return sendNext()
  }

  /// The link went down: every request fails with `linkDown`.
  package mutating func linkDown() -> [Action] {
    maximumWriteLength = nil
    reassembler.reset()
    var actions: [Action] = []
    if let current = inFlight {
      inFlight = nil
      actions += [.disarmTimeout, .completed(current.id, .failure(.linkDown))]
    }
    let waiting = queue
    queue.removeAll()
    actions += waiting.map { .completed($0.id, .failure(.linkDown)) }
    return actions
  }

  /// One notification from the reader.
  package mutating func received(_ bytes: [UInt8]) -> [Action] {
    guard isLinkUp else { return [.discarded("\(bytes.count) byte(s) while the link is down")] }
    let (frames, error) = reassembler.append(bytes)
    var actions: [Action] = []
    for frame in frames { actions += answer(frame) }
    if let error { actions.append(.discarded("\(error)")) }
    return actions
  }

  /// The timeout of the request in flight fired.
  package mutating func timeoutFired() -> [Action] {
    guard let current = inFlight else { return [] }
    inFlight = nil
    reassembler.reset()  // A partial answer to it will never be completed.
    return [.completed(current.id, .failure(.timedOut(current.request.timeout)))] + sendNext()
  }

  /// A write to the link failed with `cause`: the request in flight fails at once if `bytes` were one
  /// of its writes; otherwise the failure is dropped (its request is over already).
  package mutating func writeFailed(_ bytes: [UInt8], cause: ErrorCause) -> [Action] {
    guard let current = inFlight, current.writes.contains(bytes) else {
      return [.discarded("a failed write of \(bytes.count) byte(s) that no request in flight made (\(cause))")]
    }
    inFlight = nil
    reassembler.reset()
    return [.disarmTimeout, .completed(current.id, .failure(.writeFailed(cause)))] + sendNext()
  }

  /// Drops a request that waits in line (one in flight cannot be called back; it runs to its end).
  /// Returns whether it was waiting.
  package mutating func withdraw(_ id: RequestID) -> Bool {
    guard let index = queue.firstIndex(where: { $0.id == id }) else { return false }
    queue.remove(at: index)
    return true
  }

  private mutating func answer(_ frame: SMPFrame) -> [Action] {
    guard let current = inFlight else {
      return [.discarded("a frame with sequence number \(frame.header.sequence) and no request in flight")]
    }
    let header = frame.header
    guard header.operation == current.request.operation.response, header.group == current.request.group,
      header.command == current.request.command, header.sequence == current.sequence
    else {
      return [
        .discarded(
          "a frame for group \(header.group) command \(header.command) sequence \(header.sequence), not the request in flight (group \(current.request.group) command \(current.request.command) sequence \(current.sequence))"
        )
      ]
    }
    inFlight = nil
    return [.disarmTimeout, .completed(current.id, Self.result(of: frame.body))] + sendNext()
  }

  /// The outcome a response body gives.
  static func result(of body: [UInt8]) -> Result<CBORValue, SMPFailure> {
    let value: CBORValue
    do {
      value = try CBORDecoder().decode(body)
    } catch {
      return .failure(.malformedResponse("\(error)"))
    }
    guard case .map = value else { return .failure(.malformedResponse("the body is not a CBOR map")) }
    let reason = value["rsn"]?.textValue
    if let rc = value["rc"] {
      guard let code = rc.intValue else { return .failure(.malformedResponse("rc is not an integer")) }
      if code != 0 { return .failure(.rejected(rc: code, group: nil, reason: reason)) }
    }
    if let err = value["err"] {
      guard case .map = err, let group = err["group"]?.uint64Value, group <= UInt64(UInt16.max) else {
        return .failure(.malformedResponse("err has no group"))
      }
      // Zephyr leaves out a zero rc.
      guard let code = err["rc"].map({ $0.intValue }) ?? 0 else {
        return .failure(.malformedResponse("err.rc is not an integer"))
      }
      if code != 0 { return .failure(.rejected(rc: code, group: UInt16(group), reason: reason)) }
    }
    return .success(value)
  }

  private mutating func sendNext() -> [Action] {
    guard inFlight == nil, let writeLength = maximumWriteLength, !queue.isEmpty else { return [] }
    let (id, request) = queue.removeFirst()
    let sequence = nextSequence
    nextSequence &+= 1
    let writes = request.frame(sequence: sequence).fragments(maximumWriteLength: writeLength)
    inFlight = InFlight(id: id, request: request, sequence: sequence, writes: writes)
    return writes.map { .send($0) } + [.armTimeout(after: request.timeout)]
  }
}
