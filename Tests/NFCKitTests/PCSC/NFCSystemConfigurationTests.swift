import Foundation
@testable import NFCKit
import ReaderCore
import Testing

@Suite struct NFCSystemConfigurationTests {
  @Test func theDefaultsAreCoreNFCsLimitAQueueAndEveryReader() {
    let configuration = NFCSystemConfiguration(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"])
    #expect(configuration.sessionTimeout == .seconds(60))
    #expect(configuration.whenBusy == .queue)
    #expect(configuration.reader == nil)
    #expect(configuration.lockDirectory == "/run/user/1000/readerkit")
    #expect(configuration.source == nil)
  }

  @Test func everyKeyIsRead() throws {
    let text = """
      # the site's readers
      session-timeout = 120   # two minutes
      when-busy = refuse
      reader = ACS ACR122U
      command-timeout = 0.5
      busy-timeout = 4

      lock-directory = /var/lock/readerkit
      """
    let configuration = try NFCSystemConfiguration.parse(text, path: "/etc/readerkit/nfc.conf", environment: [:])
    #expect(configuration.sessionTimeout == .seconds(120))
    #expect(configuration.whenBusy == .refuse)
    #expect(configuration.reader == "ACS ACR122U")
    #expect(configuration.commandTimeout == .milliseconds(500))
    #expect(configuration.busyTimeout == .seconds(4))
    #expect(configuration.lockDirectory == "/var/lock/readerkit")
    #expect(configuration.policy == NFCSystemPolicy(sessionTimeout: .seconds(120), whenBusy: .refuse))
    #expect(
      try NFCSystemConfiguration.parse("session-timeout = none", path: "f", environment: [:]).sessionTimeout == nil)
  }

  @Test func aBadLineIsNamedWithItsFileAndLine() {
    let cases: [(String, String)] = [
      ("when-busy = sometimes", "f line 2: when-busy is `sometimes`; it takes queue or refuse"),
      ("session-timeout = -3", "f line 2: session-timeout is `-3`; it takes seconds between 0 and 86400, or none"),
      ("colour = blue", "f line 2: unknown key `colour`"),
      ("reader", "f line 2: expected `key = value`, found `reader`"),
      ("lock-directory = tmp", "f line 2: lock-directory is `tmp`; it takes an absolute path"),
    ]
    for (line, message) in cases {
      #expect(throws: NFCSystemConfiguration.Error.self) {
        try NFCSystemConfiguration.parse("# first\n" + line, path: "f", environment: [:])
      }
      do {
        _ = try NFCSystemConfiguration.parse("# first\n" + line, path: "f", environment: [:])
      } catch {
        #expect(error.description == message)
      }
    }
  }

  @Test func theFirstFileOfTheSearchPathWins() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readerkit-conf-\(UUID())")
    defer { try? FileManager.default.removeItem(at: directory) }
    try FileManager.default.createDirectory(
      at: directory.appendingPathComponent("readerkit"), withIntermediateDirectories: true)
    let user = directory.appendingPathComponent("readerkit/nfc.conf")
    try "session-timeout = 30\n".write(to: user, atomically: true, encoding: .utf8)
    let environment = ["XDG_CONFIG_HOME": directory.path, "HOME": "/nonexistent"]
    #expect(NFCSystemConfiguration.searchPath(environment: environment) == [user.path, "/etc/readerkit/nfc.conf"])
    let loaded = try NFCSystemConfiguration.load(environment: environment)
    #expect(loaded.sessionTimeout == .seconds(30))
    #expect(loaded.source == user.path)
    let explicit = directory.appendingPathComponent("other.conf")
    try "when-busy = refuse\n".write(to: explicit, atomically: true, encoding: .utf8)
    let overridden = try NFCSystemConfiguration.load(
      environment: environment.merging(["READERKIT_NFC_CONFIG": explicit.path]) { $1 })
    #expect(overridden.whenBusy == .refuse)
    #expect(overridden.sessionTimeout == .seconds(60))
    try Data(repeating: 0x20, count: 70_000).write(to: explicit)
    #expect(throws: NFCSystemConfiguration.Error.self) {
      try NFCSystemConfiguration.load(environment: ["READERKIT_NFC_CONFIG": explicit.path])
    }
  }

  #if os(Linux)
    @Test func aHostWhoseConfigurationCannotBeUsedReadsNoTagsAndSaysWhichLine() {
      let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readerkit-conf-\(UUID())")
      defer { try? FileManager.default.removeItem(at: directory) }
      let file = directory.appendingPathComponent("nfc.conf")
      do {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try "reader = ACS\nsession-timout = 120\n".write(to: file, atomically: true, encoding: .utf8)
      } catch {
        Issue.record("cannot write the configuration: \(error)")
        return
      }
      let clock = VirtualClock()
      let radio = NFCReaderSystem.hostRadio(scheduler: clock, environment: ["READERKIT_NFC_CONFIG": file.path])
      // The administrator's `reader = ACS` must not give way to every reader because of a typo below it.
      #expect(!radio.isReadingAvailable)
      let system = NFCReaderSystem(radio: radio, scheduler: clock)
      let session = NFCNDEFReaderSession(invalidateAfterFirstRead: true, system: system)
      let errors = Locked<[NFCReaderError]>([])
      system.addEventObserver { event in if let error = event.error { errors.withLock { $0.append(error) } } }
      session.begin()
      clock.advance(by: .seconds(1))
      let ended = errors.withLock { $0 }
      #expect(ended.map(\.code) == [.readerErrorUnsupportedFeature])
      #expect(ended.first?.context["configuration"] == file.path)
      #expect(ended.first?.context["line"] == "2")
      #expect(ended.first?.message.contains("session-timout") == true)
    }
  #endif
}
