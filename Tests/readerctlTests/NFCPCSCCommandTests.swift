import Foundation
import PCSCTestSupport
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `readerctl nfc readers`, `nfc scan --pcsc`, `nfc write --pcsc` and `nfc replay` through the real pcscd
/// with virtual tags, as a person runs them. One parameterized test, so that a host without pcscd prints
/// one line; its cases run one at a time.
@Suite(.workTimeLimit(.seconds(60)), .serialized)
struct NFCPCSCCommandTests {
  static let hello = "d101055402656e6869"  // Text "hi"

  enum Scenario: String, CaseIterable, CustomTestStringConvertible {
    case listsReaders, failsFastWithoutPcscdOrReader, scansATag, writesATag, refusesAReadOnlyTag
    case secondProcessWaits, recordingReplaysTheSame, pcscdStoppingEndsTheScan
    var testDescription: String { rawValue }

    /// Every scenario, but the one that stops pcscd where a private pcscd cannot run (and CI does not
    /// require it): that one says why, once.
    static let runnable: [Scenario] = {
      guard let reason = PrivatePcscd.unavailableReason, !VPCD.required else { return allCases }
      print("NFCPCSCCommandTests: pcscdStoppingEndsTheScan skipped: \(reason)")
      return allCases.filter { $0 != .pcscdStoppingEndsTheScan }
    }()
  }

  @Test(.enabled(if: VPCD.enabled, readerctlPcscdSkipNote), arguments: Scenario.runnable)
  func withPcscd(_ scenario: Scenario) async throws {
    try await VPCD.exclusively {
      let configuration = try PrivateConfiguration()
      defer { configuration.remove() }
      switch scenario {
      case .listsReaders: try await listsReaders(configuration)
      case .failsFastWithoutPcscdOrReader: try await failsFastWithoutPcscdOrReader(configuration)
      case .scansATag: try await scansATag(configuration)
      case .writesATag: try await writesATag(configuration)
      case .refusesAReadOnlyTag: try await refusesAReadOnlyTag(configuration)
      case .secondProcessWaits: try await secondProcessWaits(configuration)
      case .recordingReplaysTheSame: try await recordingReplaysTheSame(configuration)
      case .pcscdStoppingEndsTheScan: try await pcscdStoppingEndsTheScan(configuration)
      }
    }
  }

  func listsReaders(_ configuration: PrivateConfiguration) async throws {
    try VirtualCards.shared.get().present(VirtualCards.type4([0xD0, 0x00, 0x00]))
    try VPCD.waitUntilPresent(VirtualCards.firstReader)
    let text = try await ReaderctlProcess.run(["nfc", "readers"], environment: configuration.environment)
    #expect(text.status == 0)
    #expect(
      text.lines == [
        "Virtual PCD 00 00  card present (Type 4, ATR 3B8180018080)", "Virtual PCD 00 01  no card",
      ])
    let json = try await ReaderctlProcess.run(["nfc", "readers", "--json"], environment: configuration.environment)
    let result = try #require(try ReaderctlProcess.jsonLines(json.stdout).last)
    let readers = try #require(result["readers"] as? [[String: Any]])
    #expect(readers.map { $0["name"] as? String } == ["Virtual PCD 00 00", "Virtual PCD 00 01"])
    #expect(readers.map { $0["card"] as? Bool } == [true, false])
  }

  func failsFastWithoutPcscdOrReader(_ configuration: PrivateConfiguration) async throws {
    var elapsed = Duration.zero
    // A socket nobody listens on: what a client sees where pcscd is not running.
    let noPcscd = configuration.environment.merging(["PCSCLITE_CSOCK_NAME": "/nonexistent/pcscd.comm"]) { $1 }
    for command in [["nfc", "scan", "--pcsc"], ["nfc", "readers"], ["nfc", "write", "--pcsc", "--text", "x"]] {
      let run = try await ReaderctlProcess.run(command, environment: noPcscd, timeout: 10)
      elapsed += run.elapsed
      #expect(run.status == 69, "\(command)")
      #expect(run.stderr.hasPrefix("readerctl: pcscd is not running (SCARD_E_NO_SERVICE"), "\(command)")
      #expect(run.stderr.contains("systemctl start pcscd"), "\(command)")
    }
    let noReader = try await ReaderctlProcess.run(
      ["nfc", "scan", "--pcsc", "--reader", "ACS ACR122U", "--json"], environment: configuration.environment)
    elapsed += noReader.elapsed
    #expect(noReader.status == 69)
    #expect(noReader.stderr == "readerctl: no PC/SC reader's name contains \"ACS ACR122U\"\n")
    #expect(try ReaderctlProcess.jsonLines(noReader.stdout).last?["exitStatus"] as? Int == 69)
    #expect(elapsed < Duration.seconds(4).allowingForSlowdown, "four failures, each well within a second")
  }

  func scansATag(_ configuration: PrivateConfiguration) async throws {
    try VirtualCards.shared.get().present(VirtualCards.type2(VirtualCards.bytes(Self.hello)))
    let run = try await ReaderctlProcess.run(
      ["nfc", "scan", "--pcsc", "--json", "--reader", "00 00"], environment: configuration.environment, timeout: 30)
    #expect(run.status == 0, "\(run.stderr)")
    let lines = try ReaderctlProcess.jsonLines(run.stdout)
    #expect(
      lines.map { $0["event"] as? String } == ["didBecomeActive", "didDetectNDEFs", "didInvalidateWithError", "result"])
    let text = ((lines.last?["messages"] as? [[String: Any]])?.first?["records"] as? [[String: Any]])?.first?["text"]
    #expect(text as? String == "hi")
    let narrated = try await ReaderctlProcess.run(["nfc", "scan", "--pcsc"], environment: configuration.environment)
    #expect(narrated.status == 0)
    #expect(
      narrated.lines.first?.hasPrefix(
        "Reading NFC tags on Virtual PCD 00 00, Virtual PCD 00 01 through pcscd (the system's time limit: 30 seconds per session, from "
      ) == true)
    #expect(narrated.lines.last?.hasSuffix("] Read 1 message in 1 session.") == true)
  }

  func writesATag(_ configuration: PrivateConfiguration) async throws {
    let cards = try VirtualCards.shared.get()
    try cards.present(VirtualCards.type4([]))
    let run = try await ReaderctlProcess.run(
      ["nfc", "write", "--pcsc", "--uri", "https://example.com", "--json"], environment: configuration.environment,
      timeout: 30)
    #expect(run.status == 0, "\(run.stderr)")
    let result = try #require(try ReaderctlProcess.jsonLines(run.stdout).last)
    #expect(result["status"] as? String == "readWrite")
    #expect(result["capacity"] as? Int == 2046)
    #expect(try cards.state()["message"] as? String == "d1010c55046578616d706c652e636f6d")
  }

  func refusesAReadOnlyTag(_ configuration: PrivateConfiguration) async throws {
    try VirtualCards.shared.get().present(VirtualCards.type2([], ["readOnly": true]))
    let run = try await ReaderctlProcess.run(
      ["nfc", "write", "--pcsc", "--text", "nope"], environment: configuration.environment, timeout: 30)
    #expect(run.status == 74)
    #expect(run.stderr.contains("ndefReaderSessionErrorTagNotWritable"))
  }

  func secondProcessWaits(_ configuration: PrivateConfiguration) async throws {
    let first = try LiveReaderctl(["nfc", "scan", "--pcsc", "--json"], environment: configuration.environment)
    try await first.waitFor("didBecomeActive")
    let second = try LiveReaderctl(["nfc", "scan", "--pcsc", "--json"], environment: configuration.environment)
    await #expect(throws: ReaderctlProcess.Failure.self, "the second session ran beside the first") {
      try await second.waitFor("didBecomeActive", timeout: .milliseconds(500))
    }
    try VirtualCards.shared.get().present(VirtualCards.type4(VirtualCards.bytes(Self.hello)))
    #expect(try await first.wait() == 0)
    #expect(try await second.wait() == 0)
    #expect(second.output.contains("didDetectNDEFs"))
  }

  func recordingReplaysTheSame(_ configuration: PrivateConfiguration) async throws {
    let recording = configuration.directory.appendingPathComponent("scan.jsonl").path
    let cards = try VirtualCards.shared.get()
    let live = try LiveReaderctl(
      ["nfc", "scan", "--pcsc", "--continuous", "--json", "--record", recording], environment: configuration.environment
    )
    try await live.waitFor("didBecomeActive")
    try cards.present(VirtualCards.type4(VirtualCards.bytes(Self.hello)))
    try await live.waitFor("didDetectNDEFs")
    try cards.present(VirtualCards.type4([]))
    try await live.waitFor("didFailToReadNDEF")
    live.interrupt()
    let status = try await live.wait()
    #expect(status == 65, "a blank tag gave no message")
    let replay = try await ReaderctlProcess.run(["nfc", "replay", recording, "--json"], timeout: 30)
    #expect(replay.status == status, "\(replay.stderr)")
    func shape(_ text: String) throws -> [String] {
      try ReaderctlProcess.jsonLines(text).map { line in
        var copy = line
        copy["t"] = nil
        return String(decoding: try JSONSerialization.data(withJSONObject: copy, options: .sortedKeys), as: UTF8.self)
      }
    }
    #expect(try shape(replay.stdout) == shape(live.output))
    // The times are the recorded ones: the replay prints each event at the time its cause was recorded,
    // which the live run printed the same event no earlier than (later by what it took to handle it,
    // which on a loaded machine can be a good part of a second).
    let liveTimes = try ReaderctlProcess.jsonLines(live.output).compactMap { $0["t"] as? Double }
    let replayTimes = try ReaderctlProcess.jsonLines(replay.stdout).compactMap { $0["t"] as? Double }
    #expect(liveTimes.count == replayTimes.count)
    #expect(
      zip(liveTimes, replayTimes).allSatisfy { live, replay in replay <= live + 0.001 && live - replay < 5 },
      "\(liveTimes) \(replayTimes)")
    #expect(zip(replayTimes, replayTimes.dropFirst()).allSatisfy { $0 <= $1 }, "\(replayTimes)")
    // The run ends at the recorded Ctrl-C, to the millisecond.
    let recorded = try ReaderctlProcess.jsonLines(String(contentsOfFile: recording, encoding: .utf8))
    let stop = try #require(recorded.first { $0["note"] as? String == "stop" }?["t"] as? Double)
    #expect(abs((replayTimes.last ?? -1) - stop) < 0.0015, "\(replayTimes) stop \(stop)")
  }

  func pcscdStoppingEndsTheScan(_ configuration: PrivateConfiguration) async throws {
    let pcscd = try await PrivatePcscd.start()
    let scan = try LiveReaderctl(
      ["nfc", "scan", "--pcsc", "--json"], environment: configuration.environment.merging(pcscd.environment) { $1 })
    try await scan.waitFor("didBecomeActive")
    await pcscd.stop()
    let status = try await scan.wait()
    #expect(status == 1)
    #expect(scan.errors.contains("the PC/SC service (pcscd) stopped during the session"))
    #expect(scan.output.contains("readerSessionInvalidationErrorSessionTerminatedUnexpectedly"))
  }
}

/// The one line these tests print when they skip.
let readerctlPcscdSkipNote = Comment(rawValue: VPCD.skipNote)

/// A configuration file of the test's own (`READERKIT_NFC_CONFIG`): a private session line, a 30-second
/// time limit.
struct PrivateConfiguration {
  let directory: URL
  let environment: [String: String]

  init() throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("readerctl-nfc-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let file = directory.appendingPathComponent("nfc.conf")
    try "session-timeout = 30\nlock-directory = \(directory.path)/line\n".write(
      to: file, atomically: true, encoding: .utf8)
    environment = ["READERKIT_NFC_CONFIG": file.path]
  }

  func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// A `readerctl` run in the background, its output read as it comes.
final class LiveReaderctl: Sendable {
  private let process: Process
  private let directory: URL

  init(_ arguments: [String], environment: [String: String]) throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("readerctl-live-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    for name in ["stdout", "stderr"] {
      _ = FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: nil)
    }
    let process = Process()
    process.executableURL = ReaderctlProcess.executable
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: directory.appendingPathComponent("stdout"))
    process.standardError = try FileHandle(forWritingTo: directory.appendingPathComponent("stderr"))
    try process.runWithSignalsUnblocked()
    self.process = process
  }

  deinit {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    try? FileManager.default.removeItem(at: directory)
  }

  var output: String { (try? String(contentsOf: directory.appendingPathComponent("stdout"), encoding: .utf8)) ?? "" }
  var errors: String { (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? "" }

  /// Waits (at most `timeout`, off the cooperative pool) until standard output contains `text`.
  func waitFor(_ text: String, timeout: Duration = .seconds(15)) async throws {
    _ = await eventually(within: timeout, every: .milliseconds(20)) { [self] in
      output.contains(text) || !process.isRunning
    }
    guard output.contains(text) else {
      throw ReaderctlProcess.Failure(description: "readerctl never printed \(text): \(output) \(errors)")
    }
  }

  /// Ctrl-C.
  func interrupt() { kill(process.processIdentifier, SIGINT) }

  /// Waits (at most 30 s, off the cooperative pool) for the exit status; a readerctl still running
  /// then is killed (SIGTERM, then SIGKILL).
  func wait() async throws -> Int32 {
    do {
      try await process.exit(within: .seconds(30))
    } catch is ChildProcessTimeout {
      throw ReaderctlProcess.Failure(description: "readerctl did not end: \(output) \(errors)")
    }
    return process.terminationStatus
  }
}
