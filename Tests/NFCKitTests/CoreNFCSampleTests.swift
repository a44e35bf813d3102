import Dispatch
import Foundation
import NFCKit
import ReaderSimulator
import Testing

// Apple's "Building an NFC Tag-Reader App" and "Creating NFC Tags from your iPhone" samples in Swift 6
// language mode, with `import CoreNFC` changed to `import NFCKit` and UIKit's view controllers replaced
// by a plain main-actor class. As with Core NFC in Swift 6, a main-actor view controller adopts the
// delegate with `@preconcurrency` and asks for its callbacks on the main queue. The sessions run on a
// simulated NFC device (`system:`). The same samples in Swift 5 mode are in `Tests/NFCKitSwift5Tests`.

@MainActor class NFCSampleViewController {}

/// The reader sample: a read-only session; the delegate has no `didDetect tags`.
final class TagReaderViewController: NFCSampleViewController, @preconcurrency NFCNDEFReaderSessionDelegate {
  var detectedMessages = [NFCNDEFMessage]()
  var session: NFCNDEFReaderSession?
  var alerts: [String] = []
  var active = false

  func beginScanning(on system: NFCReaderSystem) {
    guard system.readingAvailable else { return }
    session = NFCNDEFReaderSession(delegate: self, queue: .main, invalidateAfterFirstRead: false, system: system)
    session?.alertMessage = "Hold your iPhone near the item to learn more about it."
    session?.begin()
  }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    if let readerError = error as? NFCReaderError,
      readerError.code != .readerSessionInvalidationErrorFirstNDEFTagRead,
      readerError.code != .readerSessionInvalidationErrorUserCanceled
    {
      alerts.append("Session Invalidated: \(readerError.code)")
    }
    self.session = nil
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
    detectedMessages.append(contentsOf: messages)
  }

  func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) { active = true }
}

/// The writer sample: a read-write session, found by its `didDetect tags` method alone.
final class TagWriterViewController: NFCSampleViewController, @preconcurrency NFCNDEFReaderSessionDelegate {
  var session: NFCNDEFReaderSession?
  var log: [String] = []
  let message = NFCNDEFMessage(records: [
    NFCNDEFPayload.wellKnownTypeURIPayload(url: URL(string: "https://example.com/item/42")!)!,
    NFCNDEFPayload.wellKnownTypeTextPayload(string: "Shelf 3", locale: Locale(identifier: "en_GB"))!,
  ])

  func beginWrite(on system: NFCReaderSystem) {
    session = NFCNDEFReaderSession(delegate: self, queue: .main, invalidateAfterFirstRead: false, system: system)
    session?.begin()
  }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    log.append("invalidated: \((error as? NFCReaderError)?.code.description ?? "\(error)")")
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
    log.append("didDetectNDEFs")
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
    guard let tag = tags.first else { return }
    log.append("didDetect \(tags.count) tag")
    let message = self.message
    session.connect(to: tag) { (error: (any Error)?) in
      if error != nil {
        session.invalidate(errorMessage: "Unable to connect to tag.")
        return
      }
      tag.queryNDEFStatus { (status: NFCNDEFStatus, capacity: Int, error: (any Error)?) in
        guard error == nil, status == .readWrite, message.length <= capacity else {
          session.invalidate(errorMessage: "This tag cannot be written.")
          return
        }
        tag.writeNDEF(message) { (error: (any Error)?) in
          tag.readNDEF { (readBack: NFCNDEFMessage?, error: (any Error)?) in
            let same = readBack == message
            DispatchQueue.main.async { self.log.append(same ? "wrote and read back" : "read back another message") }
            session.alertMessage = "Tag written."
            session.invalidate()
          }
        }
      }
    }
  }
}

@Suite(.timeLimit(.minutes(1))) struct CoreNFCSampleTests {
  @MainActor
  @Test func theReaderSampleHearsCoreNFCsMessagesOnTheMainQueue() throws {
    let (system, radio) = NFCReaderSystem.simulated(seed: 5)
    let screen = TagReaderViewController()
    screen.beginScanning(on: system)
    let menu = NDEFMessage(try .uri("https://example.com/menu"), try .text("Today's menu"))
    radio.present(SimulatedNFCTag(name: "menu", message: menu))
    radio.clock.advance(by: .seconds(2))
    #expect(screen.active)
    #expect(screen.detectedMessages.count == 1)
    let records = screen.detectedMessages.first?.records ?? []
    #expect(records.first?.wellKnownTypeURIPayload()?.absoluteString == "https://example.com/menu")
    #expect(records.last?.wellKnownTypeTextPayload().0 == "Today's menu")
    #expect(try screen.detectedMessages.first.map { try NDEFMessage($0) } == menu, "NFCKit's message, as read")
    #expect(screen.session?.detectsTags == false, "a delegate without didDetect tags reads messages")
    screen.session?.invalidate()
    radio.clock.advance(by: .seconds(1))
    #expect(screen.session == nil)
    #expect(screen.alerts.isEmpty)
  }

  @MainActor
  @Test func theWriterSamplesDidDetectTagsIsCalledWithoutTheTagDelegateProtocol() async {
    let (system, radio) = NFCReaderSystem.simulated(seed: 6)
    let screen = TagWriterViewController()
    screen.beginWrite(on: system)
    radio.present(SimulatedNFCTag.blank(name: "label"))
    radio.clock.advance(by: .seconds(5))
    for _ in 0..<10_000 where screen.log.count < 3 { await Task.yield() }  // The sample hops to the main queue.
    #expect(screen.session?.detectsTags == true)
    #expect(
      screen.log.sorted() == [
        "didDetect 1 tag", "invalidated: readerSessionInvalidationErrorUserCanceled", "wrote and read back",
      ])
    let onTag = radio.tag("label")?.ndefBytes ?? []
    #expect((try? NDEFMessage(decoding: onTag)).map(NFCNDEFMessage.init) == screen.message)
  }
}
