import NFCKit
import PCSCKit
import ReaderCore
import ReaderSimulator
import Testing

/// Core NFC sessions on the PC/SC radio, over a simulated PC/SC service: the same session code as on the
/// simulator, reading and writing Type 4 and Type 2 tags through APDUs.
@Suite struct PCSCNFCRadioTests {
  @Test func aReadOnlySessionReadsAType4TagAndEndsAfterItsFirstRead() {
    let h = PCSCHarness()
    h.readerWithTag()
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(1))
    #expect(
      delegate.recorded == [
        .didBecomeActive, .didDetectNDEFs([PCSCHarness.hello]),
        .didInvalidate(.readerSessionInvalidationErrorFirstNDEFTagRead),
      ])
  }

  @Test func aType2TagIsReadThroughTheStorageCardCommands() {
    let h = PCSCHarness()
    h.service.plug(PCSCHarness.reader)
    h.service.present(SimulatedType2Tag.ntag213(message: PCSCHarness.poster.encoded()), in: PCSCHarness.reader)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(1))
    #expect(delegate.recorded.contains(.didDetectNDEFs([PCSCHarness.poster])))
  }

  @Test func aReadWriteSessionWritesReadsBackLocksAndSeesTheTagReadOnly() {
    let h = PCSCHarness()
    h.service.plug(PCSCHarness.reader)
    h.service.present(SimulatedType2Tag.ntag213(message: []), in: PCSCHarness.reader)
    let delegate = TagDelegate()
    let steps = Box<String>()
    delegate.onTags.withLock {
      $0 = { session, tags in
        let tag = tags[0]
        session.connect(to: tag) { error in
          steps.put("connect \(error.map { "\(($0 as? NFCReaderError)?.code.description ?? "\($0)")" } ?? "ok")")
          tag.writeNDEF(PCSCHarness.poster) { error in
            steps.put("write \(error.map { "\(($0 as? NFCReaderError)?.code.description ?? "\($0)")" } ?? "ok")")
            tag.readNDEF { message, _ in
              steps.put("read \(message == NFCNDEFMessage(PCSCHarness.poster))")
              tag.writeLock { error in
                steps.put("lock \(error.map { "\(($0 as? NFCReaderError)?.code.description ?? "\($0)")" } ?? "ok")")
                tag.queryNDEFStatus { status, capacity, _ in
                  steps.put("status \(status) \(capacity)")
                  tag.writeNDEF(PCSCHarness.hello) { error in steps.put("write \(error.map { "\(($0 as? NFCReaderError)?.code.description ?? "\($0)")" } ?? "ok")") }
                }
              }
            }
          }
        }
      }
    }
    h.tagSession(delegate).begin()
    h.run(.seconds(2))
    #expect(
      steps.all == [
        "connect ok", "write ok", "read true", "lock ok", "status readOnly 142",
        "write ndefReaderSessionErrorTagNotWritable",
      ])
  }

  @Test func aBlankTagGivesNoMessageAndAnUnformattedOneIsNotNDEF() {
    let h = PCSCHarness()
    h.readerWithTag(nil)
    let delegate = ReadDelegate()
    h.readSession(delegate, firstReadOnly: false).begin()
    h.run(.seconds(1))
    var unformatted = SimulatedType4Tag(message: [])
    unformatted.refusals[0xA4] = 0x6A82
    h.service.present(unformatted, in: PCSCHarness.reader)
    h.run(.seconds(1))
    #expect(
      delegate.recorded.filter { if case .didFailToReadNDEF = $0 { true } else { false } } == [
        .didFailToReadNDEF(.ndefReaderSessionErrorZeroLengthMessage),
        .didFailToReadNDEF(.readerTransceiveErrorTagResponseError),
      ])
    #expect(delegate.errors.withLock { $0.last?.context["reason"] } == "notNDEFFormatted")
  }

  @Test func aStatusWordOtherThan9000IsTheErrorsCauseAndContext() {
    let h = PCSCHarness()
    var tag = SimulatedType4Tag(message: PCSCHarness.hello.encoded())
    tag.refusals[0xB0] = 0x6F00
    h.service.plug(PCSCHarness.reader)
    h.service.present(tag, in: PCSCHarness.reader)
    let delegate = ReadDelegate()
    h.readSession(delegate, firstReadOnly: false).begin()
    h.run(.seconds(1))
    let error = delegate.errors.withLock { $0.first }
    #expect(error?.code == .readerTransceiveErrorTagResponseError)
    #expect(error?.cause == .statusWord(0x6F00))
    #expect(error?.context["statusWord"] == "6F00")
    #expect(error?.context["step"] == "READ BINARY capability container")
  }

  @Test func withoutAReaderOrWithoutPcscdReadingIsUnavailableAndASessionEndsWithUnsupportedFeature() {
    let h = PCSCHarness()
    #expect(!h.system.readingAvailable)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(1))
    #expect(delegate.recorded == [.didInvalidate(.readerErrorUnsupportedFeature)])
    h.service.plug(PCSCHarness.reader)
    #expect(h.system.readingAvailable)
    h.service.stop()
    #expect(!h.system.readingAvailable)
    let configured = PCSCHarness(configuration: PCSCHarness.configuration(reader: "ACS ACR122U"))
    configured.service.plug(PCSCHarness.reader)
    #expect(!configured.system.readingAvailable)
  }

  @Test func aReaderPluggedInWhileTheSessionWaitsIsPolledToo() {
    let h = PCSCHarness()
    h.service.plug(PCSCHarness.reader)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(3))
    #expect(delegate.recorded == [.didBecomeActive])
    h.readerWithTag(PCSCHarness.poster, name: PCSCHarness.second)
    h.run(.milliseconds(100))
    #expect(delegate.recorded.last == .didInvalidate(.readerSessionInvalidationErrorFirstNDEFTagRead))
    #expect(delegate.recorded.contains(.didDetectNDEFs([PCSCHarness.poster])))
  }

  @Test func anUnpluggedReadersTagGoesAndTheSessionGoesOnWithTheOtherReaders() {
    let h = PCSCHarness()
    h.readerWithTag()
    h.service.plug(PCSCHarness.second)
    let delegate = TagDelegate()
    h.tagSession(delegate).begin()
    h.run(.seconds(1))
    let first = delegate.lastTag
    #expect(first?.isAvailable == true)
    h.service.unplug(PCSCHarness.reader)
    h.run(.milliseconds(100))
    #expect(first?.isAvailable == false)
    h.service.present(SimulatedType4Tag(message: PCSCHarness.poster.encoded()), in: PCSCHarness.second)
    h.run(.milliseconds(100))
    #expect(delegate.recorded == [.didBecomeActive, .didDetectTags(1), .didDetectTags(1)])
    #expect(delegate.lastTag?.isAvailable == true)
  }

  @Test func everyReaderIsPolledUnlessTheConfigurationNamesOne() {
    for (reader, expected) in [(String?.none, 2), (PCSCHarness.second, 1)] {
      let h = PCSCHarness(configuration: PCSCHarness.configuration(reader: reader))
      h.readerWithTag()
      h.readerWithTag(PCSCHarness.poster, name: PCSCHarness.second)
      let delegate = TagDelegate()
      h.tagSession(delegate).begin()
      h.run(.seconds(1))
      #expect(delegate.tags.withLock { $0.count } == expected, "reader \(reader ?? "any")")
    }
  }

  @Test func pcscdStoppingEndsTheSessionAsTerminatedWithThePCSCCode() {
    let h = PCSCHarness()
    h.service.plug(PCSCHarness.reader)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(1))
    h.service.stop()
    h.run(.milliseconds(100))
    #expect(
      delegate.recorded == [
        .didBecomeActive, .didInvalidate(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly),
      ])
    let error = delegate.errors.withLock { $0.last }
    #expect(error?.cause == .pcsc(PCSCCode.commError.rawValue))
    #expect(error?.context["reason"] == "serviceStopped")
  }

  @Test func aTagHeldByAnotherProgramPastTheBusyTimeoutEndsTheSessionAsBusy() {
    let h = PCSCHarness()
    h.readerWithTag()
    h.service.hold(PCSCHarness.reader, byAnotherProgram: true)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.milliseconds(1_900))
    #expect(delegate.recorded == [.didBecomeActive])
    h.run(.milliseconds(200))
    #expect(delegate.recorded.last == .didInvalidate(.readerSessionInvalidationErrorSystemIsBusy))
    #expect(delegate.errors.withLock { $0.last?.cause } == .pcsc(PCSCCode.sharingViolation.rawValue))
  }

  @Test func aTagGivenBackBeforeTheBusyTimeoutIsRead() {
    let h = PCSCHarness()
    h.readerWithTag()
    h.service.hold(PCSCHarness.reader, byAnotherProgram: true)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(1))
    h.service.hold(PCSCHarness.reader, byAnotherProgram: false)
    h.run(.seconds(3))
    #expect(delegate.recorded.last == .didInvalidate(.readerSessionInvalidationErrorFirstNDEFTagRead))
  }

  @Test func invalidateCancelsTheBlockedWaitAtOnce() {
    let h = PCSCHarness()
    h.service.plug(PCSCHarness.reader)
    let delegate = ReadDelegate()
    let session = h.readSession(delegate)
    session.begin()
    h.run(.milliseconds(500))
    #expect(h.service.isWaiting)
    session.invalidate()
    h.clock.runUntilIdle()
    #expect(!h.service.isWaiting)
    #expect(h.service.calls.last == "cancelWait")
    #expect(delegate.recorded.last == .didInvalidate(.readerSessionInvalidationErrorUserCanceled))
  }

  @Test func theTimeLimitIsTheConfigurations() {
    let h = PCSCHarness(configuration: PCSCHarness.configuration(timeout: .seconds(5)))
    h.service.plug(PCSCHarness.reader)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.milliseconds(4_999))
    #expect(delegate.recorded == [.didBecomeActive])
    h.run(.milliseconds(1))
    #expect(delegate.recorded.last == .didInvalidate(.readerSessionInvalidationErrorSessionTimeout))
  }

  @Test func aTagThatLeavesMidReadFailsItsReadAndIsReadWhenPresentedAgain() {
    let h = PCSCHarness()
    h.readerWithTag()
    h.service.cutNextCommand(in: PCSCHarness.reader)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.seconds(1))
    #expect(delegate.recorded == [.didBecomeActive, .didFailToReadNDEF(.readerTransceiveErrorTagConnectionLost)])
    h.service.present(SimulatedType4Tag(message: PCSCHarness.hello.encoded()), in: PCSCHarness.reader)
    h.run(.seconds(1))
    #expect(delegate.recorded.last == .didInvalidate(.readerSessionInvalidationErrorFirstNDEFTagRead))
  }

  @Test func aTagThatStopsAnsweringFailsAfterTheCommandTimeoutAndTheNextTagIsRead() {
    let h = PCSCHarness()
    h.readerWithTag()
    h.service.stall(PCSCHarness.reader)
    let delegate = ReadDelegate()
    h.readSession(delegate).begin()
    h.run(.milliseconds(1_900))
    #expect(delegate.recorded == [.didBecomeActive])
    h.run(.milliseconds(200))
    #expect(delegate.recorded == [.didBecomeActive, .didFailToReadNDEF(.readerTransceiveErrorTagConnectionLost)])
    #expect(delegate.errors.withLock { $0.last?.context["reason"] } == "tagStoppedAnswering")
    #expect(h.service.calls.contains("abandonCardLane"))
    h.service.present(SimulatedType2Tag.ntag213(message: PCSCHarness.poster.encoded()), in: PCSCHarness.reader)
    h.run(.seconds(1))
    #expect(delegate.recorded.last == .didInvalidate(.readerSessionInvalidationErrorFirstNDEFTagRead))
  }
}
