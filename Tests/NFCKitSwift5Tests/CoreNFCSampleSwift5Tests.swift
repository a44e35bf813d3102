import Dispatch
import Foundation
import NFCKit
import ReaderSimulator
import Testing

// Apple's "Building an NFC Tag-Reader App" and "Creating NFC Tags from your iPhone" samples as Core NFC
// apps write them, in Swift 5 language mode and spelled as apps spell them (`Error?`), with
// `import CoreNFC` changed to `import NFCKit` and UIKit's view controllers replaced by a plain main-actor
// class. Two changes only: the sessions run on a simulated NFC device (`system:`), where the samples
// use the device's own, and `NFCNDEFReaderSession.readingAvailable` is asked of that device.

@MainActor class SampleTableViewController {}

/// The reader sample's list of messages: a read-only session, and the way it shows a payload.
final class MessagesTableViewController: SampleTableViewController, NFCNDEFReaderSessionDelegate {
  var detectedMessages = [NFCNDEFMessage]()
  var session: NFCNDEFReaderSession?
  var alerts: [String] = []
  var active = false

  func beginScanning(on system: NFCReaderSystem) {
    guard system.readingAvailable else {
      alerts.append("Scanning Not Supported")
      return
    }
    session = NFCNDEFReaderSession(delegate: self, queue: nil, invalidateAfterFirstRead: false, system: system)
    session?.alertMessage = "Hold your iPhone near the item to learn more about it."
    session?.begin()
  }

  /// The sample's button, on the device's own system (compiled, not run here).
  func beginScanning() {
    guard NFCNDEFReaderSession.readingAvailable else { return }
    session = NFCNDEFReaderSession(delegate: self, queue: nil, invalidateAfterFirstRead: false)
    session?.begin()
  }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: Error) {
    if let readerError = error as? NFCReaderError {
      if (readerError.code != .readerSessionInvalidationErrorFirstNDEFTagRead)
        && (readerError.code != .readerSessionInvalidationErrorUserCanceled)
      {
        alerts.append("Session Invalidated: \(error.localizedDescription)")
      }
    }
    self.session = nil
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
    DispatchQueue.main.async {
      self.detectedMessages.append(contentsOf: messages)
    }
  }

  func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) { active = true }

  /// The payload list's text for one record.
  static func describe(_ payload: NFCNDEFPayload) -> String {
    switch payload.typeNameFormat {
    case .nfcWellKnown:
      if let type = String(data: payload.type, encoding: .utf8) {
        if let url = payload.wellKnownTypeURIPayload() {
          return "\(type): \(url.absoluteString)"
        }
        let (text, locale) = payload.wellKnownTypeTextPayload()
        if let text = text {
          return "\(type): \(text) (\(locale?.identifier ?? "?"))"
        }
        return "NFC Well Known type: \(type)"
      }
      return "Invalid data"
    case .absoluteURI:
      return String(data: payload.payload, encoding: .utf8) ?? "Invalid data"
    case .media:
      return "Media type: " + (String(data: payload.type, encoding: .utf8) ?? "?")
    case .nfcExternal:
      return "NFC External type"
    case .unknown:
      return "Unknown type"
    case .unchanged:
      return "Unchanged type"
    case .empty:
      return "Empty payload"
    @unknown default:
      return "Invalid data"
    }
  }
}

/// The writer sample: a read-write session, found by its `didDetect tags` method alone.
final class WriterViewController: SampleTableViewController, NFCNDEFReaderSessionDelegate {
  var session: NFCNDEFReaderSession?
  var message = NFCNDEFMessage(records: [])
  var log: [String] = []

  func beginWrite(on system: NFCReaderSystem) {
    let uri = NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://example.com/item/42")!
    let note = NFCNDEFPayload.wellKnownTypeTextPayload(string: "Shelf 3", locale: Locale(identifier: "en"))!
    let data = "{\"id\":42}".data(using: .utf8)!
    let json = NFCNDEFPayload(
      format: .media, type: "application/json".data(using: .utf8)!, identifier: Data(), payload: data)
    message = NFCNDEFMessage(records: [uri, note, json])
    session = NFCNDEFReaderSession(delegate: self, queue: nil, invalidateAfterFirstRead: true, system: system)
    session?.alertMessage = "Hold your iPhone near an NDEF tag to write the message."
    session?.begin()
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
    log.append("didDetectNDEFs")
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
    if tags.count > 1 {
      let retryInterval = DispatchTimeInterval.milliseconds(500)
      session.alertMessage = "More than 1 tag is detected, please remove all tags and try again."
      DispatchQueue.global().asyncAfter(deadline: .now() + retryInterval, execute: { session.restartPolling() })
      return
    }
    let tag = tags.first!
    log.append("didDetect \(tags.count) tag, available: \(tag.isAvailable)")
    // Core NFC's completion handlers are `@Sendable` and run on the session's queue: what they need of
    // the view controller is taken first, and what they tell it goes through the main queue.
    let message = self.message
    session.connect(
      to: tag,
      completionHandler: { (error: Error?) in
        if nil != error {
          session.alertMessage = "Unable to connect to tag."
          session.invalidate()
          return
        }
        tag.queryNDEFStatus(completionHandler: { (ndefStatus: NFCNDEFStatus, capacity: Int, error: Error?) in
          guard error == nil else {
            session.alertMessage = "Unable to query the NDEF status of tag."
            session.invalidate()
            return
          }
          switch ndefStatus {
          case .notSupported:
            session.alertMessage = "Tag is not NDEF compliant."
            session.invalidate()
          case .readOnly:
            session.alertMessage = "Tag is read only."
            session.invalidate()
          case .readWrite:
            guard message.length <= capacity else {
              session.invalidate(errorMessage: "The tag is too small.")
              return
            }
            tag.writeNDEF(
              message,
              completionHandler: { (error: Error?) in
                if nil != error {
                  session.alertMessage = "Write NDEF message fail: \(error!)"
                  session.invalidate()
                  return
                }
                session.alertMessage = "Write NDEF message successful."
                tag.readNDEF(completionHandler: { (readBack: NFCNDEFMessage?, error: Error?) in
                  DispatchQueue.main.async {
                    self.log.append("read back \(readBack?.records.count ?? 0) records")
                    self.log.append(readBack == message ? "same message" : "another message")
                  }
                  session.invalidate()
                })
              })
          @unknown default:
            session.alertMessage = "Unknown NDEF tag status."
            session.invalidate()
          }
        })
      })
  }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: Error) {
    let code = (error as? NFCReaderError)?.code.description ?? "\(error)"
    DispatchQueue.main.async { self.log.append("invalidated: \(code)") }
  }
}

@Suite(.timeLimit(.minutes(2))) struct CoreNFCSampleSwift5Tests {
  @MainActor
  @Test func theReaderSampleGetsCoreNFCsMessagesAndReadsTheirPayloads() async throws {
    let (system, radio) = NFCReaderSystem.simulated(seed: 3)
    let screen = MessagesTableViewController()
    screen.beginScanning(on: system)
    let hello = NDEFMessage(try .text("hello", languageCode: "en"), try .uri("https://example.com/menu"))
    radio.present(SimulatedNFCTag(name: "badge", message: hello))
    radio.clock.advance(by: .seconds(2))
    for _ in 0..<10_000 where screen.detectedMessages.isEmpty {  // The sample hops to the main queue.
      await Task.yield()
    }
    #expect(screen.active)
    #expect(screen.detectedMessages.count == 1)
    let records = screen.detectedMessages.first?.records ?? []
    #expect(records.map(MessagesTableViewController.describe) == ["T: hello (en)", "U: https://example.com/menu"])
    #expect(screen.detectedMessages.first?.length == hello.length)
    screen.session?.invalidate()
    radio.clock.advance(by: .seconds(1))
    #expect(screen.session == nil)
    #expect(screen.alerts.isEmpty, "a user cancel or the app's own invalidate shows no alert")
  }

  @MainActor
  @Test func theWriterSamplesDidDetectTagsIsCalledAndItsMessageIsWrittenAndReadBack() async {
    let (system, radio) = NFCReaderSystem.simulated(seed: 4)
    let screen = WriterViewController()
    screen.beginWrite(on: system)
    radio.present(SimulatedNFCTag.blank(name: "label"))
    radio.clock.advance(by: .seconds(5))
    for _ in 0..<10_000 where screen.log.count < 4 {  // The sample hops to the main queue.
      await Task.yield()
    }
    #expect(
      screen.log == [
        "didDetect 1 tag, available: true", "read back 3 records", "same message",
        "invalidated: readerSessionInvalidationErrorUserCanceled",
      ])
    #expect(screen.session?.detectsTags == true, "a delegate with didDetect tags gets a read-write session")
    #expect(radio.tag("label")?.ndefBytes == (try? NDEFMessage(screen.message))?.encoded())
  }
}
