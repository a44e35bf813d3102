import Foundation
import PCSCKit
import ReaderCore
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The virtual NFC tags of `virtual_tag.py`, presented to pcscd's vpcd readers: one Python process per
/// test process, started on first use and driven by JSON lines.
///
/// The process ends when its standard input closes, which happens when this process ends however it
/// ends. The test runner's blocked signal mask is cleared around the spawn so that signals reach it.
public final class VirtualCards: Sendable {
  /// The port of vpcd's first reader, `Virtual PCD 00 00`, and of its second, `Virtual PCD 00 01`.
  public static let firstPort = 35963
  public static let secondPort = 35964
  /// The readers' PC/SC names.
  public static let firstReader = "Virtual PCD 00 00"
  public static let secondReader = "Virtual PCD 00 01"

  /// The script.
  public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("virtual_tag.py")

  public struct Failure: Error, CustomStringConvertible {
    public let description: String
  }

  private struct Channel {
    var input: FileHandle
    var output: FileHandle
    var buffer = Data()
  }

  private let channel: Locked<Channel>
  private let process: Process

  private init(process: Process, input: FileHandle, output: FileHandle) {
    self.process = process
    channel = Locked(Channel(input: input, output: output))
  }

  /// The cards' process, started on first use.
  public static let shared: Result<VirtualCards, Failure> = Result { () throws(Failure) in try start() }

  private static func start() throws(Failure) -> VirtualCards {
    let process = Process(python: script)
    let stdin = Pipe()
    let stdout = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    do {
      try process.runWithSignalsUnblocked()
    } catch {
      throw Failure(description: "cannot start \(script.path): \(error)")
    }
    return VirtualCards(process: process, input: stdin.fileHandleForWriting, output: stdout.fileHandleForReading)
  }

  /// Sends one request and returns the reply's members; throws when the reply says it failed.
  @discardableResult
  public func send(_ request: [String: Any]) throws -> [String: Any] {
    let data = try JSONSerialization.data(withJSONObject: request) + Data("\n".utf8)
    let reply = try channel.withLock { channel -> Data in
      try channel.input.write(contentsOf: data)
      while !channel.buffer.contains(UInt8(ascii: "\n")) {
        let chunk = channel.output.availableData
        guard !chunk.isEmpty else { throw Failure(description: "virtual_tag.py exited") }
        channel.buffer.append(chunk)
      }
      let end = channel.buffer.firstIndex(of: UInt8(ascii: "\n"))!
      let line = channel.buffer[channel.buffer.startIndex..<end]
      channel.buffer.removeSubrange(channel.buffer.startIndex...end)
      return Data(line)
    }
    guard let object = try JSONSerialization.jsonObject(with: reply) as? [String: Any] else {
      throw Failure(description: "virtual_tag.py answered \(String(decoding: reply, as: UTF8.self))")
    }
    guard object["ok"] as? Bool == true else {
      throw Failure(description: "virtual_tag.py refused \(request): \(object["error"] ?? "?")")
    }
    return object
  }

  /// Presents `card` (see `virtual_tag.py`) to the reader on `port`, once the card there has been
  /// taken away and pcscd has seen the reader empty: vpcd notices a card leaving only when it next
  /// polls, and a card swapped faster than that is, to pcscd, the old card failing.
  public func present(_ card: [String: Any], port: Int = firstPort) throws {
    try remove(port: port)
    try VPCD.waitUntilEmpty(port == Self.firstPort ? Self.firstReader : Self.secondReader)
    try send(["cmd": "present", "port": port, "card": card])
  }

  /// Takes the card away from the reader on `port`.
  public func remove(port: Int = firstPort) throws {
    try send(["cmd": "remove", "port": port])
  }

  /// The card on `port` as it is now: `message` (hex or null), `apdus`, `connected`, …
  public func state(port: Int = firstPort) throws -> [String: Any] {
    try send(["cmd": "state", "port": port])
  }

  /// A Type 4 card holding `message`, with `options` (`readOnly`, `leaveAfter`, `stallAfter`, `refuse`…).
  public static func type4(_ message: [UInt8]?, _ options: [String: Any] = [:]) -> [String: Any] {
    options.merging(["type": "t4", "message": message.map(hex) ?? NSNull()]) { $1 }
  }

  /// A Type 2 card (an NTAG213's 144-byte data area unless `options` says `dataSize`) holding `message`.
  public static func type2(_ message: [UInt8]?, _ options: [String: Any] = [:]) -> [String: Any] {
    options.merging(["type": "t2", "message": message.map(hex) ?? NSNull()]) { $1 }
  }

  /// The bytes of hex text (`"d10105"`).
  public static func bytes(_ hex: String) -> [UInt8] {
    var result: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
      result.append(UInt8(hex[index..<next], radix: 16) ?? 0)
      index = next
    }
    return result
  }

  public static func hex(_ bytes: [UInt8]) -> String {
    bytes.map { byte in
      let digits = String(byte, radix: 16)
      return digits.count == 1 ? "0" + digits : digits
    }.joined()
  }
}

/// Whether the tests that need pcscd and its vpcd readers can run here, and the one line that says why
/// not; under `READERKIT_CI=1` they must run.
public enum VPCD {
  /// Whether the tests must run (CI sets `READERKIT_CI=1`): then a missing pcscd is a failure.
  public static let required = ProcessInfo.processInfo.environment["READERKIT_CI"] == "1"

  /// `nil` when pcscd answers with the vpcd readers; otherwise why the tests cannot run.
  public static let unavailableReason: String? = {
    let start = "`bash .ci/pcscd.sh start` installs and starts pcscd with vpcd"
    guard case .success(let service) = LivePCSCService.system(scheduler: LiveScheduler(label: "VPCD.probe")) else {
      return "libpcsclite cannot be loaded (\(start))"
    }
    switch service.probe() {
    case .failure(let error): return "pcscd does not answer: \(error) (\(start))"
    case .success(let readers) where !readers.contains(where: { $0.name == VirtualCards.firstReader }):
      return "pcscd has no vpcd reader \(VirtualCards.firstReader) (\(start))"
    case .success: return nil
    }
  }()

  /// Whether the tests run: pcscd is there, or it must be.
  public static let enabled = unavailableReason == nil || required

  /// The one line a skipped run prints.
  public static var skipNote: String { "PC/SC daemon tests skipped: \(unavailableReason ?? "")" }

  /// Waits (at most 5 s) until pcscd reports a card in `reader`.
  public static func waitUntilPresent(_ reader: String) throws {
    try waitUntil(reader, "a card in it") { $0.flags & PCSCReaderState.present != 0 }
  }

  /// Waits (at most 5 s) until pcscd reports `reader` empty.
  public static func waitUntilEmpty(_ reader: String) throws {
    try waitUntil(reader, "empty") { $0.flags & PCSCReaderState.empty != 0 }
  }

  private static func waitUntil(
    _ reader: String, _ what: String, _ condition: (PCSCReaderState) -> Bool
  ) throws {
    guard case .success(let service) = LivePCSCService.system(scheduler: LiveScheduler(label: "VPCD.wait")) else {
      throw VirtualCards.Failure(description: "libpcsclite cannot be loaded")
    }
    let deadline = ContinuousClock.now + .seconds(5)
    while ContinuousClock.now < deadline {
      guard let state = try service.probe().get().first(where: { $0.name == reader }) else {
        throw VirtualCards.Failure(description: "pcscd has no reader \(reader)")
      }
      if condition(state) { return }
      let changed = DispatchSemaphore(value: 0)
      service.waitForChange(
        [PCSCReaderState(name: reader, currentState: state.eventState & ~PCSCReaderState.changed)],
        timeout: deadline - ContinuousClock.now
      ) { _ in changed.signal() }
      changed.wait()
    }
    throw VirtualCards.Failure(description: "pcscd did not see \(reader) \(what) within 5 s")
  }

  /// Runs `body` holding the vpcd readers: tests in any suite or process that present virtual cards
  /// take turns, so that no two put cards in the same reader at once. Waiting for the turn (another
  /// test may hold the readers for many seconds) and emptying the readers happen off the cooperative
  /// pool.
  public static func exclusively<T>(_ body: () async throws -> T) async throws -> T {
    if let unavailableReason {
      throw VirtualCards.Failure(description: "READERKIT_CI=1 requires the PC/SC daemon tests: \(unavailableReason)")
    }
    let descriptor = open("/tmp/readerkit-vpcd-tests.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
    guard descriptor >= 0 else { throw VirtualCards.Failure(description: "cannot open the vpcd test lock") }
    defer { close(descriptor) }
    _ = try await offPool { flock(descriptor, LOCK_EX) }
    defer { flock(descriptor, LOCK_UN) }
    // Both readers empty, as pcscd sees them, before the test and after it.
    let cards = try VirtualCards.shared.get()
    @Sendable func empty() throws {
      try cards.remove(port: VirtualCards.firstPort)
      try cards.remove(port: VirtualCards.secondPort)
      try waitUntilEmpty(VirtualCards.firstReader)
      try waitUntilEmpty(VirtualCards.secondReader)
    }
    try await offPool { try empty() }
    do {
      let result = try await body()
      try? await offPool { try empty() }
      return result
    } catch {
      try? await offPool { try empty() }
      throw error
    }
  }
}
