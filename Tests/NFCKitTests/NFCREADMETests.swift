import Foundation
import Testing

// The README's NFC sample, verbatim between the markers; `sampleIsTheREADMEsCode` keeps the two in step.
// README-BEGIN
import NFCKit
import ReaderSimulator
import Synchronization

/// Reads badges and remembers what they said.
final class BadgeReader: NFCNDEFReaderSessionDelegate {
  let said = Mutex<[String]>([])

  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
    for message in messages {
      for record in message.records {
        let (text, _) = record.wellKnownTypeTextPayload()
        if let text { said.withLock { $0.append(text) } }
      }
    }
  }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    guard let error = error as? NFCReaderError, !error.isNormalEnd else { return }
    print("Reading failed:", error)
  }
}

func badgeTour() -> [String] {
  // The built-in simulator: a device with NFC (Core NFC's 60 s limit, a FIFO line) on a virtual clock.
  let (system, radio) = NFCReaderSystem.simulated(seed: 1)
  let reader = BadgeReader()
  let first = NFCNDEFReaderSession(delegate: reader, invalidateAfterFirstRead: true, system: system)
  first.alertMessage = "Hold your badge near the phone"
  first.begin()
  // A second session begun meanwhile waits its turn instead of failing.
  let second = NFCNDEFReaderSession(delegate: reader, invalidateAfterFirstRead: true, system: system)
  second.begin()

  // A badge comes near: raw NDEF bytes, as `readerctl ndef encode` writes them (a Text record, "hello").
  let hello: [UInt8] = [0xD1, 0x01, 0x08, 0x54, 0x02, 0x65, 0x6E, 0x68, 0x65, 0x6C, 0x6C, 0x6F]
  radio.present(SimulatedNFCTag(name: "badge", ndef: hello))
  radio.clock.advance(by: .seconds(2))
  // The first session read it and ended (first NDEF tag read); the second became active and read it too.
  return reader.said.withLock { $0 }  // ["hello", "hello"]
}
// README-END

struct NFCREADMETests {
  @Test func theSampleReadsTheBadgeInBothSessions() {
    #expect(badgeTour() == ["hello", "hello"])
  }

  @Test func sampleIsTheREADMEsCode() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    let thisFile = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
    let section = try #require(readme.range(of: "## NFC reader sessions"))
    let sample = try #require(Self.between(String(readme[section.upperBound...]), "```swift\n", "```"))
    let tested = try #require(Self.between(thisFile, "// README-BEGIN\n", "// README-END"))
    #expect(sample == tested, "README.md's NFC sample and this file's copy differ")
  }

  private static func between(_ text: String, _ start: String, _ end: String) -> String? {
    guard let open = text.range(of: start), let close = text.range(of: end, range: open.upperBound..<text.endIndex)
    else { return nil }
    return String(text[open.upperBound..<close.lowerBound])
  }
}
