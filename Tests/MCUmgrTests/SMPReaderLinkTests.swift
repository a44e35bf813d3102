import MCUmgr
import ReaderCore
import Testing

/// The SMP link against the fake device through the reference central, on the virtual clock.
@Suite struct SMPReaderLinkTests {
  static let image = TestImages.image(bodySize: 20_000)

  static func finished(_ h: SMPLinkHarness) -> Bool { !h.finishes.isEmpty }

  @Test func anUpdateUploadsRestartsBehindTheTerminalsBackAndConfirms() throws {
    let h = SMPLinkHarness()
    h.connect()
    h.install(Self.image)
    #expect(h.run(until: { Self.finished(h) }))
    #expect(h.finishes == [nil])
    #expect(h.progress == h.progress.sorted() && h.progress.last == 0.98 && h.progress.count > 10)
    #expect(h.device.primary.hash == TestImages.hash(Self.image) && h.device.primary.confirmed)
    #expect(h.device.runningVersion == "1.1.0")
    #expect(h.device.resets == 1)
    #expect(h.disconnects.isEmpty, "the restart into the new image is hidden from the terminal")
    let writes = try #require(h.central.transport(SMPLinkHarness.serial)?.writes)
    #expect(writes.allSatisfy { $0.count <= 244 })
    h.clock.advance(by: .seconds(120))
    #expect(h.clock.checkNoPendingWork() == nil)
    #expect(h.finishes.count == 1)
  }

  @Test func uploadWritesCarryMostlyImageBytes() throws {
    for writeLength in [244, 495] {
      let h = SMPLinkHarness(writeLength: writeLength)
      h.connect()
      h.install(Self.image)
      #expect(h.run(until: { Self.finished(h) }))
      let writes = try #require(h.central.transport(SMPLinkHarness.serial)?.writes)
      let sent = writes.reduce(0) { $0 + $1.count }
      let efficiency = Double(Self.image.count) / Double(sent)
      print("SMP upload at a write length of \(writeLength): \(writes.count) writes, image/sent = \(efficiency)")
      #expect(efficiency > 0.85)
    }
  }

  @Test func aSmallMTUStillUpdatesWithRequestsSplitAcrossWrites() throws {
    let h = SMPLinkHarness(writeLength: 20)
    h.connect()
    h.install(TestImages.image(bodySize: 3_000))
    #expect(h.run(until: { Self.finished(h) }))
    #expect(h.finishes == [nil])
    #expect(try #require(h.central.transport(SMPLinkHarness.serial)?.writes).allSatisfy { $0.count <= 20 })
  }

  @Test func aCancelMidUploadFinishesOnlyOnceTheDeviceStoppedTakingChunks() throws {
    let h = SMPLinkHarness()
    h.connect()
    h.install(Self.image)
    #expect(h.run(until: { (h.progress.last ?? 0) >= 0.3 }))
    h.cancel()
    #expect(h.run(until: { Self.finished(h) }))
    let error = try #require(h.finishes.first ?? nil)
    #expect(error.code == .canceled)
    let finishedAt = try #require(h.log.last { if case .link(.updateFinished) = $0.what { true } else { false } }?.time)
    let chunks = h.device.requests.filter { $0.group == 1 && $0.command == 1 }
    #expect(chunks.allSatisfy { $0.time < finishedAt }, "no chunk reaches the device after the finish")
    h.clock.advance(by: .seconds(60))
    #expect(h.device.requests.filter { $0.group == 1 && $0.command == 1 }.count == chunks.count)
    #expect(h.device.primary.hash == FakeSMPDevice.oldHash)
  }

  @Test func aDropAtFortyPercentEndsTheInstallSilentlyAndTheNextResumesFromTheDevicesOffset() throws {
    let h = SMPLinkHarness()
    h.device.dropAtFraction = 0.4
    h.connect()
    h.install(Self.image)
    #expect(h.run(until: { !h.disconnects.isEmpty }))
    #expect(h.disconnects == [.bluetoothSignalLost])
    h.clock.advance(by: .seconds(30))
    #expect(h.finishes.isEmpty, "a link loss ends the install without updateFinished")
    let before = h.device.requests.count
    h.connect()
    h.install(Self.image)
    #expect(h.run(until: { Self.finished(h) }))
    #expect(h.finishes == [nil])
    let resumed = h.device.requests.dropFirst(before).compactMap { $0.command == 1 && $0.group == 1 ? $0.offset : nil }
    #expect(resumed.first == 0, "the first chunk asks with the file's sha")
    #expect(resumed.dropFirst().allSatisfy { Double($0) >= 0.4 * Double(Self.image.count) })
  }

  @Test func aFailedConfirmRestartsTheReaderIntoItsOldImageAndFails() throws {
    let h = SMPLinkHarness()
    h.device.failConfirm = true
    h.connect()
    h.install(Self.image)
    #expect(h.run(until: { Self.finished(h) }))
    let error = try #require(h.finishes.first ?? nil)
    #expect(error.code == .readerSoftwareUpdateFailedReaderError)
    #expect(error.cause == .smp(rc: 32, group: 1))
    #expect(error.context["smp"] == "IMG_MGMT_ERR_IMAGE_CONFIRMATION_DENIED")
    #expect(h.device.resets == 2)
    #expect(h.device.primary.hash == FakeSMPDevice.oldHash && h.device.primary.confirmed)
    #expect(h.disconnects.isEmpty)
  }

  @Test func aReaderThatBootsItsOldImageFailsTheUpdate() throws {
    let h = SMPLinkHarness()
    h.device.bootsOldImage = true
    h.connect()
    h.install(Self.image)
    #expect(h.run(until: { Self.finished(h) }))
    #expect((h.finishes.first ?? nil)?.context["step"] == "verify")
    #expect(h.device.primary.hash == FakeSMPDevice.oldHash)
  }

  @Test func aReaderThatNeverComesBackIsReportedLostWithoutAFinish() {
    let h = SMPLinkHarness()
    h.device.bootTime = .seconds(600)
    h.connect()
    h.install(Self.image)
    #expect(h.run(until: { !h.disconnects.isEmpty }, limit: .seconds(300)))
    #expect(h.disconnects == [.poweredOff])
    #expect(h.finishes.isEmpty)
  }

  @Test func aRebootIsAnsweredBeforeTheRadioReportsTheLinkLossAsRequested() {
    let h = SMPLinkHarness()
    h.connect()
    h.reboot()
    #expect(h.run(until: { !h.disconnects.isEmpty }))
    #expect(
      h.events == [
        .radio(.didConnect(serialNumber: SMPLinkHarness.serial, info: ReaderInfo(deviceSoftwareVersion: "1.0.0"))),
        .link(.rebootResponse(serialNumber: SMPLinkHarness.serial, error: nil)),
        .radio(.didDisconnect(serialNumber: SMPLinkHarness.serial, reason: .rebootRequested)),
      ])
    #expect(h.device.resets == 1)
  }

  @Test func aRefusedRebootFailsWithTheResultCode() throws {
    let h = SMPLinkHarness()
    h.device.refusals = [0: [5: 10]]
    h.connect()
    h.reboot()
    #expect(h.run(until: { h.events.count == 2 }))
    guard case .link(.rebootResponse(_, let error?)) = h.events.last else { Issue.record("\(h.events)"); return }
    #expect(error.code == .rebootFailed && error.cause == .smp(rc: 10, group: 0))
    h.clock.advance(by: .seconds(10))
    #expect(h.device.resets == 0 && h.disconnects.isEmpty)
  }

  @Test func anAnswerWithAWrongSequenceNumberIsDroppedAndTheRequestRetried() {
    let h = SMPLinkHarness()
    h.connect()
    h.install(Self.image)
    h.clock.advance(by: .milliseconds(200))
    h.device.wrongSequenceCount = 1
    #expect(h.run(until: { Self.finished(h) }))
    #expect(h.finishes == [nil])
    #expect(h.logged.contains { $0.contains("not the request in flight") })
  }

  @Test func aMalformedAnswerFailsTheUpdate() throws {
    let h = SMPLinkHarness()
    h.device.malformedAnswer = (1, 1)
    h.connect()
    h.install(Self.image)
    #expect(h.run(until: { Self.finished(h) }))
    let error = try #require(h.finishes.first ?? nil)
    #expect(error.code == .readerSoftwareUpdateFailedReaderError)
    #expect(error.message.contains("malformed"))
    #expect(h.device.primary.hash == FakeSMPDevice.oldHash)
  }

  @Test func lateAnswersWithinTheTimeoutAreWaitedForAndLaterOnesFailTheUpdate() throws {
    let slow = SMPLinkHarness()
    slow.device.lateBy = .seconds(2)
    slow.connect()
    slow.install(TestImages.image(bodySize: 2_000))
    #expect(slow.run(until: { Self.finished(slow) }))
    #expect(slow.finishes == [nil])
    let silent = SMPLinkHarness()
    silent.device.lateBy = .seconds(8)
    silent.connect()
    silent.install(TestImages.image(bodySize: 2_000))
    #expect(silent.run(until: { Self.finished(silent) }))
    #expect((silent.finishes.first ?? nil)?.code == .readerSoftwareUpdateFailedInterrupted)
  }

  @Test func aRefusedUploadFailsWithTheGroupError() throws {
    let h = SMPLinkHarness()
    h.device.refusals = [1: [1: 27]]
    h.connect()
    h.install(Self.image)
    #expect(h.run(until: { Self.finished(h) }))
    let error = try #require(h.finishes.first ?? nil)
    #expect(error.cause == .smp(rc: 27, group: 1))
  }

  @Test func theSameScenarioGivesTheSameEventLog() {
    func run() -> String {
      let h = SMPLinkHarness()
      h.device.dropAtFraction = 0.5
      h.connect()
      h.install(Self.image)
      h.run(until: { !h.disconnects.isEmpty })
      h.connect()
      h.install(Self.image)
      h.run(until: { Self.finished(h) })
      return h.log.map { "\($0.time) \($0.what)" }.joined(separator: "\n")
    }
    #expect(run() == run())
  }

  @Test func aReaderTheBackendDoesNotKnowFailsAtOnce() {
    let h = SMPLinkHarness()
    h.onClock { [link = h.link] in link.reboot(serialNumber: "unknown") }
    guard case .link(.rebootResponse("unknown", let error?)) = h.events.first else {
      Issue.record("\(h.events)"); return
    }
    #expect(error.code == .rebootFailed)
  }
}
