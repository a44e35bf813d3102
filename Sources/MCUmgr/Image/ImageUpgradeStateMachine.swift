import ReaderCore

/// One software update of one reader over SMP, as a pure machine: check the MCUboot image, upload it,
/// mark it for test, reset the reader into it, and — once the link is back — check that it runs the new
/// image and confirm it. The reader counts as updated only when it runs the image with the expected
/// hash and the image is confirmed; any failure leaves it on its previous version.
///
/// The steps, each one request at a time (the session around it sends them through the SMP client):
/// 1. Before anything is sent: the image parses as MCUboot, the SHA-256 of its header, body and
///    protected TLVs equals its SHA-256 TLV (the hash the reader will report), and the file's own
///    SHA-256 (the upload's `sha`) is taken. The catalog has already checked the file against its
///    manifest.
/// 2. MCUmgr parameters (the reader's SMP buffer, which bounds a request; an error is ignored, as
///    older readers do not have the command), then the image state: a reader already running the image
///    only needs confirming; one holding it complete in its second slot skips the upload.
/// 3. Upload: chunks at increasing offsets, each sized to fit one write (or the reader's buffer on a
///    link with a small MTU). The offset the reader answers is where the next chunk starts and is the
///    progress, so a reader that kept part of an earlier upload of the same file (same `sha`) resumes
///    from its offset, and one that restarted from 0 gets the first chunk's fields again. A chunk
///    without an answer is sent again (`chunkRetries`); a reader whose offset stops moving fails it.
/// 4. Image state write with the hash and `confirm: false` (test), then the OS reset, with the link
///    loss declared expected (`.restart`) before it is sent. Past this point a cancel is ignored: the
///    reader is already switching images.
/// 5. Once the link is back (within `restart`), the image state: the primary slot must hold the new
///    hash; if it is not confirmed yet, it is confirmed. A reader that booted its old image (MCUboot
///    refused or reverted the new one) fails the update. A confirm that fails resets the reader once
///    more, so that MCUboot reverts to the previous image, and the update fails with the confirm's error.
///
/// Progress: the upload covers 0 to 0.9, then 0.92 (marked for test), 0.94 (reset accepted), 0.96
/// (back), 0.98 (confirming); it never goes back. A link lost unexpectedly ends the machine with
/// `abandoned` (no `finished`: the radio reports the loss and the terminal ends the install); so does a
/// reader that does not come back within `restart`, once the expectation is withdrawn.
package struct ImageUpgradeStateMachine {
  package enum Action: Equatable, Sendable {
    /// Send this request; answer with `answered`.
    case request(SMPRequest)
    /// Report progress in `0...1`.
    case progress(Double)
    /// Declare (or withdraw) an expected loss of the link to the transport.
    case expectLinkLoss(SMPLinkLossExpectation?)
    case armRestartTimer(after: Duration)
    case disarmRestartTimer
    /// The update is over: `nil` is success. Reported to the terminal as `updateFinished`.
    case finished(ReaderError?)
    /// The update ended with the link: nothing is reported (the radio reports the link loss).
    case abandoned
  }

  private enum Phase: Equatable {
    case idle
    case parameters
    case readingState
    /// The chunk at `offset` is in flight.
    case uploading(offset: Int, retries: Int, stalled: Int)
    case testing
    /// The reset is in flight; `revert` is the error of a failed confirm being undone.
    case resetting(revert: ReaderError?)
    /// Waiting for the reader to drop the link and come back.
    case restarting(revert: ReaderError?, wentDown: Bool)
    case verifying(revert: ReaderError?)
    case confirming
    /// The app cancelled; waiting for the request in flight to end.
    case canceling
    case finished
  }

  /// How many answers in a row may leave the upload offset where it was before the upload fails.
  static let stallLimit = 5

  private let timings: ImageUpgradeTimings
  private let sha256: @Sendable ([UInt8]) -> SHA256Checksum
  private let context: [String: String]
  private var phase = Phase.idle
  private var image: [UInt8] = []
  private var target: [UInt8] = []
  private var fileSHA: [UInt8] = []
  private var writeLength: Int?
  private var bufferSize: Int?
  private var reported = 0.0

  /// An update that hashes with `sha256` (a pure function) and puts `context` (the serial number, the
  /// version) on its errors.
  package init(
    timings: ImageUpgradeTimings, sha256: @escaping @Sendable ([UInt8]) -> SHA256Checksum,
    context: [String: String] = [:]
  ) {
    self.timings = timings
    self.sha256 = sha256
    self.context = context
  }

  package var isFinished: Bool { phase == .finished }

  /// Starts with `image` (nil: the update has none) on a link that takes writes of `writeLength`.
  package mutating func start(image data: [UInt8]?, writeLength: Int?) -> [Action] {
    guard phase == .idle else { return [] }
    guard let data else {
      return finish(
        ReaderError(
          .readerSoftwareUpdateFailed,
          "an SMP reader installs only an update that comes with an MCUboot image; this one has none",
          context: context))
    }
    let parsed: MCUbootImage
    do {
      parsed = try MCUbootImage(parsing: data)
    } catch {
      return finish(rejected("mcuboot", "is not an MCUboot image a reader takes: \(error)", actual: "\(error.reason)"))
    }
    let digest = sha256(Array(data[0..<parsed.hashedLength]))
    guard digest.bytes == parsed.sha256 else {
      let expected = SHA256Checksum(bytes: parsed.sha256)?.hex ?? ""
      return finish(
        rejected(
          "mcuboot.sha256", "does not hash to its own SHA-256 TLV (the image is corrupt)", expected: expected,
          actual: digest.hex))
    }
    guard let writeLength else {
      return finish(
        ReaderError(
          .readerSoftwareUpdateFailedInterrupted, "the reader's SMP channel is not ready", context: context))
    }
    image = data
    target = parsed.sha256
    fileSHA = sha256(data).bytes
    self.writeLength = writeLength
    phase = .parameters
    return [.request(.parameters(timeout: timings.request))]
  }

  /// The request sent last was answered (or failed; a link loss comes through `linkDown` instead).
  package mutating func answered(_ result: Result<CBORValue, SMPFailure>) -> [Action] {
    switch phase {
    case .parameters:
      if case .success(let body) = result, let size = body["buf_size"]?.intValue, size >= 64 {
        bufferSize = min(size, Int(UInt16.max))
      }
      phase = .readingState
      return [.request(.imageState(timeout: timings.request))]
    case .readingState:
      return stateRead(result)
    case .uploading(let offset, let retries, let stalled):
      return uploaded(result, offset: offset, retries: retries, stalled: stalled)
    case .testing:
      return tested(result)
    case .resetting(let revert):
      switch result {
      case .success, .failure(.timedOut):
        // A reader that reset before its answer got out looks the same as one that answered late.
        phase = .restarting(revert: revert, wentDown: false)
        return (revert == nil ? progress(0.94) : []) + [.armRestartTimer(after: timings.restart)]
      case .failure(let failure):
        return [.expectLinkLoss(nil)] + finish(revert ?? fail(failure, "the reset into the new image", step: "reset"))
      }
    case .verifying(let revert):
      return verified(result, revert: revert)
    case .confirming:
      return confirmed(result)
    case .canceling:
      return finish(ReaderError.canceled("installUpdate"))
    case .idle, .restarting, .finished:
      return []
    }
  }

  /// The link came back (or up), taking writes of `writeLength`.
  package mutating func linkReady(writeLength: Int) -> [Action] {
    self.writeLength = writeLength
    guard case .restarting(let revert, true) = phase else { return [] }
    phase = .verifying(revert: revert)
    return [.disarmRestartTimer, .expectLinkLoss(nil)] + (revert == nil ? progress(0.96) : [])
      + [.request(.imageState(timeout: timings.request))]
  }

  /// The link went down.
  package mutating func linkDown() -> [Action] {
    writeLength = nil
    switch phase {
    case .resetting(let revert):
      phase = .restarting(revert: revert, wentDown: true)
      return (revert == nil ? progress(0.94) : []) + [.armRestartTimer(after: timings.restart)]
    case .restarting(let revert, _):
      phase = .restarting(revert: revert, wentDown: true)
      return []
    case .idle, .finished:
      return []
    case .parameters, .readingState, .uploading, .testing, .verifying, .confirming, .canceling:
      phase = .finished
      return [.abandoned]
    }
  }

  /// The reader did not come back in time.
  package mutating func restartTimerFired() -> [Action] {
    guard case .restarting(let revert, _) = phase else { return [] }
    guard writeLength != nil else {
      // Down and not back: the transport now reports the loss, and the terminal ends the install.
      phase = .finished
      return [.expectLinkLoss(nil), .abandoned]
    }
    return [.expectLinkLoss(nil)]
      + finish(
        revert
          ?? ReaderError(
            .readerSoftwareUpdateFailedReaderError,
            "the reader accepted the reset but did not restart within \(timings.restart.formattedSeconds); it keeps its previous version",
            context: context.merging(["step": "reset"]) { $1 }))
  }

  /// The app asks to stop: honoured until the image is marked for test (the update then ends once the
  /// request in flight has), ignored after.
  package mutating func cancel() -> [Action] {
    switch phase {
    case .parameters, .readingState, .uploading:
      phase = .canceling
      return []
    case .idle, .testing, .resetting, .restarting, .verifying, .confirming, .canceling, .finished:
      return []
    }
  }

  // MARK: Steps

  private mutating func stateRead(_ result: Result<CBORValue, SMPFailure>) -> [Action] {
    let body: CBORValue
    switch result {
    case .success(let value): body = value
    case .failure(let failure): return finish(fail(failure, "reading the image state", step: "state"))
    }
    guard let slots = ImageSlotState.slots(in: body) else {
      return finish(fail(.malformedResponse("no images list"), "reading the image state", step: "state"))
    }
    if let primary = Self.primary(slots), primary.hash == target {
      guard !primary.confirmed else { return finish(nil) }
      phase = .confirming
      return progress(0.98) + [.request(.imageConfirm(hash: target, timeout: timings.request))]
    }
    if let secondary = slots.first(where: { $0.image == 0 && $0.slot == 1 }), secondary.hash == target {
      // Uploaded before (the link or the app stopped the update after the upload).
      guard secondary.pending else { return test() }
      return progress(0.92) + resetIntoNewImage(revert: nil)
    }
    return sendChunk(at: 0, retries: 0, stalled: 0)
  }

  private mutating func uploaded(
    _ result: Result<CBORValue, SMPFailure>, offset: Int, retries: Int, stalled: Int
  ) -> [Action] {
    let body: CBORValue
    switch result {
    case .success(let value): body = value
    case .failure(.timedOut) where retries < timings.chunkRetries:
      return sendChunk(at: offset, retries: retries + 1, stalled: stalled)
    case .failure(let failure): return finish(fail(failure, "the image upload", step: "upload"))
    }
    guard let next = body["off"]?.intValue, (0...image.count).contains(next) else {
      return finish(fail(.malformedResponse("no upload offset within the image"), "the image upload", step: "upload"))
    }
    if body["match"]?.boolValue == false {
      return finish(
        ReaderError(
          .readerSoftwareUpdateFailedReaderError,
          "the reader found that the uploaded image does not match its SHA-256; it keeps its previous version",
          context: context.merging(["step": "upload"]) { $1 }))
    }
    let stuck = next <= offset && next < image.count ? stalled + 1 : 0
    guard stuck < Self.stallLimit else {
      return finish(
        ReaderError(
          .readerSoftwareUpdateFailedReaderError, "the reader does not take the upload (its offset stays at \(next))",
          context: context.merging(["step": "upload", "offset": "\(next)"]) { $1 }))
    }
    let moved = progress(0.9 * Double(next) / Double(image.count))
    guard next < image.count else { return moved + test() }
    return moved + sendChunk(at: next, retries: 0, stalled: stuck)
  }

  private mutating func test() -> [Action] {
    phase = .testing
    return [.request(.imageTest(hash: target, timeout: timings.request))]
  }

  private mutating func tested(_ result: Result<CBORValue, SMPFailure>) -> [Action] {
    let body: CBORValue
    switch result {
    case .success(let value): body = value
    case .failure(let failure): return finish(fail(failure, "marking the new image for test", step: "test"))
    }
    // Zephyr answers with the state after the change; a server that answers `{}` is taken at its word.
    if let slots = ImageSlotState.slots(in: body), !(slots.first { $0.hash == target }?.pending ?? false) {
      return finish(
        ReaderError(
          .readerSoftwareUpdateFailedReaderError, "the reader did not mark the new image for test",
          context: context.merging(["step": "test"]) { $1 }))
    }
    return progress(0.92) + resetIntoNewImage(revert: nil)
  }

  private mutating func resetIntoNewImage(revert: ReaderError?) -> [Action] {
    phase = .resetting(revert: revert)
    return [.expectLinkLoss(.restart), .request(.reset(timeout: timings.request))]
  }

  private mutating func verified(_ result: Result<CBORValue, SMPFailure>, revert: ReaderError?) -> [Action] {
    let body: CBORValue
    switch result {
    case .success(let value): body = value
    case .failure(let failure):
      return finish(revert ?? fail(failure, "reading the image state after the reset", step: "verify"))
    }
    guard let primary = ImageSlotState.slots(in: body).flatMap(Self.primary), primary.hash == target else {
      return finish(
        revert
          ?? ReaderError(
            .readerSoftwareUpdateFailedReaderError,
            "the reader did not boot the new image (the boot loader kept or restored the previous one); it keeps its previous version",
            context: context.merging(["step": "verify"]) { $1 }))
    }
    guard !primary.confirmed else { return finish(nil) }
    if let revert { return finish(revert) }
    phase = .confirming
    return progress(0.98) + [.request(.imageConfirm(hash: target, timeout: timings.request))]
  }

  private mutating func confirmed(_ result: Result<CBORValue, SMPFailure>) -> [Action] {
    var failure: SMPFailure?
    switch result {
    case .success(let body):
      if let slots = ImageSlotState.slots(in: body), let primary = Self.primary(slots),
        primary.hash != target || !primary.confirmed
      {
        failure = .malformedResponse("the running image is not confirmed after the confirm")
      }
    case .failure(let error):
      failure = error
    }
    guard let failure else { return finish(nil) }
    // Unconfirmed, the new image would be reverted at the next reset: reset now, so that the reader
    // runs its previous version when the update is reported failed.
    var error = fail(failure, "confirming the new image", step: "confirm")
    error.message += "; the reader restarts into its previous version"
    return resetIntoNewImage(revert: error)
  }

  // MARK: Support

  private static func primary(_ slots: [ImageSlotState]) -> ImageSlotState? {
    slots.first { $0.image == 0 && $0.slot == 0 }
  }

  /// The largest frame a request may take: one write, unless writes are too small to carry a useful
  /// chunk; never more than the reader's SMP buffer.
  private var frameBudget: Int {
    let buffer = bufferSize ?? timings.defaultBufferSize
    guard let writeLength, writeLength >= timings.minimumSingleWriteFrame else { return buffer }
    return min(writeLength, buffer)
  }

  private mutating func sendChunk(at offset: Int, retries: Int, stalled: Int) -> [Action] {
    let first = offset == 0
    let timeout = first ? timings.firstChunk : timings.chunk
    func request(_ data: [UInt8]) -> SMPRequest {
      .imageUpload(
        offset: offset, data: data, length: first ? image.count : nil, sha: first ? fileSHA : nil, timeout: timeout)
    }
    // The frame without data, less the empty byte string's one-byte head.
    let base = SMPHeader.size + CBOREncoder.encode(request([]).body).count - 1
    let budget = frameBudget
    var length = min(image.count - offset, max(1, budget - base - 1))
    while length > 1, base + CBOREncoder.headSize(UInt64(length)) + length > budget { length -= 1 }
    phase = .uploading(offset: offset, retries: retries, stalled: stalled)
    return [.request(request(Array(image[offset..<offset + length])))]
  }

  private mutating func progress(_ value: Double) -> [Action] {
    guard value > reported else { return [] }
    reported = value
    return [.progress(value)]
  }

  private func fail(_ failure: SMPFailure, _ what: String, step: String) -> ReaderError {
    let code: ReaderError.Code =
      switch failure {
      case .timedOut, .writeFailed: .readerSoftwareUpdateFailedInterrupted  // The reader did not get or answer it.
      case .rejected, .malformedResponse, .linkDown: .readerSoftwareUpdateFailedReaderError
      }
    return failure.readerError(code, what, context: context.merging(["step": step]) { $1 })
  }

  private func rejected(_ field: String, _ what: String, expected: String = "", actual: String) -> ReaderError {
    ReaderError(
      .firmwareImageRejected, "the firmware image \(what)",
      context: context.merging(["field": field, "expected": expected, "actual": actual]) { $1 })
  }

  private mutating func finish(_ error: ReaderError?) -> [Action] {
    phase = .finished
    return [.disarmRestartTimer, .finished(error)]
  }
}
