import ReaderCore
import TestSupport
import Testing

@testable import NFCKit

/// One session's machine, input by input.
@Suite struct NFCSessionStateMachineTests {
  typealias Machine = NFCSessionStateMachine
  typealias Action = Machine.Action
  static var hello: NDEFMessage { fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .text("hello")) } }
  static let tag = NFCRadioTagID(1)
  static let other = NFCRadioTagID(2)

  static func request(_ sequence: UInt64, session: UInt64 = 7) -> NFCRadioRequestID {
    NFCRadioRequestID(session: session, sequence: sequence)
  }

  /// A machine that polls in round 7.1.
  static func active(_ mode: Machine.Mode, alertMessage: String = "") -> Machine {
    var machine = Machine(id: 7, mode: mode, alertMessage: alertMessage)
    _ = machine.begin()
    _ = machine.activate()
    _ = machine.pollingStarted(request(1))
    return machine
  }

  /// A read-write machine with `tag` detected in round 7.1 and connected (request 7.2).
  static func connected() -> Machine {
    var machine = active(.readWrite)
    _ = machine.tagsDetected(request(1), [tag])
    _ = machine.perform(.connect, on: ref(tag), id: 1)
    _ = machine.response(request(2), .connected)
    return machine
  }

  static func ref(_ tag: NFCRadioTagID, round: UInt64 = 1, session: UInt64 = 7) -> Machine.TagRef {
    Machine.TagRef(round: request(round, session: session), tag: tag)
  }

  static func failure(_ actions: [Action]) -> NFCReaderError? {
    for case .complete(_, .failed(let error)) in actions { return error }
    return nil
  }

  // MARK: Start

  @Test func beginHandsTheSessionToTheSystemOnce() {
    var machine = Machine(id: 7, mode: .readWrite)
    #expect(machine.begin() == [.submit])
    #expect(machine.begin() == [])
  }

  @Test func theRadioIsAskedToPollOnlyWhenTheSystemHandsItOver() {
    var machine = Machine(id: 7, mode: .readWrite, alertMessage: "Hold near")
    _ = machine.begin()
    #expect(machine.pollingStarted(Self.request(1)) == [], "no round was asked for yet")
    #expect(machine.activate() == [.startPolling(Self.request(1))])
    #expect(!machine.isActive)
    #expect(machine.pollingStarted(Self.request(9)) == [], "another round's start is ignored")
    #expect(machine.pollingStarted(Self.request(1)) == [.presentSheet(alertMessage: "Hold near"), .didBecomeActive])
    #expect(machine.isActive)
    #expect(machine.pollingStarted(Self.request(1)) == [])
  }

  @Test func aTagReportedWithTheStartOfPollingMakesTheSessionActiveFirst() {
    var machine = Machine(id: 7, mode: .readWrite)
    _ = machine.begin()
    _ = machine.activate()
    #expect(
      machine.tagsDetected(Self.request(1), [Self.tag]) == [
        .presentSheet(alertMessage: ""), .didBecomeActive, .didDetectTags([Self.ref(Self.tag)]),
      ])
  }

  @Test func detectionsBeforeTheSessionPollsAreIgnored() {
    var machine = Machine(id: 7, mode: .readOnly(invalidateAfterFirstRead: true))
    #expect(machine.tagsDetected(Self.request(1), [Self.tag]) == [])
    _ = machine.begin()
    #expect(machine.tagsDetected(Self.request(1), [Self.tag]) == [])
  }

  @Test func theSystemHandingTheRadioToAnEndedSessionGetsItBackAtOnce() {
    var machine = Machine(id: 7, mode: .readWrite)
    _ = machine.begin()
    _ = machine.invalidate(errorMessage: nil)
    #expect(machine.activate() == [.release])
  }

  // MARK: Read-only sessions

  @Test func aReadOnlySessionReadsEachNewTagAndReportsItsMessage() {
    var machine = Self.active(.readOnly(invalidateAfterFirstRead: false))
    #expect(machine.tagsDetected(Self.request(1), [Self.tag]) == [.send(.readNDEF(Self.tag), Self.request(2))])
    #expect(machine.tagsDetected(Self.request(1), [Self.tag]) == [], "a tag is read once per presentation")
    #expect(machine.response(Self.request(2), .read(Self.hello.encoded())) == [.didDetectNDEFs([Self.hello])])
    #expect(machine.response(Self.request(2), .read(Self.hello.encoded())) == [], "an answer counts once")
    #expect(machine.isActive)
  }

  @Test func theFirstMessageEndsAnInvalidateAfterFirstReadSession() {
    var machine = Self.active(.readOnly(invalidateAfterFirstRead: true))
    _ = machine.tagsDetected(Self.request(1), [Self.tag, Self.other])
    let actions = machine.response(Self.request(3), .read(Self.hello.encoded()))
    let error = NFCReaderError(.readerSessionInvalidationErrorFirstNDEFTagRead, "the first NDEF message was read")
    #expect(
      actions == [
        .didDetectNDEFs([Self.hello]), .stopPolling(Self.request(1)), .dismissSheet(errorMessage: nil),
        .didInvalidate(error), .release,
      ])
    #expect(machine.response(Self.request(2), .read(Self.hello.encoded())) == [], "the other read is dropped")
  }

  @Test func aTagWithoutAMessageIsReportedWithWhyAndTheSessionGoesOn() {
    var machine = Self.active(.readOnly(invalidateAfterFirstRead: true))
    _ = machine.tagsDetected(Self.request(1), [Self.tag])
    let blank = machine.response(Self.request(2), .read([]))
    guard case .didFailToReadNDEF(let error)? = blank.first else {
      Issue.record("\(blank)")
      return
    }
    #expect(error.code == .ndefReaderSessionErrorZeroLengthMessage)
    #expect(machine.isActive)
    _ = machine.tagRemoved(Self.request(1), Self.tag)
    _ = machine.tagsDetected(Self.request(1), [Self.other])
    let malformed = machine.response(Self.request(3), .read([0xD1, 0x01, 0x05, 0x54]))
    guard case .didFailToReadNDEF(let bad)? = malformed.first else {
      Issue.record("\(malformed)")
      return
    }
    #expect(bad.code == .readerTransceiveErrorTagResponseError)
    #expect(bad.ndefError?.code == .lengthOutOfBounds)
    #expect(bad.ndefError?.offset == 2)
    #expect(bad.context["offset"] == "2")
    #expect(bad.context["reason"] == "malformedMessage")
  }

  @Test func aReadThatFailsOnTheRadioIsReportedWithItsCode() {
    for (failure, code) in [
      (NFCRadioFailure.tagLost, NFCReaderError.Code.readerTransceiveErrorTagConnectionLost),
      (.notNDEFFormatted, .readerTransceiveErrorTagResponseError),
    ] {
      var machine = Self.active(.readOnly(invalidateAfterFirstRead: true))
      _ = machine.tagsDetected(Self.request(1), [Self.tag])
      let actions = machine.response(Self.request(2), .failed(failure))
      let codes = actions.compactMap { action -> NFCReaderError.Code? in
        if case .didFailToReadNDEF(let error) = action { return error.code }
        return nil
      }
      #expect(codes == [code])
      #expect(actions.count == 1)
    }
  }

  @Test func restartPollingDoesNothingInAReadOnlySession() {
    var machine = Self.active(.readOnly(invalidateAfterFirstRead: false))
    #expect(machine.restartPolling() == [])
  }

  // MARK: Read-write sessions

  @Test func aReadWriteSessionHandsOutTagsAndSendsTheAppsCommands() {
    var machine = Self.active(.readWrite)
    #expect(machine.tagsDetected(Self.request(1), [Self.tag]) == [.didDetectTags([Self.ref(Self.tag)])])
    #expect(machine.perform(.connect, on: Self.ref(Self.tag), id: 1) == [.send(.connect(Self.tag), Self.request(2))])
    #expect(machine.response(Self.request(2), .connected) == [.complete(1, .connected)])
    #expect(machine.perform(.connect, on: Self.ref(Self.tag), id: 2) == [.complete(2, .connected)], "already connected")
    #expect(
      machine.perform(.queryNDEFStatus, on: Self.ref(Self.tag), id: 3) == [
        .send(.queryNDEFStatus(Self.tag), Self.request(3))
      ])
    let status = NFCRadioTagStatus(isNDEFFormatted: true, isWritable: false, capacity: 137)
    #expect(machine.response(Self.request(3), .status(status)) == [.complete(3, .status(.readOnly, capacity: 137))])
    #expect(
      machine.perform(.writeNDEF(Self.hello.encoded()), on: Self.ref(Self.tag), id: 4) == [
        .send(.writeNDEF(Self.hello.encoded(), Self.tag), Self.request(4))
      ])
    #expect(machine.response(Self.request(4), .written) == [.complete(4, .done)])
    #expect(machine.perform(.readNDEF, on: Self.ref(Self.tag), id: 5) == [.send(.readNDEF(Self.tag), Self.request(5))])
    #expect(machine.response(Self.request(5), .read(Self.hello.encoded())) == [.complete(5, .message(Self.hello))])
    #expect(
      machine.perform(.writeLock, on: Self.ref(Self.tag), id: 6) == [.send(.writeLock(Self.tag), Self.request(6))])
    #expect(machine.response(Self.request(6), .locked) == [.complete(6, .done)])
  }

  @Test func theNDEFStatusFollowsTheTagsFormatAndWritability() {
    for (formatted, writable, expected) in [
      (false, false, NFCNDEFStatus.notSupported), (false, true, .notSupported), (true, true, .readWrite),
      (true, false, .readOnly),
    ] {
      var machine = Self.connected()
      _ = machine.perform(.queryNDEFStatus, on: Self.ref(Self.tag), id: 9)
      let status = NFCRadioTagStatus(isNDEFFormatted: formatted, isWritable: writable, capacity: 10)
      #expect(machine.response(Self.request(3), .status(status)) == [.complete(9, .status(expected, capacity: 10))])
    }
  }

  @Test func aReadWriteSessionNeverEndsAfterARead() {
    var machine = Self.connected()
    _ = machine.perform(.readNDEF, on: Self.ref(Self.tag), id: 2)
    #expect(machine.response(Self.request(3), .read(Self.hello.encoded())) == [.complete(2, .message(Self.hello))])
    #expect(machine.isActive)
  }

  @Test func aCommandOnATagThatIsNotTheConnectedOneFailsWithTagNotConnected() {
    var machine = Self.active(.readWrite)
    _ = machine.tagsDetected(Self.request(1), [Self.tag])
    #expect(
      Self.failure(machine.perform(.readNDEF, on: Self.ref(Self.tag), id: 1))?.code
        == .readerTransceiveErrorTagNotConnected)
  }

  @Test func connectingAnotherTagReleasesTheFirst() {
    var machine = Self.connected()
    _ = machine.tagsDetected(Self.request(1), [Self.other])
    _ = machine.perform(.connect, on: Self.ref(Self.other), id: 2)
    _ = machine.response(Self.request(3), .connected)
    #expect(
      Self.failure(machine.perform(.readNDEF, on: Self.ref(Self.tag), id: 3))?.code
        == .readerTransceiveErrorTagNotConnected)
    #expect(
      machine.perform(.readNDEF, on: Self.ref(Self.other), id: 4) == [.send(.readNDEF(Self.other), Self.request(4))])
  }

  @Test func aTagThatLeftTheFieldFailsWithConnectionLostAndIsNoLongerAvailable() {
    var machine = Self.connected()
    #expect(machine.tagRemoved(Self.request(1), Self.tag) == [.tagsUnavailable([Self.ref(Self.tag)])])
    #expect(machine.tagRemoved(Self.request(1), Self.tag) == [])
    let error = Self.failure(machine.perform(.readNDEF, on: Self.ref(Self.tag), id: 2))
    #expect(error?.code == .readerTransceiveErrorTagConnectionLost)
    #expect(error?.context["reason"] == "tagGone")
    #expect(
      Self.failure(machine.perform(.connect, on: Self.ref(Self.tag), id: 3))?.code
        == .readerTransceiveErrorTagConnectionLost)
  }

  @Test func restartPollingMakesEveryHandleOfTheRoundStaleAndFailsItsCommandsInFlight() {
    var machine = Self.connected()
    _ = machine.perform(.readNDEF, on: Self.ref(Self.tag), id: 5)
    let actions = machine.restartPolling()
    let lost = NFCReaderError(
      .readerTransceiveErrorTagConnectionLost, "polling restarted; the tag handle is stale",
      context: ["reason": "pollingRestarted", "operation": "readNDEF"])
    #expect(
      actions == [
        .stopPolling(Self.request(1)), .tagsUnavailable([Self.ref(Self.tag)]), .complete(5, .failed(lost)),
        .startPolling(Self.request(4)),
      ])
    #expect(machine.response(Self.request(3), .read([])) == [], "the old round's answer is late")
    let stale = Self.failure(machine.perform(.connect, on: Self.ref(Self.tag), id: 6))
    #expect(stale?.code == .readerTransceiveErrorTagConnectionLost)
    #expect(stale?.context["reason"] == "pollingRestarted")
    #expect(machine.pollingStarted(Self.request(4)) == [], "a restart is not a second activation")
    #expect(machine.tagsDetected(Self.request(1), [Self.tag]) == [], "old-round detections are late")
    #expect(machine.tagsDetected(Self.request(4), [Self.tag]) == [.didDetectTags([Self.ref(Self.tag, round: 4)])])
  }

  @Test func aTagOfAnotherSessionIsAnInvalidParameter() {
    var machine = Self.connected()
    let error = Self.failure(machine.perform(.connect, on: Self.ref(Self.tag, session: 8), id: 1))
    #expect(error?.code == .readerErrorInvalidParameter)
  }

  // MARK: Ends

  @Test func theAppsInvalidateEndsWithUserCanceledAndFailsCommandsInFlightFirst() {
    var machine = Self.connected()
    _ = machine.perform(.writeNDEF(Self.hello.encoded()), on: Self.ref(Self.tag), id: 2)
    _ = machine.perform(.readNDEF, on: Self.ref(Self.tag), id: 3)
    let actions = machine.invalidate(errorMessage: "Bye")
    let invalidated = NFCReaderError(
      .readerTransceiveErrorSessionInvalidated, "the session was invalidated during the operation",
      context: ["reason": "sessionInvalidated"])
    func during(_ operation: String) -> NFCReaderError {
      var error = invalidated
      error.context["operation"] = operation
      return error
    }
    let canceled = NFCReaderError(
      .readerSessionInvalidationErrorUserCanceled, "the app invalidated the session", context: ["by": "app"])
    #expect(
      actions == [
        .stopPolling(Self.request(1)), .dismissSheet(errorMessage: "Bye"), .tagsUnavailable([Self.ref(Self.tag)]),
        .complete(2, .failed(during("writeNDEF"))), .complete(3, .failed(during("readNDEF"))),
        .didInvalidate(canceled), .release,
      ])
    #expect(machine.invalidation == canceled)
  }

  @Test func eachPhaseEndsWithOnlyWhatItHolds() {
    let error = NFCReaderError(.readerSessionInvalidationErrorSessionTimeout, "time")
    var idle = Machine(id: 7, mode: .readWrite)
    #expect(idle.end(error) == [.didInvalidate(error)])
    var waiting = Machine(id: 7, mode: .readWrite)
    _ = waiting.begin()
    #expect(waiting.end(error) == [.didInvalidate(error), .release])
    var starting = Machine(id: 7, mode: .readWrite)
    _ = starting.begin()
    _ = starting.activate()
    #expect(starting.end(error) == [.stopPolling(Self.request(1)), .didInvalidate(error), .release])
  }

  @Test func everyInputAfterInvalidationIsAbsorbedExceptCallsWhichFailWithSessionInvalidated() {
    for mode in [Machine.Mode.readWrite, .readOnly(invalidateAfterFirstRead: true)] {
      var machine = Self.active(mode)
      _ = machine.tagsDetected(Self.request(1), [Self.tag])
      _ = machine.end(NFCReaderError(.readerSessionInvalidationErrorSessionTimeout, "time"))
      let inputs: [(String, (inout Machine) -> [Action])] = [
        ("begin", { $0.begin() }),
        ("invalidate", { $0.invalidate(errorMessage: "x") }),
        ("end", { $0.end(NFCReaderError(.readerSessionInvalidationErrorSystemIsBusy, "busy")) }),
        ("alert", { $0.setAlertMessage("x") }),
        ("restart", { $0.restartPolling() }),
        ("pollingStarted", { $0.pollingStarted(Self.request(1)) }),
        ("pollingFailed", { $0.pollingFailed(Self.request(1), .radioOff) }),
        ("tagsDetected", { $0.tagsDetected(Self.request(1), [Self.other]) }),
        ("tagRemoved", { $0.tagRemoved(Self.request(1), Self.tag) }),
        ("response", { $0.response(Self.request(2), .read(Self.hello.encoded())) }),
        ("userCanceled", { $0.userCanceled(Self.request(1)) }),
      ]
      for (name, input) in inputs {
        #expect(input(&machine) == [], "\(name) after invalidation (\(mode))")
      }
      #expect(machine.activate() == [.release], "the radio goes straight back")
      let late = Self.failure(machine.perform(.readNDEF, on: Self.ref(Self.tag), id: 9))
      #expect(late?.code == .readerTransceiveErrorSessionInvalidated)
      #expect(machine.invalidation?.code == .readerSessionInvalidationErrorSessionTimeout)
    }
  }

  @Test func theSheetCancelOfAnotherRoundIsIgnored() {
    var machine = Self.active(.readWrite)
    #expect(machine.userCanceled(Self.request(9)) == [])
    let actions = machine.userCanceled(Self.request(1))
    #expect(actions.last == .release)
    #expect(machine.invalidation?.context["by"] == "user")
  }

  @Test func anAlertMessageChangeShowsOnlyWhileTheSheetIsUp() {
    var machine = Machine(id: 7, mode: .readWrite)
    #expect(machine.setAlertMessage("before") == [])
    _ = machine.begin()
    _ = machine.activate()
    #expect(machine.setAlertMessage("starting") == [])
    #expect(machine.pollingStarted(Self.request(1)).first == .presentSheet(alertMessage: "starting"))
    #expect(machine.setAlertMessage("now") == [.updateSheet(alertMessage: "now")])
  }

  // MARK: Codes

  @Test func eachRadioFailureMapsToItsCoreNFCCode() {
    let table: [(NFCRadioFailure, NFCReaderError.Code)] = [
      (.unsupported, .readerErrorUnsupportedFeature), (.radioOff, .readerErrorRadioDisabled),
      (.busy, .readerSessionInvalidationErrorSystemIsBusy),
      (.terminated, .readerSessionInvalidationErrorSessionTerminatedUnexpectedly),
      (.tagLost, .readerTransceiveErrorTagConnectionLost), (.notNDEFFormatted, .readerTransceiveErrorTagResponseError),
      (.notWritable, .ndefReaderSessionErrorTagNotWritable),
      (.capacityExceeded, .ndefReaderSessionErrorTagSizeTooSmall),
      (.updateFailed, .ndefReaderSessionErrorTagUpdateFailure),
      (.tagResponse(detail: "SW 6A 82"), .readerTransceiveErrorTagResponseError),
    ]
    for (failure, code) in table {
      let error = Machine.error(for: failure, operation: "op")
      #expect(error.code == code, "\(failure)")
      #expect(error.context["operation"] == "op")
    }
    #expect(Machine.error(for: .tagResponse(detail: "SW 6A 82"), operation: "op").context["detail"] == "SW 6A 82")
  }

  @Test func aFailedStartEndsTheSessionWithTheRadiosReason() {
    for (failure, code) in [
      (NFCRadioFailure.busy, NFCReaderError.Code.readerSessionInvalidationErrorSystemIsBusy),
      (.radioOff, .readerErrorRadioDisabled), (.unsupported, .readerErrorUnsupportedFeature),
      (.terminated, .readerSessionInvalidationErrorSessionTerminatedUnexpectedly),
    ] {
      var machine = Machine(id: 7, mode: .readOnly(invalidateAfterFirstRead: true))
      _ = machine.begin()
      _ = machine.activate()
      #expect(machine.pollingFailed(Self.request(2), failure) == [], "another round")
      let actions = machine.pollingFailed(Self.request(1), failure)
      #expect(actions.first == .stopPolling(Self.request(1)))
      #expect(machine.invalidation?.code == code)
    }
  }

  // MARK: A tag that leaves mid-command

  @Test func aCommandFailingBecauseItsTagLeftMakesTheHandleUnavailableBeforeItCompletes() {
    var machine = Self.connected()
    _ = machine.perform(.readNDEF, on: Self.ref(Self.tag), id: 2)
    let actions = machine.response(Self.request(3), .failed(.tagLost))
    #expect(actions.count == 2)
    #expect(actions.first == .tagsUnavailable([Self.ref(Self.tag)]))
    #expect(Self.failure(actions)?.code == .readerTransceiveErrorTagConnectionLost)
    #expect(machine.tagRemoved(Self.request(1), Self.tag) == [], "the radio's later removal is already known")
    let again = machine.perform(.readNDEF, on: Self.ref(Self.tag), id: 3)
    #expect(Self.failure(again)?.code == .readerTransceiveErrorTagConnectionLost)
  }

  @Test func aCommandFailingForAnotherReasonLeavesTheHandleAvailable() {
    var machine = Self.connected()
    _ = machine.perform(.writeNDEF(Self.hello.encoded()), on: Self.ref(Self.tag), id: 2)
    let actions = machine.response(Self.request(3), .failed(.notWritable))
    #expect(actions == [.complete(2, .failed(NFCSessionStateMachine.error(for: .notWritable, operation: "writeNDEF")))])
  }

  // MARK: A delegate not yet known to read tags

  @Test func anUndecidedSessionOffersItsFirstTagsAsAReadWriteSessionDoes() {
    var machine = Self.active(.undecided(invalidateAfterFirstRead: true))
    #expect(machine.tagsDetected(Self.request(1), [Self.tag]) == [.didDetectTags([Self.ref(Self.tag)])])
    #expect(machine.tagDelegateAnswered(implemented: true) == [])
    #expect(machine.mode == .readWrite)
    #expect(machine.tagDelegateAnswered(implemented: false) == [], "the mode is settled once")
    #expect(machine.mode == .readWrite)
  }

  @Test func anUndecidedSessionWhoseDelegateDeclinesTagsReadsThemAsAReadOnlySession() {
    var machine = Self.active(.undecided(invalidateAfterFirstRead: true))
    _ = machine.tagsDetected(Self.request(1), [Self.tag, Self.other])
    #expect(
      machine.tagDelegateAnswered(implemented: false) == [
        .tagsUnavailable([Self.ref(Self.tag), Self.ref(Self.other)]),
        .send(.readNDEF(Self.tag), Self.request(2)), .send(.readNDEF(Self.other), Self.request(3)),
      ])
    #expect(machine.mode == .readOnly(invalidateAfterFirstRead: true))
    let read = machine.response(Self.request(2), .read(Self.hello.encoded()))
    #expect(read.first == .didDetectNDEFs([Self.hello]))
    #expect(machine.invalidation?.code == .readerSessionInvalidationErrorFirstNDEFTagRead)
  }
}
