import ReaderCore
import TestSupport
import Testing

@testable import MCUmgr

@Suite struct SMPClientStateMachineTests {
  typealias Machine = SMPClientStateMachine
  static let state = SMPRequest.imageState(timeout: .seconds(5))
  static let reset = SMPRequest.reset(timeout: .seconds(3))

  /// The response frame a reader sends to `request` sent with `sequence`.
  static func response(to request: SMPRequest, sequence: UInt8, body: CBORValue, version: UInt8 = 1) -> [UInt8] {
    SMPFrame(
      operation: responseOperation(request), group: request.group, command: request.command, sequence: sequence,
      body: body, version: version
    ).bytes
  }

  static func ready(_ machine: inout Machine, writeLength: Int = 244) {
    #expect(machine.linkReady(maximumWriteLength: writeLength).isEmpty)
  }

  @Test func aRequestMadeWhileTheLinkIsDownFailsAtOnce() {
    var machine = Machine()
    let (id, actions) = machine.submit(Self.state)
    #expect(actions == [.completed(id, .failure(.linkDown))])
    #expect(machine.isIdle)
  }

  @Test func requestsGoOutOneAtATimeWithIncreasingSequenceNumbers() {
    var machine = Machine(firstSequence: 41)
    Self.ready(&machine)
    let (first, sent) = machine.submit(Self.state)
    #expect(sent == [.send(Self.state.frame(sequence: 41).bytes), .armTimeout(after: .seconds(5))])
    let (second, waiting) = machine.submit(Self.reset)
    #expect(waiting.isEmpty, "the second waits for the first")
    let answered = machine.received(Self.response(to: Self.state, sequence: 41, body: ["images": []]))
    #expect(
      answered == [
        .disarmTimeout, .completed(first, .success(["images": []])), .send(Self.reset.frame(sequence: 42).bytes),
        .armTimeout(after: .seconds(3)),
      ])
    #expect(
      machine.received(Self.response(to: Self.reset, sequence: 42, body: [:])) == [
        .disarmTimeout, .completed(second, .success([:])),
      ])
    #expect(machine.isIdle)
  }

  @Test func theFrameOfAResetIsTheOSGroupsCommandFiveWithAnEmptyMap() {
    #expect(Self.reset.frame(sequence: 7).bytes == [0x0A, 0x00, 0x00, 0x01, 0x00, 0x00, 0x07, 0x05, 0xA0])
    #expect(SMPRequest.reset(force: true, timeout: .seconds(1)).body == ["force": true])
  }

  @Test func aRequestLongerThanAWriteIsSplitAcrossWrites() {
    var machine = Machine()
    Self.ready(&machine, writeLength: 20)
    let upload = SMPRequest.imageUpload(offset: 64, data: Array(repeating: 7, count: 50), timeout: .seconds(5))
    let (_, actions) = machine.submit(upload)
    let writes = actions.compactMap { action -> [UInt8]? in if case .send(let bytes) = action { bytes } else { nil } }
    #expect(writes.count > 1 && writes.allSatisfy { $0.count <= 20 })
    #expect(writes.flatMap { $0 } == upload.frame(sequence: 0).bytes)
  }

  @Test func aFailedWriteOfTheRequestInFlightFailsItAtOnceWithTheLinksErrorAndTheNextOneGoesOut() {
    var machine = Machine()
    Self.ready(&machine)
    let (first, _) = machine.submit(Self.state)
    let (second, _) = machine.submit(Self.reset)
    let cause = ErrorCause.dbus(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")
    #expect(
      machine.writeFailed(Self.state.frame(sequence: 0).bytes, cause: cause) == [
        .disarmTimeout, .completed(first, .failure(.writeFailed(cause))), .send(Self.reset.frame(sequence: 1).bytes),
        .armTimeout(after: .seconds(3)),
      ])
    // A late failure of the first request's write does not touch the second one.
    let late = machine.writeFailed(Self.state.frame(sequence: 0).bytes, cause: cause)
    #expect(late.count == 1 && { if case .discarded = late[0] { true } else { false } }())
    #expect(machine.requestInFlight == second)
    #expect(machine.timeoutFired() == [.completed(second, .failure(.timedOut(.seconds(3))))])
  }

  @Test func aFailedWriteOfAnyPieceOfASplitRequestFailsIt() {
    var machine = Machine()
    Self.ready(&machine, writeLength: 20)
    let upload = SMPRequest.imageUpload(offset: 64, data: Array(repeating: 7, count: 50), timeout: .seconds(5))
    let (id, actions) = machine.submit(upload)
    let writes = actions.compactMap { action -> [UInt8]? in if case .send(let bytes) = action { bytes } else { nil } }
    let cause = ErrorCause.dbus(name: "org.bluez.Error.Failed", message: "")
    #expect(
      machine.writeFailed(writes[writes.count - 1], cause: cause).contains(
        .completed(id, .failure(.writeFailed(cause)))))
    #expect(machine.isIdle)
  }

  @Test func aWriteFailureBecomesAReaderErrorWithTheDBusErrorAsCause() {
    let cause = ErrorCause.dbus(name: "org.bluez.Error.InProgress", message: "In Progress")
    let error = SMPFailure.writeFailed(cause).readerError(.rebootFailed, "the reset")
    #expect(error.cause == cause)
    #expect(error.message.contains("org.bluez.Error.InProgress"))
  }

  @Test func aResponseSplitOverNotificationsCompletesOnceWhole() {
    var machine = Machine()
    Self.ready(&machine)
    let (id, _) = machine.submit(Self.state)
    let bytes = Self.response(
      to: Self.state, sequence: 0, body: ["images": [["slot": 0, "hash": .bytes(Array(repeating: 1, count: 32))]]])
    #expect(machine.received(Array(bytes[..<10])).isEmpty)
    #expect(
      machine.received(Array(bytes[10...])).last
        == .completed(id, .success(fixture(or: .null) { try CBORDecoder().decode(Array(bytes[8...])) })))
  }

  @Test func aResponseWithAnotherSequenceNumberIsDroppedAndTheRequestTimesOut() {
    var machine = Machine(firstSequence: 5)
    Self.ready(&machine)
    let (id, _) = machine.submit(Self.state)
    let (next, _) = machine.submit(Self.reset)
    let stale = machine.received(Self.response(to: Self.state, sequence: 4, body: ["images": []]))
    #expect(stale.count == 1)
    guard case .discarded = stale.first else { Issue.record("\(stale)"); return }
    #expect(machine.requestInFlight == id)
    #expect(
      machine.timeoutFired() == [
        .completed(id, .failure(.timedOut(.seconds(5)))), .send(Self.reset.frame(sequence: 6).bytes),
        .armTimeout(after: .seconds(3)),
      ])
    #expect(machine.requestInFlight == next)
    // The late answer to the timed-out request is dropped too.
    guard case .discarded = machine.received(Self.response(to: Self.state, sequence: 5, body: [:])).first else {
      Issue.record("a late answer was taken"); return
    }
  }

  @Test func aResponseForAnotherGroupCommandOrOperationIsDropped() {
    var machine = Machine()
    Self.ready(&machine)
    let (id, _) = machine.submit(Self.state)
    let wrongGroup = SMPFrame(operation: .readResponse, group: 0, command: 0, sequence: 0, body: [:]).bytes
    let wrongCommand = SMPFrame(operation: .readResponse, group: 1, command: 1, sequence: 0, body: [:]).bytes
    let wrongOperation = SMPFrame(operation: .writeResponse, group: 1, command: 0, sequence: 0, body: [:]).bytes
    let request = SMPFrame(operation: .read, group: 1, command: 0, sequence: 0, body: [:]).bytes
    for bytes in [wrongGroup, wrongCommand, wrongOperation, request] {
      guard case .discarded = machine.received(bytes).first else { Issue.record("taken: \(bytes)"); continue }
    }
    #expect(machine.requestInFlight == id)
  }

  @Test func aMatchingResponseWithAMalformedBodyFailsTheRequestAtOnce() {
    var machine = Machine()
    Self.ready(&machine)
    let (id, _) = machine.submit(Self.state)
    let header = SMPHeader(operation: .readResponse, length: 3, group: 1, sequence: 0, command: 0)
    let actions = machine.received(header.bytes + [0xA1, 0x61, 0x61])
    #expect(
      actions == [
        .disarmTimeout, .completed(id, .failure(.malformedResponse("CBOR: the input ends inside an item at byte 3"))),
      ])
    var other = Machine()
    Self.ready(&other)
    let (array, _) = other.submit(Self.state)
    #expect(
      other.received(Self.response(to: Self.state, sequence: 0, body: [1, 2])).last
        == .completed(array, .failure(.malformedResponse("the body is not a CBOR map"))))
  }

  @Test func rcAndGroupErrorsFailTheRequestAndZeroIsSuccess() {
    let cases: [(CBORValue, Result<CBORValue, SMPFailure>)] = [
      (["rc": 10], .failure(.rejected(rc: 10, group: nil, reason: nil))),
      (["rc": 3, "rsn": "bad"], .failure(.rejected(rc: 3, group: nil, reason: "bad"))),
      (["err": ["group": 1, "rc": 9]], .failure(.rejected(rc: 9, group: 1, reason: nil))),
      (["rc": 0, "off": 4], .success(["rc": 0, "off": 4])),
      (["err": ["group": 1]], .success(["err": ["group": 1]])),
      (["rc": "x"], .failure(.malformedResponse("rc is not an integer"))),
      (["err": 5], .failure(.malformedResponse("err has no group"))),
      (["err": ["group": 1, "rc": true]], .failure(.malformedResponse("err.rc is not an integer"))),
    ]
    for (body, expected) in cases {
      #expect(Machine.result(of: CBOREncoder.encode(body)) == expected, "\(body)")
    }
  }

  @Test func theLinkGoingDownFailsTheRequestInFlightAndEveryQueuedOne() {
    var machine = Machine()
    Self.ready(&machine)
    let (first, _) = machine.submit(Self.state)
    let (second, _) = machine.submit(Self.reset)
    #expect(
      machine.linkDown() == [
        .disarmTimeout, .completed(first, .failure(.linkDown)), .completed(second, .failure(.linkDown)),
      ])
    #expect(machine.isIdle && !machine.isLinkUp)
    guard case .discarded = machine.received([0x01]).first else { Issue.record("bytes taken while down"); return }
  }

  @Test func aPartialFrameDoesNotSurviveTheLinkGoingDown() {
    var machine = Machine()
    Self.ready(&machine)
    _ = machine.submit(Self.state)
    _ = machine.received(Array(Self.response(to: Self.state, sequence: 0, body: ["images": []]).prefix(5)))
    _ = machine.linkDown()
    Self.ready(&machine)
    let (id, _) = machine.submit(Self.state)
    #expect(
      machine.received(Self.response(to: Self.state, sequence: 1, body: [:])).last == .completed(id, .success([:])))
  }

  @Test func sequenceNumbersWrapAfter255() {
    var machine = Machine(firstSequence: 255)
    Self.ready(&machine)
    _ = machine.submit(Self.state)
    _ = machine.received(Self.response(to: Self.state, sequence: 255, body: [:]))
    let (_, actions) = machine.submit(Self.state)
    #expect(actions.first == .send(Self.state.frame(sequence: 0).bytes))
  }

  @Test func aWaitingRequestCanBeWithdrawnButNotTheOneInFlight() {
    var machine = Machine()
    Self.ready(&machine)
    let (first, _) = machine.submit(Self.state)
    let (second, _) = machine.submit(Self.reset)
    let inFlight = machine.withdraw(first)
    let waiting = machine.withdraw(second)
    #expect(!inFlight && waiting)
    #expect(
      machine.received(Self.response(to: Self.state, sequence: 0, body: [:])) == [
        .disarmTimeout, .completed(first, .success([:])),
      ])
    #expect(machine.isIdle)
  }

  @Test func failuresBecomeReaderErrorsWithTheSMPResultAsCause() {
    let error = SMPFailure.rejected(rc: 9, group: 1, reason: nil).readerError(
      .readerSoftwareUpdateFailedReaderError, "the image upload", context: ["serialNumber": "R1"])
    #expect(error.code == .readerSoftwareUpdateFailedReaderError)
    #expect(error.cause == .smp(rc: 9, group: 1))
    #expect(error.context == ["serialNumber": "R1", "smp": "IMG_MGMT_ERR_NO_FREE_SLOT"])
    #expect(error.message == "the image upload failed: the reader refused it: IMG_MGMT_ERR_NO_FREE_SLOT (group 1 rc 9)")
    #expect(SMPResultCode.name(rc: 10, group: nil) == "MGMT_ERR_EBUSY")
    #expect(SMPResultCode.name(rc: 258, group: nil) == "MGMT_ERR_EPERUSER+2")
    #expect(SMPResultCode.name(rc: 4, group: 64) == "group 64 rc 4")
    #expect(
      SMPFailure.timedOut(.seconds(5)).readerError(.rebootFailed, "the reset").cause
        == .other("no answer within 5.0 seconds"))
  }
}
