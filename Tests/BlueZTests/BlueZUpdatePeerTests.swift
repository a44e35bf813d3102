import BlueZ
import DBus
import Foundation
import ReaderKit
import Testing

/// Reboots and software updates of a `Terminal` over `BlueZCentral` against the D-Bus peer, whose readers'
/// SMP characteristic is served by `smp_device.py` (MCUmgr's OS and image groups, MCUboot's slots).
@Suite(.timeLimit(.minutes(1)), .enabled(if: BlueZPeer.enabled, BlueZPeer.skipNote))
struct BlueZUpdatePeerTests {
  static let address = "C0:00:00:00:00:01"
  static let serial = "STRM2-0001"
  static let image = UpdateImages.image(1, 1, 0, bodySize: 20_000)

  /// A peer with one reader running 1.0.0, and a terminal whose catalog offers `image` as 1.1.0,
  /// required `requiredIn` seconds from now.
  static func start(requiredIn: TimeInterval?, store: any ReaderStore = InMemoryReaderStore()) async throws -> (
    TerminalRun, device: String
  ) {
    let peer = try await BlueZPeer.start()
    do {
      let catalog = try requiredIn.map { try UpdateImages.catalog(image, requiredIn: $0) }
      let run = try TerminalRun(peer: peer, store: store, updateCatalog: catalog)
      let device = try peer.addReader(address: address, name: serial, options: ["firmware": .string("1.0.0")])
      // A round trip of a Bluetooth LE link (a connection interval or two), so an upload takes a while.
      try peer.smpFault(device, "answer_delay", .double(0.015))
      return (run, device)
    } catch {
      peer.stop()
      throw error
    }
  }

  static func progress(_ events: ArraySlice<TerminalEvent.Kind>) -> [Double] {
    events.compactMap { if case .didReportReaderSoftwareUpdateProgress(_, let value) = $0 { value } else { nil } }
  }

  static func finishes(_ events: ArraySlice<TerminalEvent.Kind>) -> [ReaderError.Code?] {
    events.compactMap { if case .didFinishInstallingUpdate(_, _, let error) = $0 { .some(error?.code) } else { nil } }
  }

  static func disconnects(_ events: ArraySlice<TerminalEvent.Kind>) -> [DisconnectReason] {
    events.compactMap { if case .didDisconnect(_, let reason) = $0 { reason } else { nil } }
  }

  @Test func rebootResetsTheReaderOverSMPAndTheTerminalWinsItBackAfterTheRequestedReboot() async throws {
    let (run, device) = try await Self.start(requiredIn: nil)
    defer { run.stop() }
    _ = try await run.connect(Self.serial)
    let mark = run.events.count
    let answered = Recorder<ReaderError?>()
    run.terminal.rebootReader { answered.append($0) }
    #expect(try await run.outcome(of: answered) == nil)
    try await run.wait(for: "readerDidSucceedReconnect", after: mark) {
      if case .readerDidSucceedReconnect = $0 { true } else { false }
    }
    let sequence = run.events[mark...].compactMap { event -> String? in
      switch event {
      case .didRespondToReboot(_, let error): "didRespondToReboot(\(error.map { "\($0.code)" } ?? "nil"))"
      case .didStartReconnect(_, let reason): "didStartReconnect(\(reason))"
      case .readerDidSucceedReconnect: "readerDidSucceedReconnect"
      case .didDisconnect(_, let reason): "didDisconnect(\(reason))"
      default: nil
      }
    }
    #expect(
      sequence == ["didRespondToReboot(nil)", "didStartReconnect(rebootRequested)", "readerDidSucceedReconnect"])
    #expect(try run.peer.smpState(device).resets == 1)
    #expect(try run.peer.calls(device) == ["Connect", "Connect"])
    #expect(run.terminal.connectedReader?.serialNumber == Self.serial)
  }

  @Test func aRequiredUpdateInstallsWhileConnectingWithProgressFromZeroToOne() async throws {
    let (run, device) = try await Self.start(requiredIn: -60)
    defer { run.stop() }
    let reader = try await run.connect(Self.serial)
    #expect(reader.deviceSoftwareVersion == "1.1.0")
    let progress = Self.progress(run.events[...])
    #expect(progress.first == 0 && progress.last == 1)
    #expect(progress == progress.sorted() && progress.count > 4, "\(progress)")
    #expect(Self.finishes(run.events[...]) == [nil])
    // The restart into the new image is kept from the app.
    #expect(Self.disconnects(run.events[...]).isEmpty)
    let state = try run.peer.smpState(device)
    #expect(state.version == "1.1.0" && state.confirmed && state.hash == UpdateImages.hash(Self.image))
    #expect(state.resets == 1)
    #expect(try run.peer.calls(device) == ["Connect", "Connect"])
  }

  @Test func cancellingTheRequiredUpdateStopsTheUploadAndTheReaderKeepsItsVersion() async throws {
    let (run, device) = try await Self.start(requiredIn: -60)
    defer { run.stop() }
    // Slow answers, and past 20 % a second per chunk, so the upload is still going when the cancel
    // comes, however busy the machine.
    try run.peer.smpFault(device, "answer_delay", .double(0.05))
    try run.peer.smpFault(device, "slow_after_fraction", .double(0.2))
    let outcome = try await run.startConnect(Self.serial)
    try await run.wait(for: "progress past 10 %") { event in
      if case .didReportReaderSoftwareUpdateProgress(_, let value) = event { value >= 0.1 } else { false }
    }
    let cancelable = try #require(run.delegate.installCancelable)
    let canceled = Recorder<Bool>()
    cancelable.cancel { _ in canceled.append(true) }
    _ = try await run.outcome(of: canceled)
    guard case .failure(let error) = try await run.outcome(of: outcome) else {
      Issue.record("the connect succeeded")
      return
    }
    #expect(error.code == .unsupportedReaderVersion)
    #expect(Self.finishes(run.events[...]) == [.canceled])
    // The reader stopped taking chunks once the cancel completed.
    let chunks = try run.peer.smpState(device).uploadOffsets.count
    await run.idle(for: .milliseconds(300))
    let state = try run.peer.smpState(device)
    #expect(state.uploadOffsets.count == chunks)
    #expect(state.version == "1.0.0" && state.resets == 0)
  }

  @Test func aDropAtFortyPercentFailsThisConnectAndTheNextOneResumesFromTheReadersOffset() async throws {
    let (run, device) = try await Self.start(requiredIn: -60)
    defer { run.stop() }
    try run.peer.smpFault(device, "drop_at_fraction", .double(0.4))
    let first = try await run.outcome(of: run.startConnect(Self.serial))
    guard case .failure(let error) = first else {
      Issue.record("the first connect succeeded")
      return
    }
    #expect(error.code == .readerSoftwareUpdateFailedInterrupted)
    let before = try run.peer.smpState(device)
    #expect(before.version == "1.0.0")
    let reader = try await run.connect(Self.serial)
    #expect(reader.deviceSoftwareVersion == "1.1.0")
    // After the probe at offset 0 (which answers the offset the reader reached), every chunk is past 40 %.
    let offsets = try run.peer.smpState(device).uploadOffsets.dropFirst(before.uploadOffsets.count)
    #expect(offsets.first == 0)
    #expect(offsets.dropFirst().allSatisfy { Double($0) >= 0.4 * Double(Self.image.count) })
    let progress = Self.progress(run.events[...])
    #expect(progress.last == 1)
  }

  @Test func aFailedConfirmLeavesTheReaderOnItsOldImage() async throws {
    let (run, device) = try await Self.start(requiredIn: -60)
    defer { run.stop() }
    try run.peer.smpFault(device, "fail_confirm", .boolean(true))
    let outcome = try await run.outcome(of: run.startConnect(Self.serial))
    #expect(Self.finishes(run.events[...]) == [.readerSoftwareUpdateFailedReaderError])
    // The reader ran the latest software a day ago: the grace rule connects it, the update pending.
    let reader = try outcome.get()
    #expect(reader.deviceSoftwareVersion == "1.0.0")
    #expect(reader.availableUpdate?.deviceSoftwareVersion == "1.1.0")
    let state = try run.peer.smpState(device)
    #expect(state.version == "1.0.0" && state.confirmed && state.resets == 2)
    #expect(Self.disconnects(run.events[...]).isEmpty)
  }

  @Test func anOptionalUpdateInstallsWithInstallAvailableUpdate() async throws {
    let (run, device) = try await Self.start(requiredIn: 7 * 86_400)
    defer { run.stop() }
    let reader = try await run.connect(Self.serial)
    #expect(reader.deviceSoftwareVersion == "1.0.0")
    #expect(reader.availableUpdate?.deviceSoftwareVersion == "1.1.0")
    let mark = run.events.count
    let installed = Recorder<ReaderError?>()
    run.terminal.installAvailableUpdate { installed.append($0) }
    #expect(try await run.outcome(of: installed) == nil)
    #expect(run.terminal.connectedReader?.deviceSoftwareVersion == "1.1.0")
    let progress = Self.progress(run.events[mark...])
    #expect(progress.first == 0 && progress.last == 1 && progress == progress.sorted())
    let state = try run.peer.smpState(device)
    #expect(state.version == "1.1.0" && state.confirmed)
  }

  @Test(arguments: [false, true])
  func aLaunchReconnectsToTheReaderSavedInTheFileStore(leftConnected: Bool) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readerkit-launch-\(UUID())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = FileReaderStore(fileURL: directory.appendingPathComponent("last-reader.json"))
    let (first, device) = try await Self.start(requiredIn: nil, store: store)
    defer { first.stop() }
    _ = try await first.connect(Self.serial)
    try await first.wait(for: "didSaveReader") { if case .didSaveReader(_, nil) = $0 { true } else { false } }
    // The app ends. BlueZ keeps a link whose client went away; or the reader drops it.
    first.central.close()
    if !leftConnected { try first.peer.call("DropLink", [.objectPath(device), .string("org.bluez.Reason.Remote")]) }
    // The next launch: a new central and terminal on the same store.
    let second = try TerminalRun(peer: first.peer, store: store)
    defer { second.stop() }
    let launched = Recorder<Result<Reader?, ReaderError>>()
    second.terminal.reconnectToSavedReader(delegate: second.delegate, timeout: .seconds(10)) { launched.append($0) }
    let outcome = try await second.outcome(of: launched)
    guard case .success(let reader) = outcome else {
      // What the second launch heard and what BlueZ was asked, so a failure says where the search stalled.
      let adapter = String(device[..<(device.lastIndex(of: "/") ?? device.endIndex)])
      let names = second.events.map { "\($0)".prefix(80) }.joined(separator: "; ")
      throw BlueZPeer.Failure(
        description: "\(outcome); events: \(names); device calls: \(try second.peer.calls(device)); "
          + "adapter calls: \(try second.peer.calls(adapter))")
    }
    #expect(reader?.serialNumber == Self.serial && reader?.locationId == "tml_1")
    #expect(second.terminal.connectionStatus == .connected)
    #expect(second.events.contains { if case .didFindSavedReader = $0 { true } else { false } })
    #expect(try second.peer.calls(device) == ["Connect", "Connect"])
  }
}
