import BlueZ
import DBus
import Foundation
import MCUmgr
import ReaderKit
import Testing

/// What a `Terminal` over `BlueZCentral` does when the reader's SMP server misbehaves, against the D-Bus
/// peer: a reader that refuses a command, answers late, answers with another sequence number, or answers
/// with a body that is not CBOR. Timeouts are short so each test takes a second or two.
@Suite(.enabled(if: BlueZPeer.enabled, BlueZPeer.skipNote), .timeLimit(.minutes(2)))
struct BlueZSMPFaultPeerTests {
  static let serial = BlueZUpdatePeerTests.serial
  static let image = UpdateImages.image(1, 1, 0, bodySize: 8_000)

  /// Timeouts a fault trips within a second or two (the peer answers in 15 ms otherwise): `chunk` for
  /// each upload chunk (sent once more before the update gives up), three seconds for anything else.
  static func configuration(chunk: Duration) -> BlueZConfiguration {
    var configuration = TerminalRun.configuration
    configuration.imageUpgradeTimings = ImageUpgradeTimings(
      request: .seconds(3), firstChunk: .seconds(3), chunk: chunk, chunkRetries: 1, restart: .seconds(8))
    return configuration
  }

  /// A peer with one reader running 1.0.0 and a terminal whose catalog offers `image` as 1.1.0, required
  /// already when `required`, else in a week.
  static func start(required: Bool, chunk: Duration = .milliseconds(400)) async throws -> (TerminalRun, device: String)
  {
    let peer = try await BlueZPeer.start()
    do {
      let catalog = try UpdateImages.catalog(image, requiredIn: required ? -60 : 7 * 86_400)
      let run = try TerminalRun(peer: peer, configuration: configuration(chunk: chunk), updateCatalog: catalog)
      let device = try peer.addReader(
        address: BlueZUpdatePeerTests.address, name: serial, options: ["firmware": .string("1.0.0")])
      try peer.smpFault(device, "answer_delay", .double(0.015))
      return (run, device)
    } catch {
      peer.stop()
      throw error
    }
  }

  static func finishErrors(_ events: ArraySlice<TerminalEvent.Kind>) -> [ReaderError?] {
    events.compactMap { if case .didFinishInstallingUpdate(_, _, let error) = $0 { .some(error) } else { nil } }
  }

  /// Connects with the optional update pending, then installs it; returns what the install completed with.
  static func install(_ run: TerminalRun) async throws -> ReaderError? {
    let reader = try await run.connect(serial)
    #expect(reader.availableUpdate?.deviceSoftwareVersion == "1.1.0")
    let installed = Recorder<ReaderError?>()
    run.terminal.installAvailableUpdate { installed.append($0) }
    return try await run.outcome(of: installed)
  }

  @Test func aReaderWhoseSMPCharacteristicNeedsPairingFailsTheConnectWithBlueZsError() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    let device = try peer.addReader(
      address: BlueZUpdatePeerTests.address, name: Self.serial,
      options: ["smp_notify_error": .string("org.bluez.Error.NotPermitted")])
    guard case .failure(let error) = try await run.outcome(of: run.startConnect(Self.serial)) else {
      Issue.record("the connect succeeded")
      return
    }
    #expect(error.code == .connectionFailed)
    guard case .dbus(let name, _)? = error.cause else {
      Issue.record("no D-Bus cause: \(error)")
      return
    }
    #expect(name == "org.bluez.Error.NotPermitted")
    #expect(try peer.calls(device) == ["Connect", "Disconnect"])
    #expect(try peer.property(device, "org.bluez.Device1", "Connected")?.bool == false)
  }

  @Test func aReaderThatRefusesTheResetAnswersTheRebootWithItsResultCodeAndStaysConnected() async throws {
    let (run, device) = try await Self.start(required: false)
    defer { run.stop() }
    _ = try await run.connect(Self.serial)
    // MGMT_ERR_EBUSY (10): the OS group refuses the reset.
    try run.peer.smpFault(device, "refuse", .array(.uint32, [.uint32(0), .uint32(5), .uint32(10)]))
    let mark = run.events.count
    let answered = Recorder<ReaderError?>()
    run.terminal.rebootReader { answered.append($0) }
    let error = try #require(try await run.outcome(of: answered))
    #expect(error.code == .rebootFailed)
    #expect(error.cause == .smp(rc: 10, group: 0))
    #expect(
      run.events[mark...].contains {
        if case .didRespondToReboot(_, let e?) = $0 { e.code == .rebootFailed } else { false }
      })
    await run.idle(for: .milliseconds(400))
    #expect(!run.events[mark...].contains { if case .didDisconnect = $0 { true } else { false } })
    #expect(run.terminal.connectedReader?.serialNumber == Self.serial)
    #expect(try run.peer.smpState(device).resets == 0)
  }

  @Test(arguments: [
    "org.bluez.Error.Failed", "org.bluez.Error.NotPermitted", "org.bluez.Error.InProgress",
    "org.bluez.Error.NotConnected",
  ])
  func aRebootWhoseWriteBlueZRefusesFailsAtOnceWithTheDBusError(_ name: String) async throws {
    let (run, device) = try await Self.start(required: false)
    defer { run.stop() }
    _ = try await run.connect(Self.serial)
    try run.peer.smpFault(device, "write_error", .string(name))
    let answered = Recorder<ReaderError?>()
    run.terminal.rebootReader { answered.append($0) }
    // The request's timeout is three seconds: a timeout would say so, not name BlueZ's error.
    let error = try #require(try await run.outcome(of: answered))
    #expect(error.code == .rebootFailed)
    guard case .dbus(let failed, _)? = error.cause else {
      Issue.record("no D-Bus cause: \(error)")
      return
    }
    #expect(failed == name)
    #expect(run.terminal.connectedReader?.serialNumber == Self.serial)
    #expect(try run.peer.smpState(device).resets == 0)
  }

  @Test func anInstallWhoseWritesBlueZRefusesFailsWithTheDBusErrorAndTheReaderKeepsItsVersion() async throws {
    let (run, device) = try await Self.start(required: false)
    defer { run.stop() }
    let reader = try await run.connect(Self.serial)
    #expect(reader.availableUpdate?.deviceSoftwareVersion == "1.1.0")
    try run.peer.smpFault(device, "write_error", .string("org.bluez.Error.Failed"))
    let installed = Recorder<ReaderError?>()
    run.terminal.installAvailableUpdate { installed.append($0) }
    let error = try #require(try await run.outcome(of: installed))
    #expect(error.code == .readerSoftwareUpdateFailedInterrupted)
    #expect(error.cause == .dbus(name: "org.bluez.Error.Failed", message: "Write failed"))
    #expect(try run.peer.smpState(device).version == "1.0.0")
    #expect(run.terminal.connectedReader?.availableUpdate?.deviceSoftwareVersion == "1.1.0")
  }

  @Test func aReaderThatRefusesTheUploadFailsTheInstallWithTheImageGroupsResultCode() async throws {
    let (run, device) = try await Self.start(required: false)
    defer { run.stop() }
    // IMG_MGMT_ERR_NO_FREE_SLOT (9).
    try run.peer.smpFault(device, "refuse", .array(.uint32, [.uint32(1), .uint32(1), .uint32(9)]))
    let error = try #require(try await Self.install(run))
    #expect(error.code == .readerSoftwareUpdateFailedReaderError)
    #expect(error.cause == .smp(rc: 9, group: 1))
    #expect(Self.finishErrors(run.events[...]).map { $0?.cause } == [.smp(rc: 9, group: 1)])
    let state = try run.peer.smpState(device)
    #expect(state.version == "1.0.0" && state.resets == 0)
    #expect(run.terminal.connectedReader?.deviceSoftwareVersion == "1.0.0")
    #expect(run.terminal.connectedReader?.availableUpdate?.deviceSoftwareVersion == "1.1.0")
  }

  @Test func answersLaterThanTheChunkTimeoutFailTheRequiredUpdateAsInterrupted() async throws {
    let (run, device) = try await Self.start(required: true)
    defer { run.stop() }
    // Past 30 % every answer takes a second: the chunk (400 ms) and its one retry time out.
    try run.peer.smpFault(device, "slow_after_fraction", .double(0.3))
    let outcome = try await run.outcome(of: run.startConnect(Self.serial))
    let codes = Self.finishErrors(run.events[...]).map { $0?.code }
    #expect(codes == [.readerSoftwareUpdateFailedInterrupted])
    guard case .failure(let error) = outcome else {
      Issue.record("the connect succeeded")
      return
    }
    #expect(error.code == .readerSoftwareUpdateFailedInterrupted)
    let state = try run.peer.smpState(device)
    #expect(state.version == "1.0.0" && state.resets == 0)
    // The chunk that got no answer in time was sent once more before the update gave up.
    let offsets = state.uploadOffsets
    #expect(offsets.count >= 2 && offsets.suffix(2).first == offsets.last)
  }

  @Test func anAnswerWithAnotherSequenceNumberIsDroppedAndTheChunkSentAgain() async throws {
    // A chunk timeout no busy machine reaches by itself: the one retry is the dropped answer's.
    let (run, device) = try await Self.start(required: true, chunk: .milliseconds(1500))
    defer { run.stop() }
    // The answer to the first chunk sent past 30 % carries the next sequence number instead.
    try run.peer.smpFault(device, "wrong_sequence_after_fraction", .double(0.3))
    let reader = try await run.connect(Self.serial)
    #expect(reader.deviceSoftwareVersion == "1.1.0")
    #expect(Self.finishErrors(run.events[...]).map { $0?.code } == [nil])
    // The chunk whose answer was dropped went out again at the same offset, after its timeout.
    let offsets = try run.peer.smpState(device).uploadOffsets
    let repeated = offsets.indices.dropFirst().filter { offsets[$0] == offsets[$0 - 1] }.map { offsets[$0] }
    #expect(repeated.count == 1, "\(offsets)")
    #expect(repeated.allSatisfy { Double($0) >= 0.3 * Double(Self.image.count) - 250 }, "\(offsets)")
  }

  @Test func anAnswerThatIsNotCBORFailsTheInstallAndTheReaderKeepsItsImage() async throws {
    let (run, device) = try await Self.start(required: false)
    defer { run.stop() }
    try run.peer.smpFault(device, "malformed_answer", .array(.uint32, [.uint32(1), .uint32(1)]))
    let error = try #require(try await Self.install(run))
    #expect(error.code == .readerSoftwareUpdateFailedReaderError)
    #expect(error.message.contains("malformed"), "\(error.message)")
    let state = try run.peer.smpState(device)
    #expect(state.version == "1.0.0" && state.resets == 0)
    #expect(run.terminal.connectedReader?.deviceSoftwareVersion == "1.0.0")
  }
}
