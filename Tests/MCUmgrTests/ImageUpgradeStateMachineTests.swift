import ReaderCore
import Testing

@testable import MCUmgr

@Suite struct ImageUpgradeStateMachineTests {
  typealias Machine = ImageUpgradeStateMachine
  typealias Action = Machine.Action
  static let timings = ImageUpgradeTimings()
  static let image = TestImages.image(bodySize: 5_000)
  static let newHash = TestImages.hash(image)
  static let oldHash = [UInt8](repeating: 0xAB, count: 32)
  static let oldState = ImageSlotState.body([
    ImageSlotState(slot: 0, version: "1.0.0", hash: oldHash, confirmed: true, active: true)
  ])

  static func machine() -> Machine {
    Machine(timings: timings, sha256: TestImages.sha256, context: ["serialNumber": "R1"])
  }

  static func requests(_ actions: [Action]) -> [SMPRequest] {
    actions.compactMap { if case .request(let request) = $0 { request } else { nil } }
  }

  static func progress(_ actions: [Action]) -> [Double] {
    actions.compactMap { if case .progress(let value) = $0 { value } else { nil } }
  }

  /// The error the actions finish with (nil for success or no finish).
  static func error(_ actions: [Action]) -> ReaderError? {
    for case .finished(let error) in actions { return error }
    return nil
  }

  static func finished(_ actions: [Action]) -> ReaderError?? {
    for case .finished(let error) in actions { return .some(error) }
    return nil
  }

  /// Starts an update and answers the parameters and state requests; returns the first chunk's actions.
  static func startUpload(_ machine: inout Machine, writeLength: Int = 244, state: CBORValue = oldState) -> [Action] {
    let opening = machine.start(image: image, writeLength: writeLength)
    #expect(requests(opening) == [.parameters(timeout: timings.request)])
    #expect(
      requests(machine.answered(.success(["buf_size": 2048, "buf_count": 4]))) == [
        .imageState(timeout: timings.request)
      ])
    return machine.answered(.success(state))
  }

  /// Answers every chunk with the offset after it until the image is uploaded; returns the test request's actions.
  static func upload(_ machine: inout Machine, from actions: [Action], progress: inout [Double]) -> [Action] {
    var current = actions
    while let chunk = requests(current).first, chunk.command == 1 {
      guard let offset = chunk.body["off"]?.intValue, let data = chunk.body["data"]?.bytesValue else {
        Issue.record("an upload request without its offset or data: \(chunk.body)")
        return current
      }
      current = machine.answered(.success(["off": .int(offset + data.count)]))
      progress += Self.progress(current)
    }
    return current
  }

  @Test func aFullUpdateUploadsTestsResetsVerifiesAndConfirms() {
    var machine = Self.machine()
    var progress: [Double] = []
    let first = Self.startUpload(&machine)
    let chunk = Self.requests(first)[0]
    #expect(chunk.body["len"] == .int(Self.image.count))
    #expect(chunk.body["sha"] == .bytes(TestImages.sha256(Self.image).bytes))
    #expect(chunk.body["off"] == 0)
    #expect(chunk.timeout == Self.timings.firstChunk)
    let testing = Self.upload(&machine, from: first, progress: &progress)
    #expect(Self.requests(testing) == [.imageTest(hash: Self.newHash, timeout: Self.timings.request)])
    let resetting = machine.answered(
      .success(
        ImageSlotState.body([
          ImageSlotState(slot: 0, hash: Self.oldHash), ImageSlotState(slot: 1, hash: Self.newHash, pending: true),
        ])))
    #expect(resetting == [.progress(0.92), .expectLinkLoss(.restart), .request(.reset(timeout: Self.timings.request))])
    #expect(machine.answered(.success([:])) == [.progress(0.94), .armRestartTimer(after: Self.timings.restart)])
    #expect(machine.linkDown().isEmpty)
    let back = machine.linkReady(writeLength: 244)
    #expect(
      back == [
        .disarmRestartTimer, .expectLinkLoss(nil), .progress(0.96),
        .request(.imageState(timeout: Self.timings.request)),
      ])
    let running = ImageSlotState.body([
      ImageSlotState(slot: 0, hash: Self.newHash, active: true),
      ImageSlotState(slot: 1, hash: Self.oldHash, confirmed: true),
    ])
    #expect(
      machine.answered(.success(running)) == [
        .progress(0.98), .request(.imageConfirm(hash: Self.newHash, timeout: Self.timings.request)),
      ])
    let confirmed = ImageSlotState.body([ImageSlotState(slot: 0, hash: Self.newHash, confirmed: true, active: true)])
    #expect(machine.answered(.success(confirmed)) == [.disarmRestartTimer, .finished(nil)])
    #expect(machine.isFinished)
    #expect(progress == progress.sorted() && (progress.first ?? 0) > 0 && progress.last == 0.9)
  }

  @Test func everyUploadFrameFitsOneWriteAndTheReadersBuffer() throws {
    for (writeLength, buffer) in [(244, 2048), (495, 384), (100, 2048)] {
      var machine = Self.machine()
      _ = machine.start(image: Self.image, writeLength: writeLength)
      _ = machine.answered(.success(["buf_size": .int(buffer)]))
      var actions = machine.answered(.success(Self.oldState))
      var uploaded = 0
      while let chunk = Self.requests(actions).first, chunk.command == 1 {
        let size = chunk.frame(sequence: 0).bytes.count
        #expect(size <= min(writeLength, buffer), "write \(writeLength) buffer \(buffer): a frame of \(size)")
        let data = try #require(chunk.body["data"]?.bytesValue)
        let offset = try #require(chunk.body["off"]?.intValue)
        try #require(offset >= 0 && offset <= Self.image.count, "offset \(offset)")
        #expect(Array(Self.image[offset...].prefix(data.count)) == data)
        uploaded += data.count
        actions = machine.answered(.success(["off": .int(uploaded)]))
      }
      #expect(uploaded == Self.image.count)
    }
  }

  @Test func aSmallMTUSizesFramesByTheReadersBufferToBeSentInSeveralWrites() {
    var machine = Self.machine()
    _ = machine.start(image: Self.image, writeLength: 20)
    _ = machine.answered(.failure(.rejected(rc: 8, group: nil, reason: nil)))  // no parameters command
    let chunk = Self.requests(machine.answered(.success(Self.oldState)))[0]
    let size = chunk.frame(sequence: 0).bytes.count
    #expect(size <= Self.timings.defaultBufferSize && size > Self.timings.defaultBufferSize - 8)
  }

  @Test func theUploadResumesFromTheOffsetTheReaderAnswers() {
    var machine = Self.machine()
    _ = Self.startUpload(&machine)
    let resumed = machine.answered(.success(["off": 2_000]))
    #expect(Self.progress(resumed) == [0.9 * 2_000 / Double(Self.image.count)])
    #expect(Self.requests(resumed)[0].body["off"] == 2_000)
    #expect(Self.requests(resumed)[0].body["sha"] == nil, "only the first chunk carries len and sha")
    // A reader that lost the upload and answers 0 gets the first chunk again, with its fields.
    let restarted = machine.answered(.success(["off": 0]))
    #expect(Self.requests(restarted)[0].body["len"] == .int(Self.image.count))
    #expect(Self.progress(restarted).isEmpty, "progress never goes back")
  }

  @Test func anImageThatDoesNotHashToItsOwnTLVIsRejectedBeforeAnythingIsSent() {
    var corrupt = Self.image
    corrupt[100] ^= 0xFF
    var machine = Self.machine()
    let actions = machine.start(image: corrupt, writeLength: 244)
    #expect(Self.requests(actions).isEmpty)
    let error = Self.error(actions)
    #expect(error?.code == .firmwareImageRejected)
    #expect(error?.context["field"] == "mcuboot.sha256")
    #expect(error?.context["expected"] == SHA256Checksum(bytes: Self.newHash)?.hex)
    var other = Self.machine()
    let notMCUboot = other.start(image: Array(repeating: 0, count: 64), writeLength: 244)
    #expect(Self.error(notMCUboot)?.code == .firmwareImageRejected)
    var none = Self.machine()
    #expect(Self.error(none.start(image: nil, writeLength: 244))?.code == .readerSoftwareUpdateFailed)
    var down = Self.machine()
    #expect(
      Self.error(down.start(image: Self.image, writeLength: nil))?.code
        == .readerSoftwareUpdateFailedInterrupted)
  }

  @Test func aCancelDuringTheUploadEndsOnceTheChunkInFlightIsAnswered() {
    var machine = Self.machine()
    _ = Self.startUpload(&machine)
    #expect(machine.cancel().isEmpty, "nothing is sent, nothing ends while a chunk is in flight")
    let actions = machine.answered(.success(["off": 300]))
    #expect(actions == [.disarmRestartTimer, .finished(ReaderError.canceled("installUpdate"))])
    #expect(machine.cancel().isEmpty && machine.answered(.success([:])).isEmpty)
  }

  @Test func aCancelAfterTheImageIsMarkedForTestIsIgnored() {
    var machine = Self.machine()
    var progress: [Double] = []
    _ = Self.upload(&machine, from: Self.startUpload(&machine), progress: &progress)
    #expect(machine.cancel().isEmpty)
    #expect(Self.requests(machine.answered(.success([:]))) == [.reset(timeout: Self.timings.request)])
  }

  @Test func aLinkLostMidUploadAbandonsTheUpdateWithoutAFinish() {
    var machine = Self.machine()
    _ = Self.startUpload(&machine)
    #expect(machine.linkDown() == [.abandoned])
    #expect(machine.isFinished && machine.answered(.success(["off": 10])).isEmpty)
  }

  static func resetAccepted(_ machine: inout Machine) {
    var progress: [Double] = []
    _ = Self.upload(&machine, from: Self.startUpload(&machine), progress: &progress)
    _ = machine.answered(.success([:]))
    _ = machine.answered(.success([:]))
  }

  @Test func aReaderThatDoesNotComeBackInTimeIsGivenUpAndTheTransportReportsTheLoss() {
    var machine = Self.machine()
    Self.resetAccepted(&machine)
    _ = machine.linkDown()
    #expect(machine.restartTimerFired() == [.expectLinkLoss(nil), .abandoned])
  }

  @Test func aReaderThatAcceptsTheResetButNeverDropsTheLinkFailsTheUpdate() {
    var machine = Self.machine()
    Self.resetAccepted(&machine)
    let actions = machine.restartTimerFired()
    #expect(actions.first == .expectLinkLoss(nil))
    #expect(Self.error(actions)?.code == .readerSoftwareUpdateFailedReaderError)
  }

  @Test func aReaderThatResetBeforeItsAnswerGotOutIsWaitedFor() {
    var machine = Self.machine()
    var progress: [Double] = []
    _ = Self.upload(&machine, from: Self.startUpload(&machine), progress: &progress)
    _ = machine.answered(.success([:]))
    #expect(machine.linkDown() == [.progress(0.94), .armRestartTimer(after: Self.timings.restart)])
    #expect(Self.requests(machine.linkReady(writeLength: 244)) == [.imageState(timeout: Self.timings.request)])
  }

  @Test func aReaderThatBootsItsOldImageFailsTheUpdate() {
    var machine = Self.machine()
    Self.resetAccepted(&machine)
    _ = machine.linkDown()
    _ = machine.linkReady(writeLength: 244)
    let error = Self.error(machine.answered(.success(Self.oldState)))
    #expect(error?.code == .readerSoftwareUpdateFailedReaderError)
    #expect(error?.context["step"] == "verify")
  }

  @Test func aFailedConfirmResetsTheReaderBackToItsOldImageAndFailsWithTheConfirmsError() {
    var machine = Self.machine()
    Self.resetAccepted(&machine)
    _ = machine.linkDown()
    _ = machine.linkReady(writeLength: 244)
    _ = machine.answered(.success(ImageSlotState.body([ImageSlotState(slot: 0, hash: Self.newHash, active: true)])))
    let refused = machine.answered(.failure(.rejected(rc: 32, group: 1, reason: nil)))
    #expect(refused == [.expectLinkLoss(.restart), .request(.reset(timeout: Self.timings.request))])
    #expect(machine.answered(.success([:])) == [.armRestartTimer(after: Self.timings.restart)])
    _ = machine.linkDown()
    #expect(Self.progress(machine.linkReady(writeLength: 244)).isEmpty)
    let error = Self.error(machine.answered(.success(Self.oldState)))
    #expect(error?.code == .readerSoftwareUpdateFailedReaderError)
    #expect(error?.cause == .smp(rc: 32, group: 1))
    #expect(error?.context["step"] == "confirm")
  }

  @Test func aChunkWithoutAnAnswerIsSentAgainThenTheUpdateFails() {
    var machine = Self.machine()
    let first = Self.requests(Self.startUpload(&machine))[0]
    for _ in 0..<Self.timings.chunkRetries {
      #expect(Self.requests(machine.answered(.failure(.timedOut(.seconds(30))))) == [first])
    }
    let error = Self.error(machine.answered(.failure(.timedOut(.seconds(30)))))
    #expect(error?.code == .readerSoftwareUpdateFailedInterrupted)
  }

  @Test func aReaderThatRefusesTheUploadFailsItWithItsResultCode() {
    var machine = Self.machine()
    _ = Self.startUpload(&machine)
    let error = Self.error(machine.answered(.failure(.rejected(rc: 27, group: 1, reason: nil))))
    #expect(error?.cause == .smp(rc: 27, group: 1))
    #expect(error?.context["smp"] == "IMG_MGMT_ERR_CURRENT_VERSION_IS_NEWER")
    #expect(error?.context["serialNumber"] == "R1")
  }

  @Test func aReaderWhoseOffsetStopsMovingFailsTheUpload() {
    var machine = Self.machine()
    _ = Self.startUpload(&machine)
    _ = machine.answered(.success(["off": 100]))
    for _ in 1..<Machine.stallLimit { #expect(Self.finished(machine.answered(.success(["off": 100]))) == nil) }
    #expect(Self.error(machine.answered(.success(["off": 100])))?.context["offset"] == "100")
  }

  @Test func aMismatchTheReaderReportsOrAnOffsetOutsideTheImageFailsTheUpload() {
    var machine = Self.machine()
    _ = Self.startUpload(&machine)
    #expect(Self.finished(machine.answered(.success(["off": .int(Self.image.count), "match": false]))) != nil)
    var other = Self.machine()
    _ = Self.startUpload(&other)
    #expect(
      Self.error(other.answered(.success(["off": .int(Self.image.count + 1)])))?.code
        == .readerSoftwareUpdateFailedReaderError)
  }

  @Test func aReaderAlreadyRunningTheImageIsOnlyConfirmedOrAlreadyDone() {
    var running = Self.machine()
    let unconfirmed = ImageSlotState.body([ImageSlotState(slot: 0, hash: Self.newHash, active: true)])
    #expect(
      Self.requests(Self.startUpload(&running, state: unconfirmed)) == [
        .imageConfirm(hash: Self.newHash, timeout: Self.timings.request)
      ])
    var done = Self.machine()
    let confirmed = ImageSlotState.body([ImageSlotState(slot: 0, hash: Self.newHash, confirmed: true, active: true)])
    #expect(Self.startUpload(&done, state: confirmed) == [.disarmRestartTimer, .finished(nil)])
  }

  @Test func anImageAlreadyUploadedSkipsTheUpload() {
    var complete = Self.machine()
    let uploaded = ImageSlotState.body([
      ImageSlotState(slot: 0, hash: Self.oldHash), ImageSlotState(slot: 1, hash: Self.newHash),
    ])
    #expect(
      Self.requests(Self.startUpload(&complete, state: uploaded)) == [
        .imageTest(hash: Self.newHash, timeout: Self.timings.request)
      ])
    var pending = Self.machine()
    let marked = ImageSlotState.body([
      ImageSlotState(slot: 0, hash: Self.oldHash), ImageSlotState(slot: 1, hash: Self.newHash, pending: true),
    ])
    #expect(Self.requests(Self.startUpload(&pending, state: marked)) == [.reset(timeout: Self.timings.request)])
  }
}
