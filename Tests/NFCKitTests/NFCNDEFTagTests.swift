import Dispatch
import Foundation
import NFCKit
import ReaderCore
import ReaderSimulator
import TestSupport
import Testing

/// A read-write session's tags on the simulated radio: connect, query, read, write, lock, and every
/// way a handle goes stale.
@Suite(.timeLimit(.minutes(2))) struct NFCNDEFTagTests {
  /// A read-write session polling with `tags` in the field; returns it once the tags are detected.
  private static func session(
    _ h: NFCHarness, presenting tags: [SimulatedNFCTag]
  ) -> (NFCNDEFReaderSession, TagDelegate) {
    let delegate = TagDelegate()
    let session = h.tagSession(delegate)
    for tag in tags { h.radio.present(tag) }
    session.begin()
    h.run(.seconds(1))
    return (session, delegate)
  }

  private static func connect(_ h: NFCHarness, _ session: NFCNDEFReaderSession, _ tag: NFCNDEFTag) -> NFCReaderError?? {
    let result = Box<NFCReaderError?>()
    session.connect(to: tag) { result.put(readerError($0)) }
    h.run(.seconds(1))
    return result.last
  }

  /// Reads `tag` through Core NFC's completion handler; the message in NFCKit's form.
  private static func read(_ h: NFCHarness, _ tag: NFCNDEFTag) -> (NDEFMessage?, NFCReaderError?)? {
    let result = Box<(NDEFMessage?, NFCReaderError?)>()
    tag.readNDEF { message, error in result.put((message.flatMap { try? NDEFMessage($0) }, readerError(error))) }
    h.run(.seconds(1))
    return result.last
  }

  private static func status(_ h: NFCHarness, _ tag: NFCNDEFTag) -> (NFCNDEFStatus, Int, NFCReaderError?)? {
    let result = Box<(NFCNDEFStatus, Int, NFCReaderError?)>()
    tag.queryNDEFStatus { result.put(($0, $1, readerError($2))) }
    h.run(.seconds(1))
    return result.last
  }

  private static func write(_ h: NFCHarness, _ tag: NFCNDEFTag, _ message: NDEFMessage) -> NFCReaderError?? {
    let result = Box<NFCReaderError?>()
    tag.writeNDEF(message) { result.put(readerError($0)) }
    h.run(.seconds(1))
    return result.last
  }

  @Test func sessionsMadeWithDelegatesOfAlternatingClassesEachKnowTheirKindFromTheStart() {
    let h = NFCHarness()
    let tags = TagDelegate()
    let reads = ReadDelegate()
    // The kind of the last delegate class asked about is kept: each change of class must be seen.
    for (index, tagDelegate) in [true, true, false, false, true, false, true].enumerated() {
      let session =
        tagDelegate
        ? NFCNDEFReaderSession(delegate: tags, invalidateAfterFirstRead: false, system: h.system)
        : NFCNDEFReaderSession(delegate: reads, invalidateAfterFirstRead: false, system: h.system)
      #expect(session.detectsTags == tagDelegate, "session \(index)")
    }
  }

  @Test func aTagDelegateMakesAReadWriteSessionThatReportsTagsAndNoMessages() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(h, presenting: [SimulatedNFCTag(name: "t", message: NFCHarness.hello)])
    #expect(session.detectsTags)
    #expect(delegate.recorded == [.didBecomeActive, .didDetectTags(1)])
    #expect(delegate.lastTag?.isAvailable == true)
    h.run(.seconds(30))
    #expect(session.isReady, "a read-write session does not end by itself before the time limit")
  }

  @Test func connectQueryReadWriteAndLockARoundTrip() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(h, presenting: [SimulatedNFCTag(name: "t", message: NFCHarness.hello)])
    guard let tag = delegate.lastTag else {
      Issue.record("no tag")
      return
    }
    #expect(Self.connect(h, session, tag) == .some(nil))
    #expect(Self.status(h, tag).map { [$0.0 == .readWrite, $0.1 == 496, $0.2 == nil] } == [true, true, true])
    #expect(Self.read(h, tag)?.0 == NFCHarness.hello)
    #expect(Self.write(h, tag, NFCHarness.poster) == .some(nil))
    #expect(h.radio.tag("t")?.ndefBytes == NFCHarness.poster.encoded(), "the simulated tag holds what was written")
    #expect(Self.read(h, tag)?.0 == NFCHarness.poster)
    let locked = Box<NFCReaderError?>()
    tag.writeLock { locked.put(readerError($0)) }
    h.run(.seconds(1))
    #expect(locked.all == [nil])
    #expect(Self.status(h, tag)?.0 == .readOnly)
    #expect(Self.write(h, tag, NFCHarness.hello)??.code == .ndefReaderSessionErrorTagNotWritable)
  }

  @Test func aMessageLargerThanTheTagFailsWithTagSizeTooSmallAndLeavesTheTagAlone() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(
      h, presenting: [SimulatedNFCTag(name: "small", message: NFCHarness.hello, capacity: 20)])
    guard let tag = delegate.lastTag else { return }
    _ = Self.connect(h, session, tag)
    let big = fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .text(String(repeating: "x", count: 40))) }
    #expect(Self.write(h, tag, big)??.code == .ndefReaderSessionErrorTagSizeTooSmall)
    #expect(h.radio.tag("small")?.ndefBytes == NFCHarness.hello.encoded())
  }

  @Test func aBlankFormattedTagIsReadWriteButHoldsNoMessage() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(h, presenting: [.blank(name: "new")])
    guard let tag = delegate.lastTag else { return }
    _ = Self.connect(h, session, tag)
    #expect(Self.status(h, tag)?.0 == .readWrite)
    #expect(Self.read(h, tag)?.1?.code == .ndefReaderSessionErrorZeroLengthMessage)
    #expect(Self.write(h, tag, NFCHarness.hello) == .some(nil))
    #expect(Self.read(h, tag)?.0 == NFCHarness.hello)
  }

  @Test func aTagThatIsNotNDEFFormattedReportsNotSupportedAndItsReadFails() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(h, presenting: [.unformatted(name: "card")])
    guard let tag = delegate.lastTag else { return }
    _ = Self.connect(h, session, tag)
    #expect(Self.status(h, tag)?.0 == .notSupported)
    let error = Self.read(h, tag)?.1
    #expect(error?.code == .readerTransceiveErrorTagResponseError)
    #expect(error?.context["reason"] == "notNDEFFormatted")
  }

  @Test func aMalformedMessageIsATypedErrorWithItsByteOffset() {
    let h = NFCHarness()
    let bytes: [UInt8] = [0xD1, 0x01, 0x08, 0x54, 0x02, 0x65, 0x6E, 0x68, 0x69]  // PAYLOAD_LENGTH 8, 5 bytes follow
    let (session, delegate) = Self.session(h, presenting: [SimulatedNFCTag(name: "bad", ndef: bytes)])
    guard let tag = delegate.lastTag else { return }
    _ = Self.connect(h, session, tag)
    let error = Self.read(h, tag)?.1
    #expect(error?.code == .readerTransceiveErrorTagResponseError)
    #expect(error?.ndefError?.code == .lengthOutOfBounds)
    #expect(error?.ndefError?.offset == 2)
    #expect(error?.context["offset"] == "2")
  }

  @Test func aTagRemovedMidReadFailsTheReadWithConnectionLostAndBecomesUnavailable() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(h, presenting: [SimulatedNFCTag(name: "t", message: NFCHarness.hello)])
    guard let tag = delegate.lastTag else { return }
    _ = Self.connect(h, session, tag)
    h.radio.interruptNextTagCommand()
    let read = Self.read(h, tag)
    #expect(read?.0 == nil)
    #expect(read?.1?.code == .readerTransceiveErrorTagConnectionLost)
    #expect(!tag.isAvailable)
    #expect(Self.read(h, tag)?.1?.code == .readerTransceiveErrorTagConnectionLost)
    #expect(h.radio.tagsInField.isEmpty)
  }

  @Test func aTagThatLeftTheFieldIsUnavailableInsideTheCompletionThatReportsItsLoss() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(h, presenting: [SimulatedNFCTag(name: "t", message: NFCHarness.hello)])
    guard let tag = delegate.lastTag else { return }
    _ = Self.connect(h, session, tag)
    h.radio.interruptNextTagCommand()
    let seen = Box<(available: Bool, code: NFCReaderError.Code?)>()
    tag.readNDEF { _, error in seen.put((tag.isAvailable, readerError(error)?.code)) }
    h.run(.seconds(1))
    #expect(seen.all.map(\.code) == [.readerTransceiveErrorTagConnectionLost])
    #expect(seen.all.map(\.available) == [false], "the tag says it is gone when the app hears it is")
  }

  @Test func aTagTakenAwayDuringAWriteIsUnavailableInsideTheWritesCompletion() {
    let h = NFCHarness(timing: SimulatedNFCRadio.Timing(command: .milliseconds(200)))
    let (session, delegate) = Self.session(h, presenting: [SimulatedNFCTag(name: "t", message: NFCHarness.hello)])
    guard let tag = delegate.lastTag else { return }
    _ = Self.connect(h, session, tag)
    let seen = Box<(available: Bool, code: NFCReaderError.Code?)>()
    tag.writeNDEF(NFCNDEFMessage(NFCHarness.poster)) { error in seen.put((tag.isAvailable, readerError(error)?.code)) }
    h.clock.advance(by: .milliseconds(50))
    h.radio.remove("t")
    h.run(.seconds(1))
    #expect(seen.all.map(\.code) == [.readerTransceiveErrorTagConnectionLost])
    #expect(seen.all.map(\.available) == [false])
    #expect(delegate.recorded == [.didBecomeActive, .didDetectTags(1)], "nothing else reaches the delegate")
  }

  @Test func coreNFCsMessageIsWrittenWithItsPayloadsChunkSizeAndReadBackJoined() throws {
    let h = NFCHarness()
    let (session, delegate) = Self.session(h, presenting: [.blank(name: "t")])
    guard let tag = delegate.lastTag else { return }
    _ = Self.connect(h, session, tag)
    let data = Data((0..<40).map { UInt8($0) })
    let message = NFCNDEFMessage(records: [
      NFCNDEFPayload(format: .media, type: Data("a/b".utf8), identifier: Data(), payload: data, chunkSize: 16)
    ])
    let written = Box<NFCReaderError?>()
    tag.writeNDEF(message) { written.put(readerError($0)) }
    h.run(.seconds(1))
    #expect(written.all == [nil])
    let stored = try #require(h.radio.tag("t")?.ndefBytes)
    #expect(stored.count == message.length)
    #expect(stored.first.map { $0 & 0x20 } == 0x20, "the first record is a chunk (CF set)")
    let read = Box<NFCNDEFMessage?>()
    tag.readNDEF { message, _ in read.put(message) }
    h.run(.seconds(1))
    let readBack = read.last ?? nil
    #expect(readBack?.records.first?.payload == data)
    #expect(readBack == message)
  }

  @Test func aCoreNFCMessageThatBreaksAnNDEFRuleIsNotWrittenAndSaysWhy() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(h, presenting: [SimulatedNFCTag(name: "t", message: NFCHarness.hello)])
    guard let tag = delegate.lastTag else { return }
    _ = Self.connect(h, session, tag)
    let bad = NFCNDEFMessage(records: [
      NFCNDEFPayload(format: .empty, type: Data("x".utf8), identifier: Data(), payload: Data())
    ])
    let written = Box<NFCReaderError?>()
    tag.writeNDEF(bad) { written.put(readerError($0)) }
    h.run(.seconds(1))
    let error = written.last ?? nil
    #expect(error?.code == .readerErrorInvalidParameter)
    #expect(error?.ndefError?.code == .invalidRecord)
    #expect(error?.context["field"] == "type")
    #expect(error?.context["record"] == "0")
    #expect(h.radio.tag("t")?.ndefBytes == NFCHarness.hello.encoded(), "the tag is left alone")
  }

  @Test func restartPollingMakesOldHandlesStaleAndReportsTheTagsAgain() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(h, presenting: [SimulatedNFCTag(name: "t", message: NFCHarness.hello)])
    guard let old = delegate.lastTag else { return }
    _ = Self.connect(h, session, old)
    session.restartPolling()
    h.run(.seconds(1))
    #expect(!old.isAvailable)
    #expect(delegate.recorded == [.didBecomeActive, .didDetectTags(1), .didDetectTags(1)])
    let stale = Self.read(h, old)?.1
    #expect(stale?.code == .readerTransceiveErrorTagConnectionLost)
    #expect(stale?.context["reason"] == "pollingRestarted")
    guard let fresh = delegate.lastTag, fresh !== old else { return }
    #expect(Self.connect(h, session, fresh) == .some(nil))
    #expect(Self.read(h, fresh)?.0 == NFCHarness.hello)
  }

  @Test func handlesOfAnInvalidatedSessionFailWithSessionInvalidated() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(h, presenting: [SimulatedNFCTag(name: "t", message: NFCHarness.hello)])
    guard let tag = delegate.lastTag else { return }
    _ = Self.connect(h, session, tag)
    session.invalidate()
    h.run(.seconds(1))
    #expect(!tag.isAvailable)
    let calls = delegate.recorded
    #expect(Self.read(h, tag)?.1?.code == .readerTransceiveErrorSessionInvalidated)
    #expect(Self.status(h, tag)?.2?.code == .readerTransceiveErrorSessionInvalidated)
    #expect(Self.write(h, tag, NFCHarness.hello)??.code == .readerTransceiveErrorSessionInvalidated)
    #expect(Self.connect(h, session, tag)??.code == .readerTransceiveErrorSessionInvalidated)
    #expect(delegate.recorded == calls, "completions answer, the delegate hears nothing")
  }

  @Test func aCommandInFlightWhenTheSessionEndsCompletesWithSessionInvalidatedBeforeDidInvalidate() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(h, presenting: [SimulatedNFCTag(name: "t", message: NFCHarness.hello)])
    guard let tag = delegate.lastTag else { return }
    _ = Self.connect(h, session, tag)
    let order = Locked<[String]>([])
    let observer = h.system.addEventObserver { event in
      if case .didInvalidate = event.kind { order.withLock { $0.append("didInvalidate") } }
    }
    tag.readNDEF { _, error in
      order.withLock { $0.append("read:\(readerError(error).map { "\($0.code)" } ?? "ok")") }
    }
    session.invalidate()
    h.run(.seconds(1))
    h.system.removeEventObserver(observer)
    #expect(order.withLock { $0 } == ["read:readerTransceiveErrorSessionInvalidated", "didInvalidate"])
  }

  @Test func aTagGivenToAnotherSessionIsAnInvalidParameter() {
    let h = NFCHarness()
    let (first, delegate) = Self.session(h, presenting: [SimulatedNFCTag(name: "t", message: NFCHarness.hello)])
    guard let tag = delegate.lastTag else { return }
    let second = h.tagSession(TagDelegate())
    #expect(Self.connect(h, second, tag)??.code == .readerErrorInvalidParameter)
    #expect(Self.connect(h, first, tag) == .some(nil))
  }

  @Test func aCommandOnATagNotConnectedFailsWithTagNotConnected() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(
      h,
      presenting: [
        SimulatedNFCTag(name: "a", message: NFCHarness.hello), SimulatedNFCTag(name: "b", message: NFCHarness.poster),
      ])
    let tags = delegate.tags.withLock { $0 }
    #expect(tags.count == 2)
    guard tags.count == 2 else { return }
    #expect(Self.read(h, tags[0])?.1?.code == .readerTransceiveErrorTagNotConnected)
    _ = Self.connect(h, session, tags[0])
    _ = Self.connect(h, session, tags[1])
    #expect(Self.read(h, tags[0])?.1?.code == .readerTransceiveErrorTagNotConnected, "connecting b released a")
    #expect(Self.read(h, tags[1])?.0 == NFCHarness.poster)
  }

  @Test func completionHandlersRunOnTheSessionsQueue() {
    let h = NFCHarness()
    let (session, delegate) = Self.session(h, presenting: [SimulatedNFCTag(name: "t", message: NFCHarness.hello)])
    guard let tag = delegate.lastTag else { return }
    let queue = session.sessionQueue
    queue.setSpecific(key: queueKey, value: 42)
    let onQueue = Box<Bool>()
    session.connect(to: tag) { _ in onQueue.put(DispatchQueue.getSpecific(key: queueKey) == 42) }
    tag.readNDEF { _, _ in onQueue.put(DispatchQueue.getSpecific(key: queueKey) == 42) }
    h.run(.seconds(1))
    #expect(onQueue.all == [true, true])
  }

  // MARK: Async form

  @Test func theAsyncFormReadsAndWritesThroughTheSameRules() async throws {
    // The clock follows real time here (the async calls need something to move it), so the system's
    // time limit is set far away: a loaded machine must not turn this into a timeout test.
    let h = NFCHarness(timeout: .seconds(24 * 3600))
    let session = NFCNDEFReaderSession(invalidateAfterFirstRead: false, detectsTags: true, system: h.system)
    let events = session.events()
    h.radio.present(SimulatedNFCTag(name: "t", message: NFCHarness.hello))
    session.begin()
    let driver = RealTimeDriver(clock: h.clock, speed: 50)
    driver.start()
    var tag: NFCNDEFTag?
    var names: [String] = []
    for await event in events {
      names.append(event.name)
      if case .didDetectTags(let tags) = event.kind {
        tag = tags.first
        break
      }
    }
    guard let tag else {
      await driver.stop()
      Issue.record("no tag in \(names)")
      return
    }
    try await session.connect(to: tag)
    #expect(try await NDEFMessage(tag.readNDEF()) == NFCHarness.hello)
    try await tag.writeNDEF(NFCHarness.poster)
    #expect(try await tag.queryNDEFStatus() == (.readWrite, 496))
    #expect(try await NDEFMessage(tag.readNDEF()) == NFCHarness.poster)
    try await tag.writeLock()
    let notWritable = await #expect(throws: NFCReaderError.self) { try await tag.writeNDEF(NFCHarness.hello) }
    #expect(notWritable?.code == .ndefReaderSessionErrorTagNotWritable)
    h.radio.add(.blank(name: "t"))  // The same tag, wiped: a read now fails with the blank-tag code.
    let blank = await #expect(throws: NFCReaderError.self) { try await tag.readNDEF() }
    #expect(blank?.code == .ndefReaderSessionErrorZeroLengthMessage)
    session.invalidate()
    var rest: [String] = []
    for await event in session.events() { rest.append(event.name) }
    var stale: NFCReaderError?
    do {
      _ = try await tag.readNDEF()
    } catch {
      stale = error
    }
    await driver.stop()
    #expect(names == ["didBecomeActive", "didDetectTags"])
    #expect(rest.isEmpty || rest == ["didInvalidateWithError"])
    #expect(!session.isReady)
    #expect(stale?.code == .readerTransceiveErrorSessionInvalidated)
  }

  @Test func theEventStreamOfASessionThatAlreadyEndedFinishesAtOnce() async {
    let h = NFCHarness()
    let session = NFCNDEFReaderSession(invalidateAfterFirstRead: true, system: h.system)
    let events = session.events()
    session.begin()
    h.run(.seconds(1))
    session.invalidate()
    h.run(.seconds(1))
    var names: [String] = []
    for await event in events { names.append(event.name) }
    #expect(names == ["didBecomeActive", "didInvalidateWithError"])
    var late = 0
    for await _ in session.events() { late += 1 }
    #expect(late == 0)
  }
}
