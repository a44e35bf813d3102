import Foundation
import MCUmgr
import ReaderCore
import ReaderKit
import Testing

/// A `MobileReaderDelegate` and `DiscoveryDelegate` that writes down what the terminal says.
nonisolated final class SMPTerminalRecorder: MobileReaderDelegate, DiscoveryDelegate {
  enum Call: Equatable, Sendable {
    case started(String, cancelable: Bool)
    case progress(Float)
    case finished(String?, ReaderError.Code?)
    case disconnected(DisconnectReason)
    case startedReconnect(DisconnectReason)
    case succeededReconnect
    case available(String)
  }

  private let state = Locked<(calls: [Call], discovered: [Reader], cancelables: [Cancelable])>(([], [], []))
  var calls: [Call] { state.withLock { $0.calls } }
  var discovered: [Reader] { state.withLock { $0.discovered } }
  var installCancelable: Cancelable? { state.withLock { $0.cancelables.last } }
  var progress: [Float] { calls.compactMap { if case .progress(let value) = $0 { value } else { nil } } }
  var finishes: [Call] { calls.filter { if case .finished = $0 { true } else { false } } }

  private func note(_ call: Call) { state.withLock { $0.calls.append(call) } }

  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) {
    state.withLock { $0.discovered = readers }
  }
  func reader(_ reader: Reader, didStartInstallingUpdate update: ReaderSoftwareUpdate, cancelable: Cancelable?) {
    state.withLock {
      $0.calls.append(.started(update.deviceSoftwareVersion, cancelable: cancelable != nil))
      if let cancelable { $0.cancelables.append(cancelable) }
    }
  }
  func reader(_ reader: Reader, didReportReaderSoftwareUpdateProgress progress: Float) { note(.progress(progress)) }
  func reader(_ reader: Reader, didFinishInstallingUpdate update: ReaderSoftwareUpdate?, error: (any Error)?) {
    note(.finished(update?.deviceSoftwareVersion, (error as? ReaderError)?.code))
  }
  func reader(_ reader: Reader, didDisconnect reason: DisconnectReason) { note(.disconnected(reason)) }
  func reader(_ reader: Reader, didStartReconnect cancelable: Cancelable, disconnectReason: DisconnectReason) {
    note(.startedReconnect(disconnectReason))
  }
  func readerDidSucceedReconnect(_ reader: Reader) { note(.succeededReconnect) }
  func reader(_ reader: Reader, didReportAvailableUpdate update: ReaderSoftwareUpdate) {
    note(.available(update.deviceSoftwareVersion))
  }
}

/// A value set once from a completion, read by the test.
final class Box<Value: Sendable>: Sendable {
  private let stored = Locked<Value?>(nil)
  var value: Value? { stored.withLock { $0 } }
  func set(_ value: Value) { stored.withLock { $0 = value } }
}

/// A `Terminal` over the reference central and the SMP link, with a catalog holding one MCUboot image.
struct SMPTerminalHarness {
  static let serial = SMPLinkHarness.serial
  let clock = VirtualClock()
  let central: FakeSMPCentral
  let device: FakeSMPDevice
  let link: SMPReaderLink
  let terminal: Terminal
  let catalog = InMemoryUpdateCatalog(sha256: { SHA256Checksum.compute($0) })
  let recorder = SMPTerminalRecorder()
  let image = TestImages.image(bodySize: 30_000)

  init(requiredIn: TimeInterval = -60) throws {
    central = FakeSMPCentral(clock: clock)
    device = FakeSMPDevice(serialNumber: Self.serial, clock: clock)
    central.add(device)
    link = SMPReaderLink(transports: central, scheduler: clock, sha256: TestImages.sha256)
    terminal = Terminal(
      central: central, readerLink: link, scheduler: clock, store: InMemoryReaderStore(), updateCatalog: catalog)
    let url = URL(string: "https://updates.example/reader-1.1.0.bin")!
    let data = Data(image)
    catalog.add(
      UpdateRelease(
        deviceType: .stripeM2, version: try SoftwareVersion("1.1.0"),
        releasedAt: Terminal.simulationEpoch.addingTimeInterval(-86_400),
        requiredAt: Terminal.simulationEpoch.addingTimeInterval(requiredIn), components: .firmware,
        durationEstimate: .estimate1To2Minutes,
        image: FirmwareImage(url: url, size: data.count, sha256: SHA256Checksum.compute(data))),
      image: data)
  }

  /// Discovers the reader and starts connecting it; the connect's outcome lands in the returned box.
  func startConnect() throws -> Box<Result<Reader, ReaderError>> {
    let scan = try BluetoothScanDiscoveryConfiguration.Builder().setSimulated(false).build()
    let discovery = terminal.discoverReaders(scan, delegate: recorder) { _ in }
    clock.advance(by: .seconds(1))
    let reader = try #require(
      recorder.discovered.first { $0.serialNumber == Self.serial }, "the reader was not discovered")
    let config = try BluetoothConnectionConfiguration.Builder(delegate: recorder, locationId: "loc_1").build()
    let outcome = Box<Result<Reader, ReaderError>>()
    _ = discovery
    terminal.connectReader(reader, connectionConfig: config) { outcome.set($0) }
    return outcome
  }

  func run(until condition: () -> Bool, limit: Duration = .seconds(900)) -> Bool {
    // By steps rather than until the clock reads the end: a clock that stops moving fails the test.
    for _ in 0..<Int((limit / .milliseconds(50)).rounded(.up)) {
      if condition() { return true }
      clock.advance(by: .milliseconds(50))
    }
    return condition()
  }
}

@Suite struct SMPTerminalTests {
  @Test func aRequiredUpdateInstallsOverSMPBeforeTheConnectCompletes() throws {
    let h = try SMPTerminalHarness()
    let outcome = try h.startConnect()
    #expect(h.run { outcome.value != nil })
    let reader = try #require(try outcome.value?.get())
    #expect(reader.deviceSoftwareVersion == "1.1.0")
    #expect(h.recorder.calls.first == .started("1.1.0", cancelable: true))
    #expect(h.recorder.finishes == [.finished("1.1.0", nil)])
    #expect(h.recorder.progress.first == 0 && h.recorder.progress.last == 1)
    #expect(h.recorder.progress == h.recorder.progress.sorted())
    #expect(!h.recorder.calls.contains { if case .disconnected = $0 { true } else { false } })
    #expect(h.device.primary.hash == TestImages.hash(h.image) && h.device.primary.confirmed)
    #expect(h.terminal.connectionStatus == .connected)
  }

  @Test func cancellingTheRequiredUpdateStopsTheUploadAndTheReaderKeepsItsVersion() throws {
    let h = try SMPTerminalHarness()
    let outcome = try h.startConnect()
    #expect(h.run { (h.recorder.progress.last ?? 0) >= 0.3 })
    let cancelable = try #require(h.recorder.installCancelable)
    let canceled = Box<Bool>()
    cancelable.cancel { _ in canceled.set(true) }
    #expect(h.run { outcome.value != nil && canceled.value != nil })
    #expect(h.recorder.finishes == [.finished("1.1.0", .canceled)])
    guard case .failure(let error)? = outcome.value else { Issue.record("connected"); return }
    #expect(error.code == .unsupportedReaderVersion)
    let chunks = h.device.requests.filter { $0.group == 1 && $0.command == 1 }.count
    h.clock.advance(by: .seconds(60))
    #expect(h.device.requests.filter { $0.group == 1 && $0.command == 1 }.count == chunks)
    #expect(h.device.primary.hash == FakeSMPDevice.oldHash)
  }

  @Test func aDropAtFortyPercentFailsThisInstallAndTheNextConnectResumesIt() throws {
    let h = try SMPTerminalHarness()
    h.device.dropAtFraction = 0.4
    let first = try h.startConnect()
    #expect(h.run { first.value != nil })
    guard case .failure(let error)? = first.value else { Issue.record("connected"); return }
    #expect(error.code == .readerSoftwareUpdateFailedInterrupted)
    #expect(h.device.primary.hash == FakeSMPDevice.oldHash)
    let before = h.device.requests.count
    let second = try h.startConnect()
    #expect(h.run { second.value != nil })
    #expect(try second.value?.get().deviceSoftwareVersion == "1.1.0")
    let offsets = h.device.requests.dropFirst(before).compactMap { $0.command == 1 && $0.group == 1 ? $0.offset : nil }
    #expect(offsets.dropFirst().allSatisfy { Double($0) >= 0.4 * Double(h.image.count) })
  }

  @Test func aFailedConfirmLeavesTheReaderOnItsOldImageAndTheGraceRuleConnectsIt() throws {
    let h = try SMPTerminalHarness()
    h.device.failConfirm = true
    let outcome = try h.startConnect()
    #expect(h.run { outcome.value != nil })
    // The reader ran the latest software a day ago: Stripe's grace rule connects it, update pending.
    let reader = try #require(try outcome.value?.get())
    #expect(reader.deviceSoftwareVersion == "1.0.0")
    #expect(reader.availableUpdate?.deviceSoftwareVersion == "1.1.0")
    #expect(h.recorder.finishes == [.finished("1.1.0", .readerSoftwareUpdateFailedReaderError)])
    #expect(h.device.primary.hash == FakeSMPDevice.oldHash && h.device.primary.confirmed)
    #expect(h.device.resets == 2)
  }

  @Test func anOptionalUpdateInstallsWithInstallAvailableUpdate() throws {
    let h = try SMPTerminalHarness(requiredIn: 7 * 86_400)
    let outcome = try h.startConnect()
    #expect(h.run { outcome.value != nil })
    #expect(try outcome.value?.get().availableUpdate?.deviceSoftwareVersion == "1.1.0")
    let done = Box<ReaderError?>()
    _ = h.terminal.installAvailableUpdate { done.set($0) }
    #expect(h.run { done.value != nil })
    #expect(done.value == .some(nil))
    #expect(h.terminal.connectedReader?.deviceSoftwareVersion == "1.1.0")
    #expect(h.device.runningVersion == "1.1.0" && h.device.primary.confirmed)
  }

  @Test func rebootReaderResetsItOverSMPAndTheTerminalReconnectsAfterTheRequestedReboot() throws {
    let h = try SMPTerminalHarness(requiredIn: 7 * 86_400)
    let outcome = try h.startConnect()
    #expect(h.run { outcome.value != nil })
    let rebooted = Box<ReaderError?>()
    _ = h.terminal.rebootReader { rebooted.set($0) }
    #expect(h.run { h.recorder.calls.contains(.succeededReconnect) })
    #expect(rebooted.value == .some(nil))
    #expect(Array(h.recorder.calls.suffix(2)) == [.startedReconnect(.rebootRequested), .succeededReconnect])
    #expect(
      h.central.reported.contains {
        $0.event == .didDisconnect(serialNumber: SMPTerminalHarness.serial, reason: .rebootRequested)
      })
    #expect(h.device.resets == 1)
    #expect(h.terminal.connectionStatus == .connected)
  }

  @Test func aReaderThatDoesNotComeBackFromItsRestartFailsTheConnectAsInterrupted() throws {
    let h = try SMPTerminalHarness()
    h.device.bootTime = .seconds(3_600)
    let outcome = try h.startConnect()
    #expect(h.run { outcome.value != nil })
    guard case .failure(let error)? = outcome.value else { Issue.record("connected"); return }
    #expect(error.code == .readerSoftwareUpdateFailedInterrupted)
    #expect(h.recorder.finishes == [.finished("1.1.0", .readerSoftwareUpdateFailedInterrupted)])
  }
}
