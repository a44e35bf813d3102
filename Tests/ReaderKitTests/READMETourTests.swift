import Foundation
import Testing

// The README's tour, verbatim between the markers; `tourIsTheREADMEsCode` keeps the two in step.
// README-BEGIN
import ReaderKit
import Synchronization

/// What a point-of-sale app would show, and the latest list of nearby readers.
nonisolated final class Screen: DiscoveryDelegate, MobileReaderDelegate {
  let nearby = Mutex<[Reader]>([])

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    nearby.withLock { $0 = readers }
    print("Nearby:", readers.map(\.serialNumber).joined(separator: ", "))
  }

  func reader(_ reader: Reader, didStartReconnect cancelable: Cancelable, disconnectReason: DisconnectReason) {
    print("Reconnecting to your reader… (\(disconnectReason))")
  }

  func readerDidSucceedReconnect(_ reader: Reader) { print("Reader reconnected") }

  func reader(_ reader: Reader, didDisconnect reason: DisconnectReason) { print("Reader disconnected:", reason) }
}

func tour() throws(ReaderError) -> ConnectionStatus {
  // The built-in simulator: three readers around a virtual clock.
  let (terminal, world) = Terminal.simulated(seed: 7, readers: 3)
  let screen = Screen()

  // Discover for five simulated seconds; the list arrives nearest first.
  let scan = try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(true).setTimeout(5).build()
  terminal.discoverReaders(scan, delegate: screen) { error in
    print("Discovery ended:", error.map { "\($0.code)" } ?? "found readers")
  }
  world.clock.advance(by: .seconds(5))

  // Connect the nearest reader to a location; it is saved for reconnect at launch.
  guard let nearest = screen.nearby.withLock({ $0.first }) else { return terminal.connectionStatus }
  let config = try BluetoothConnectionConfiguration.Builder(delegate: screen, locationId: "tml_downtown").build()
  terminal.connectReader(nearest, connectionConfig: config) { result in print("Connected:", result) }
  world.clock.advance(by: .seconds(3))

  // The reader is carried out of range for 20 s; automatic reconnection wins it back.
  world.walkAway(nearest.serialNumber, for: .seconds(20))
  world.clock.advance(by: .seconds(60))
  return terminal.connectionStatus  // .connected
}
// README-END

struct READMETourTests {
  @Test func tourEndsWithTheReaderReconnected() throws {
    #expect(try tour() == .connected)
  }

  @Test func tourIsTheREADMEsCode() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    let thisFile = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
    let section = try #require(readme.range(of: "## A tour of the API"))
    let sample = try #require(Self.between(String(readme[section.upperBound...]), "```swift\n", "```"))
    let tested = try #require(Self.between(thisFile, "// README-BEGIN\n", "// README-END"))
    #expect(sample == tested, "README.md's Swift sample and this file's copy differ")
  }

  private static func between(_ text: String, _ start: String, _ end: String) -> String? {
    guard let open = text.range(of: start), let close = text.range(of: end, range: open.upperBound..<text.endIndex)
    else { return nil }
    return String(text[open.upperBound..<close.lowerBound])
  }
}
