import Foundation
import MCUmgr
import ReaderCore
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `Tests/Support/peer/smp_device.py --stdio` (the Python SMP device the D-Bus peer embeds) as the SMP
/// transport of one reader, on a `VirtualClock`: each write goes to the process, its notifications come
/// back as events; a reset it asks for takes the link down, boots the device a second later and brings
/// the link back.
final class PythonSMPDevice: SMPTransport, SMPTransportProvider, @unchecked Sendable {
  struct Failure: Error, CustomStringConvertible { let description: String }

  static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Support/peer/smp_device.py")

  /// The interpreter: Debian's `/usr/bin/python3`, else the first `python3` on `PATH`.
  static let python: String? = {
    let paths =
      ["/usr/bin/python3"]
      + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
      .map { "\($0)/python3" }
    return paths.first { FileManager.default.isExecutableFile(atPath: $0) }
  }()

  /// Whether the test must run (`READERKIT_CI=1`): then a missing python3 fails it instead of skipping.
  static let required = ProcessInfo.processInfo.environment["READERKIT_CI"] == "1"
  static let enabled = required || python != nil

  let clock: VirtualClock
  let writeLength = 244
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private var pending: [UInt8] = []
  private var handler: (@Sendable (SMPTransportEvent) -> Void)?
  private var up = true
  private(set) var expectations: [SMPLinkLossExpectation?] = []

  init(clock: VirtualClock) throws {
    guard let python = Self.python else {
      throw Failure(description: "READERKIT_CI=1 requires python3 for the Python SMP device test; none found")
    }
    self.clock = clock
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [Self.script.path, "--stdio"]
    process.standardInput = input
    process.standardOutput = output
    try process.runWithSignalsUnblocked()
  }

  /// Ends the process (it exits at the end of its input; one still running 10 s later is killed).
  /// Synchronous, for the `defer` of a synchronous test: the device answers each command within
  /// milliseconds, driven from the virtual clock's synchronous callbacks.
  func close() {
    try? input.fileHandleForWriting.close()
    try? process.waitForExit(within: .seconds(10))
  }

  /// Sends one command line and returns the answer's lines (up to the `.` line).
  func command(_ line: String) throws -> [String] {
    input.fileHandleForWriting.write(Data((line + "\n").utf8))
    var lines: [String] = []
    while true {
      if let newline = pending.firstIndex(of: 0x0A) {
        let text = String(decoding: pending[..<newline], as: UTF8.self)
        pending.removeFirst(newline + 1)
        if text == "." { return lines }
        lines.append(text)
        continue
      }
      var poller = pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
      guard poll(&poller, 1, 10_000) > 0 else { throw Failure(description: "smp_device.py did not answer \(line)") }
      let chunk = output.fileHandleForReading.availableData
      guard !chunk.isEmpty else { throw Failure(description: "smp_device.py exited") }
      pending += chunk
    }
  }

  /// The primary slot as the device sees it: (hash, version, confirmed, resets).
  func query() throws -> (hash: [UInt8], version: String, confirmed: Bool, resets: Int) {
    let answer = try command("Q")
    let fields = answer.first { $0.hasPrefix("S ") }?.split(separator: " ") ?? []
    guard fields.count >= 5, let hash = Self.bytes(hex: fields[1]), let resets = Int(fields[4]) else {
      throw Failure(description: "smp_device.py answered Q with \(answer)")
    }
    return (hash, String(fields[2]), fields[3] == "1", resets)
  }

  /// The bytes of hex text, or `nil` when it is not whole hex bytes.
  static func bytes(hex text: some StringProtocol) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    for index in stride(from: 0, to: digits.count, by: 2) {
      guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
      bytes.append(byte)
    }
    return bytes
  }

  // MARK: SMPTransportProvider, SMPTransport

  func smpTransport(forSerialNumber serialNumber: String) -> (any SMPTransport)? { self }
  func setEventHandler(_ handler: @escaping @Sendable (SMPTransportEvent) -> Void) { self.handler = handler }
  var maximumWriteLength: Int? { up ? writeLength : nil }
  func expectLinkLoss(_ expectation: SMPLinkLossExpectation?) { expectations.append(expectation) }

  func send(_ bytes: [UInt8]) {
    guard up, let lines = try? command("W " + bytes.map { String(format: "%02x", $0) }.joined()) else { return }
    for line in lines {
      if line.hasPrefix("N ") {
        guard let data = Self.bytes(hex: line.dropFirst(2)) else {
          Issue.record("smp_device.py notified with bad hex: \(line)")
          continue
        }
        clock.schedule(after: .milliseconds(2)) { [self] in if up { handler?(.received(data)) } }
      } else if line == "A reset" || line == "A drop" {
        let reset = line == "A reset"
        clock.schedule(after: .milliseconds(20)) { [self] in
          up = false
          _ = try? command("C")
          handler?(.down)
          guard reset else { return }
          clock.schedule(after: .seconds(1)) { [self] in
            _ = try? command("B")
            up = true
            handler?(.ready(maximumWriteLength: writeLength))
          }
        }
      }
    }
  }
}

/// The Swift SMP link against the Python device the D-Bus peer uses: the same protocol on both sides.
@Suite(.timeLimit(.minutes(1)), .serialized) struct PythonSMPDeviceTests {
  static let note: Comment = "python3 not found: the Swift link is not checked against Tests/Support/peer/smp_device.py"

  static func run(_ clock: VirtualClock, until condition: () -> Bool) -> Bool {
    for _ in 0..<20_000 where !condition() { clock.advance(by: .milliseconds(10)) }
    return condition()
  }

  @Test(.enabled(if: PythonSMPDevice.enabled, note))
  func theSwiftLinkUpdatesThePythonDeviceAndItRunsTheConfirmedImage() throws {
    let clock = VirtualClock()
    let device = try PythonSMPDevice(clock: clock)
    defer { device.close() }
    let link = SMPReaderLink(transports: device, scheduler: clock, sha256: TestImages.sha256)
    let events = Box<[ReaderLinkEvent]>()
    events.set([])
    link.setLinkEventHandler { event in events.set((events.value ?? []) + [event]) }
    let image = TestImages.image(bodySize: 6_000)
    clock.execute {
      link.installUpdate(serialNumber: "PY", update: SMPLinkHarness.update(), image: Data(image))
    }
    #expect(Self.run(clock) { (events.value ?? []).contains { if case .updateFinished = $0 { true } else { false } } })
    #expect(events.value?.last == .updateFinished(serialNumber: "PY", error: nil))
    let state = try device.query()
    #expect(state.hash == TestImages.hash(image) && state.version == "1.1.0" && state.confirmed && state.resets == 1)
    #expect(device.expectations == [.restart, nil])
  }

  @Test(.enabled(if: PythonSMPDevice.enabled, note))
  func aFailedConfirmOnThePythonDeviceLeavesItOnItsOldImage() throws {
    let clock = VirtualClock()
    let device = try PythonSMPDevice(clock: clock)
    defer { device.close() }
    _ = try device.command("F fail_confirm 1")
    let link = SMPReaderLink(transports: device, scheduler: clock, sha256: TestImages.sha256)
    let finished = Box<ReaderError?>()
    link.setLinkEventHandler { event in
      if case .updateFinished(_, let error) = event { finished.set(error) }
    }
    clock.execute {
      link.installUpdate(
        serialNumber: "PY", update: SMPLinkHarness.update(), image: Data(TestImages.image(bodySize: 2_000)))
    }
    #expect(Self.run(clock) { finished.value != nil })
    #expect(finished.value??.cause == .smp(rc: 32, group: 1))
    let state = try device.query()
    #expect(state.hash == FakeSMPDevice.oldHash && state.confirmed && state.resets == 2)
  }

  @Test(.enabled(if: PythonSMPDevice.enabled, note))
  func thePythonDevicePassesItsOwnSelfTest() async throws {
    let python = try #require(PythonSMPDevice.python, "READERKIT_CI=1 requires python3")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [PythonSMPDevice.script.path, "--self-test"]
    process.standardOutput = FileHandle.nullDevice
    try process.runWithSignalsUnblocked()
    try await process.exit(within: .seconds(50))
    #expect(process.terminationStatus == 0)
  }

  @Test(.enabled(if: PythonSMPDevice.enabled, note))
  func aRebootOfThePythonDeviceIsAnswered() throws {
    let clock = VirtualClock()
    let device = try PythonSMPDevice(clock: clock)
    defer { device.close() }
    let link = SMPReaderLink(transports: device, scheduler: clock, sha256: TestImages.sha256)
    let answered = Box<ReaderError?>()
    link.setLinkEventHandler { event in
      if case .rebootResponse(_, let error) = event { answered.set(error) }
    }
    clock.execute { link.reboot(serialNumber: "PY") }
    #expect(Self.run(clock) { answered.value != nil })
    #expect(answered.value == .some(nil))
    #expect(try device.query().resets == 1)
    #expect(device.expectations == [.reboot])
  }
}
