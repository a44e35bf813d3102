import Foundation
import TestSupport
import Testing

/// The `--bluez` commands and `replay` through the built `readerctl`, against the D-Bus peer.
@Suite(.timeLimit(.minutes(1))) struct ReaderctlBlueZTests {
  static let executable: URL = {
    let candidates = [
      URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(), Bundle.main.bundleURL,
      Bundle.main.bundleURL.deletingLastPathComponent(),
    ]
    return candidates.map { $0.appendingPathComponent("readerctl") }.first {
      FileManager.default.isExecutableFile(atPath: $0.path)
    } ?? candidates[0].appendingPathComponent("readerctl")
  }()

  struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
    var elapsed: Duration
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
  }

  /// Runs the built `readerctl` to its end, reading its output and waiting for it on a thread of its
  /// own, taking turns with the other `readerctl` runs (`ChildProcessGate.shared`: as many at once as the
  /// machine has cores; `elapsed` counts from the start, not the wait for a turn); one still running
  /// after 50 s (or `ChildProcessGate.limitAfterAnOverrun`, once a run was killed at its limit) is killed
  /// (SIGTERM, then SIGKILL) and the run throws.
  static func readerctl(_ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
    try await ChildProcessGate.shared.withTurn(killedOnCancel: { child in
      let process = Process()
      process.executableURL = executable
      process.arguments = arguments
      process.environment = environment.merging(["PATH": "/usr/bin:/bin", "TERM": "dumb"]) { a, _ in a }
      let out = Pipe()
      let err = Pipe()
      process.standardOutput = out
      process.standardError = err
      let started = ContinuousClock.now
      try process.runWithSignalsUnblocked()
      child.started(process)
      defer { child.ended() }
      var stdout = Data()
      var stderr = Data()
      let (limit, shortened) = ChildProcessGate.shared.limit(.seconds(50))
      do {
        try process.bounded(within: limit, grace: ChildProcessGate.shared.grace()) {
          stdout = out.fileHandleForReading.readDataToEndOfFile()
          stderr = err.fileHandleForReading.readDataToEndOfFile()
          process.waitUntilExit()
        }
      } catch let timeout as ChildProcessTimeout {
        ChildProcessGate.shared.noteOverrun(of: timeout.command)
        throw BlueZPeer.Failure(description: "\(timeout)" + (shortened.map { " (\($0))" } ?? ""))
      }
      return Run(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self), elapsed: ContinuousClock.now - started)
    })
  }

  /// A directory of its own for a test's files, removed at the end.
  final class Scratch {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("readerctl-bluez-\(UUID().uuidString)")
    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
  }

  /// `[00:00:01.2] text` without its stamp.
  static func unstamped(_ line: String) -> String {
    line.hasPrefix("[") ? String(line.drop { $0 != "]" }.dropFirst(2)) : line
  }

  static let noBus = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/system_bus_socket"]

  @Test(arguments: [
    (["discover", "--bluez"], "discovery"),
    (["connect", "STRM2-0001", "--bluez", "--location", "tml_1"], "connecting"),
    (["reconnect", "--bluez"], "reconnecting"),
    (["update", "--bluez", "--catalog", "/nonexistent/manifest.json"], "the update"),
  ])
  func withoutASystemBusEachBlueZCommandExits69WithinASecondSayingSo(_ arguments: [String], _ what: String) async throws
  {
    let run = try await Self.readerctl(arguments, environment: Self.noBus)
    #expect(run.status == 69)
    #expect(run.stderr.hasPrefix("readerctl: \(what) failed: no D-Bus system bus at unix:path=/nonexistent/"))
    #expect(run.stdout.isEmpty)
    #expect(run.elapsed < Duration.seconds(1).allowingForSlowdown)
    let json = try await Self.readerctl(arguments + ["--json"], environment: Self.noBus)
    #expect(
      json.status == 69 && json.stdout.contains(#""exitStatus":69"#) && json.stdout.contains("bluetoothUnsupported"))
  }

  @Test(.enabled(if: BlueZPeer.enabled, BlueZPeer.skipNote))
  func withoutBluetoothdOrTheAdapterCommandsExit69SayingWhich() async throws {
    let peer = try await BlueZPeer.start()
    defer { peer.stop() }
    let noAdapter = try await Self.readerctl(
      ["discover", "--bluez", "--adapter", "hci7"], environment: peer.environment)
    #expect(noAdapter.status == 69)
    #expect(noAdapter.stderr == "readerctl: discovery failed: no Bluetooth adapter named hci7\n")
    peer.stopBluetoothd()
    let noBluetoothd = try await Self.readerctl(
      ["connect", "STRM2-0001", "--bluez", "--location", "tml_1"], environment: peer.environment)
    #expect(noBluetoothd.status == 69)
    #expect(noBluetoothd.stderr.hasPrefix("readerctl: connecting failed: bluetoothd is not running"))
    #expect(noBluetoothd.elapsed < Duration.seconds(1).allowingForSlowdown)
  }

  @Test(.enabled(if: BlueZPeer.enabled, BlueZPeer.skipNote))
  func discoverListsTheReadersBlueZReportsNearestFirst() async throws {
    let peer = try await BlueZPeer.start()
    defer { peer.stop() }
    try peer.addReader(address: "C0:00:00:00:00:01", name: "STRM2-0001", rssi: -70)
    try peer.addReader(address: "C0:00:00:00:00:02", name: "WPC32-0002", rssi: -50)
    let run = try await Self.readerctl(["discover", "--bluez", "--timeout", "1.5"], environment: peer.environment)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.hasPrefix("Scanning for readers through BlueZ…\n"))
    let table = run.lines.filter { $0.contains("STRM2-0001") || $0.contains("WPC32-0002") }
    #expect(table.last?.contains("STRM2-0001") == true && table.dropLast().last?.contains("WPC32-0002") == true)
    #expect(run.lines.last == "Found 2 readers in 1.5 s.")
  }

  @Test(.enabled(if: BlueZPeer.enabled, BlueZPeer.skipNote))
  func connectSavesTheReaderAndReconnectFindsItAgainAsTheSimulatedFormsDo() async throws {
    let peer = try await BlueZPeer.start()
    defer { peer.stop() }
    let scratch = try Scratch()
    let store = scratch.path("last-reader.json")
    try peer.addReader(
      address: "C0:00:00:00:00:01", name: "STRM2-0001",
      options: ["firmware": .string("1.0.0"), "serial": .string("A1B2C3"), "manufacturer": .string("Acme Inc.")])
    let connect = try await Self.readerctl(
      ["connect", "STRM2-0001", "--bluez", "--location", "tml_1", "--store", store], environment: peer.environment)
    #expect(connect.status == 0, "\(connect.stderr)")
    #expect(
      connect.lines.map(Self.unstamped) == [
        "Looking for STRM2-0001…", "Connecting STRM2-0001 to location tml_1…",
        "Connected to Stripe Reader M2 STRM2-0001 at tml_1; saved in \(store).",
        "Device information (read over GATT): serial number A1B2C3, firmware 1.0.0, manufacturer Acme Inc.",
      ])
    #expect(try String(contentsOfFile: store, encoding: .utf8).contains("STRM2-0001"))
    // A new process, as at an app's launch; the link BlueZ kept from the last one is taken over.
    let reconnect = try await Self.readerctl(
      ["reconnect", "--bluez", "--store", store, "--json"], environment: peer.environment)
    #expect(reconnect.status == 0, "\(reconnect.stderr)")
    #expect(reconnect.lines.last?.contains(#""event":"result","exitStatus":0,"error":null"#) == true)
    #expect(reconnect.stdout.contains(#""event":"didFindSavedReader""#))
    #expect(
      reconnect.lines.last?.contains(
        #""deviceInformation":{"serialNumber":"A1B2C3","modelNumber":null,"firmwareRevision":"1.0.0","#
          + #""hardwareRevision":null,"manufacturerName":"Acme Inc."}"#) == true, "\(reconnect.stdout)")
    // A reader that is not there: the simulated form's message and status.
    let missing = try await Self.readerctl(
      ["connect", "NOPE-1", "--bluez", "--location", "tml_1", "--store", store, "--timeout", "1"],
      environment: peer.environment)
    #expect(missing.status == 69)
    #expect(
      missing.stderr
        == "readerctl: connecting failed: readerNotFound: reader NOPE-1 not found within 1 s; nearby: none\n")
  }

  /// A manifest offering `image` as 1.1.0 for the Stripe M2, required `requiredAt`.
  static func manifest(in scratch: Scratch, image: [UInt8], requiredAt: String) throws -> String {
    let sha = image.isEmpty ? "" : UpdateImages.hex(image)
    let manifest = """
      {"manifestVersion": 1, "releases": [{"deviceType": "stripeM2", "locations": "all", "version": "1.1.0",
      "releasedAt": "2026-01-01T00:00:00Z", "requiredAt": "\(requiredAt)", "components": ["firmware"],
      "durationEstimate": "estimate1To2Minutes",
      "image": {"url": "reader-1.1.0.bin", "size": \(image.count), "sha256": "\(sha)"}}]}
      """
    try Data(image).write(to: URL(fileURLWithPath: scratch.path("reader-1.1.0.bin")))
    try Data(manifest.utf8).write(to: URL(fileURLWithPath: scratch.path("manifest.json")))
    return scratch.path("manifest.json")
  }

  @Test(.enabled(if: BlueZPeer.enabled, BlueZPeer.skipNote))
  func updateChecksARealReaderAndInstallsTheCatalogsImageOverSMP() async throws {
    let peer = try await BlueZPeer.start()
    defer { peer.stop() }
    let scratch = try Scratch()
    let image = UpdateImages.image(1, 1, 0, bodySize: 20_000)
    let catalog = try Self.manifest(in: scratch, image: image, requiredAt: "2099-01-01T00:00:00Z")
    let device = try peer.addReader(
      address: "C0:00:00:00:00:01", name: "STRM2-0001", options: ["firmware": .string("1.0.0")])
    try peer.smpFault(device, "answer_delay", .double(0.01))
    let check = try await Self.readerctl(
      ["update", "--bluez", "--catalog", catalog, "--serial", "STRM2-0001"], environment: peer.environment)
    #expect(check.status == 0, "\(check.stderr)")
    #expect(check.stdout.contains("STRM2-0001 (Stripe Reader M2) runs 1.0.0 at location tml_readerctl; catalog "))
    #expect(check.stdout.contains("Update 1.1.0 applies and is optional until 2099-01-01T00:00:00Z"))
    #expect(check.lines.last == "Add --install to install it.")
    #expect(try peer.smpState(device).version == "1.0.0")
    let install = try await Self.readerctl(
      ["update", "--bluez", "--catalog", catalog, "--install"], environment: peer.environment)
    #expect(install.status == 0, "\(install.stderr)")
    let narration = install.lines.map(Self.unstamped)
    #expect(narration.contains("Installing 1.1.0 (firmware; estimate: 1-2 minutes)…"))
    #expect(narration.last == "STRM2-0001 now runs 1.1.0.")
    let state = try peer.smpState(device)
    #expect(state.version == "1.1.0" && state.confirmed && state.hash == UpdateImages.hash(image))
  }

  @Test(
    .enabled(if: BlueZPeer.enabled, BlueZPeer.skipNote),
    arguments: [["connect", "STRM2-0001", "--location", "tml_1"], ["update", "--install"], ["discover", "--json"]])
  func aRecordedRunReplaysWithTheSameOutputAndStatusWithoutBluetooth(_ command: [String]) async throws {
    let peer = try await BlueZPeer.start()
    defer { peer.stop() }
    let scratch = try Scratch()
    let image = UpdateImages.image(1, 1, 0, bodySize: 8_000)
    let catalog = try Self.manifest(in: scratch, image: image, requiredAt: "2026-02-01T00:00:00Z")
    let device = try peer.addReader(
      address: "C0:00:00:00:00:01", name: "STRM2-0001", options: ["firmware": .string("1.0.0")])
    try peer.addReader(address: "C0:00:00:00:00:02", name: "WPC32-0002", rssi: -65)
    try peer.smpFault(device, "answer_delay", .double(0.01))
    // A scan lasts its timeout; a connect's is only a bound, generous for a busy machine.
    let timeout = command[0] == "discover" ? "2" : "20"
    var arguments = [command[0], "--bluez", "--record", scratch.path("run.jsonl"), "--timeout", timeout]
    arguments += command.dropFirst()
    if command[0] == "update" { arguments += ["--catalog", catalog] }
    if command[0] == "connect" { arguments += ["--store", scratch.path("store.json")] }
    let live = try await Self.readerctl(arguments, environment: peer.environment)
    #expect(live.status == 0, "\(live.stderr)")
    peer.stop()
    let replayed = try await Self.readerctl(["replay", scratch.path("run.jsonl")], environment: Self.noBus)
    #expect(replayed.status == live.status, "\(replayed.stderr)")
    #expect(replayed.stdout == live.stdout)
    #expect(replayed.stderr == live.stderr)
    #expect(replayed.elapsed < live.elapsed)
  }

  @Test func replayRefusesAMalformedRecordingAndSaysWhere() async throws {
    let scratch = try Scratch()
    let header =
      #"{"header":{"arguments":["connect","S","--bluez","--location","L"],"format":"readerkit-transport-record/1","#
      + #""isPoweredOn":true,"notes":{},"startedAt":818063533.9},"record":"header"}"#
    try Data((header + "\n" + #"{"record":"event","t":"x","name":"startScan"}"# + "\n").utf8)
      .write(to: URL(fileURLWithPath: scratch.path("bad.jsonl")))
    let run = try await Self.readerctl(["replay", scratch.path("bad.jsonl")])
    #expect(run.status == 65)
    #expect(run.stderr.hasPrefix("readerctl: the recording \(scratch.path("bad.jsonl")) is malformed: "))
    #expect(run.stderr.contains("line=2"))
    let missing = try await Self.readerctl(["replay", scratch.path("none.jsonl")])
    #expect(missing.status == 66)
  }

  @Test func aReplayThatLeavesItsRecordingSaysWhereAndFails() async throws {
    let scratch = try Scratch()
    // A recording whose terminal scanned, saw nothing, and was asked for a reader it never connected.
    let lines = [
      TransportRecordLines.header(["connect", "S-1", "--bluez", "--location", "L", "--timeout", "1"]),
      #"{"name":"startScan","record":"command","t":"0.0"}"#,
      #"{"name":"connect","record":"command","serialNumber":"OTHER","t":"0.5"}"#,
    ]
    try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: scratch.path("edited.jsonl")))
    let run = try await Self.readerctl(["replay", scratch.path("edited.jsonl")])
    #expect(run.status == 65)
    #expect(run.stderr.contains("readerctl: the replay departed from the recording: "))
  }
}

/// Lines of recordings written by hand.
enum TransportRecordLines {
  static func header(_ arguments: [String]) -> String {
    let quoted = arguments.map { "\"\($0)\"" }.joined(separator: ",")
    return #"{"header":{"arguments":["# + quoted + #"],"format":"readerkit-transport-record/1","#
      + #""isPoweredOn":true,"notes":{},"startedAt":818063533.9},"record":"header"}"#
  }
}
