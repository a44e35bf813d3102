import DBus
import Foundation
import ReaderCore
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A private `dbus-daemon` standing in for the system bus, and ReaderKit's BlueZ peer
/// (`Tests/Support/peer/bluez_readers.py`, on python-dbusmock's bluez5 template) owning `org.bluez`
/// on it. Each test starts its own (≈0.3 s), so tests run in parallel and need no reset; every process
/// is stopped by its PID when the peer is stopped (SIGKILL, which no inherited signal mask blocks).
///
/// Where `dbus-daemon` or python-dbusmock is missing the tests skip with one line; with
/// `READERKIT_CI=1` they fail instead.
final class BlueZPeer: Sendable {
  static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
  static let template = packageRoot.appendingPathComponent("Tests/Support/peer/bluez_readers.py")
  static let python = "/usr/bin/python3"
  static let daemon = "/usr/bin/dbus-daemon"
  static let required = ProcessInfo.processInfo.environment["READERKIT_CI"] == "1"

  /// Whether the tools are there (asked once).
  static let available: Bool = {
    guard FileManager.default.isExecutableFile(atPath: daemon), FileManager.default.isExecutableFile(atPath: python)
    else { return false }
    let check = Process()
    check.executableURL = URL(fileURLWithPath: python)
    check.arguments = ["-c", "import dbusmock, dbus, gi"]
    check.standardOutput = FileHandle.nullDevice
    check.standardError = FileHandle.nullDevice
    guard (try? check.runWithSignalsUnblocked()) != nil else { return false }
    // A `static let`, evaluated where nothing can wait asynchronously: bounded instead.
    guard (try? check.waitForExit(within: .seconds(30))) != nil else { return false }
    return check.terminationStatus == 0
  }()

  /// Whether the peer tests run: the tools are there, or `READERKIT_CI=1` requires them.
  static let enabled = available || required
  static let skipNote: Comment =
    "dbus-daemon or python3-dbusmock is missing: `apt-get install dbus-daemon python3-dbusmock` runs the BlueZ peer tests"

  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  let directory: URL
  let address: String
  private let daemonProcess: Locked<Process?>
  private let mock = Locked<Process?>(nil)
  private let control: Locked<DBusConnection?>

  /// The environment a central under test uses.
  var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": address] }

  /// Starts a bus and the peer; an adapter `hci0` (powered) is added unless `adapter` is false. With
  /// `deniedInterface`, the bus's policy refuses every call to `org.bluez` on that interface (as a
  /// system bus refuses a user its policy does not name).
  ///
  /// At most `gate`'s width of peers start at once (as many as the machine has cores), so forty tests
  /// do not start forty Python processes together.
  static func start(adapter: Bool = true, deniedInterface: String? = nil) async throws -> BlueZPeer {
    try await gate.withTurn { try startNow(adapter: adapter, deniedInterface: deniedInterface) }
  }

  /// The permits to start a peer.
  static let gate = ChildProcessGate(width: max(2, ProcessInfo.processInfo.activeProcessorCount))

  /// Runs `work` (which blocks: it starts processes and waits for them) on a thread of its own, so the
  /// cooperative pool, which the tests' schedulers need, is never held while it waits.
  static func offPool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await TestSupport.offPool(work)
  }

  private static func startNow(adapter: Bool, deniedInterface: String?) throws -> BlueZPeer {
    guard available else {
      throw Failure(description: "READERKIT_CI=1 needs dbus-daemon and python3-dbusmock for the BlueZ peer tests")
    }
    let peer = try BlueZPeer(deniedInterface: deniedInterface)
    do {
      try peer.startBluetoothdNow()
      if adapter { _ = try peer.call("AddAdapter", [.string("hci0"), .boolean(true)]) }
    } catch {
      peer.stop()
      throw error
    }
    return peer
  }

  private init(deniedInterface: String?) throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("readerkit-bluez-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    if let deniedInterface {
      let policy = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:tmpdir=/tmp</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
          <policy context="mandatory">
            <deny send_destination="org.bluez" send_interface="\(deniedInterface)"/>
          </policy>
        </busconfig>
        """
      try Data(policy.utf8).write(to: directory.appendingPathComponent("bus.conf"))
    }
    address = "unix:path=" + directory.appendingPathComponent("bus").path
    daemonProcess = Locked(nil)
    control = Locked(nil)
    do {
      try startBus()
    } catch {
      stop()
      throw error
    }
  }

  /// Starts `dbus-daemon` at `address` and opens the control connection.
  private func startBus() throws {
    try? FileManager.default.removeItem(at: directory.appendingPathComponent("bus"))
    let daemon = Process()
    daemon.executableURL = URL(fileURLWithPath: Self.daemon)
    let config = directory.appendingPathComponent("bus.conf")
    let configuration =
      FileManager.default.fileExists(atPath: config.path) ? "--config-file=\(config.path)" : "--session"
    daemon.arguments = [configuration, "--nofork", "--nopidfile", "--address=\(address)", "--print-address=1"]
    let printed = Pipe()
    daemon.standardOutput = printed
    daemon.standardError = FileHandle.nullDevice
    try daemon.runWithSignalsUnblocked()
    daemonProcess.withLock { $0 = daemon }
    // The daemon prints its address once it listens (or exits, closing the pipe): a blocking read, no polling.
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
      let chunk = printed.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      line.append(chunk)
    }
    guard line.contains(UInt8(ascii: "\n")),
      let connection = try? DBusConnection.open(DBusAddress.parse(address), timeout: .seconds(2))
    else {
      throw Failure(description: "dbus-daemon did not start at \(address)")
    }
    control.withLock { $0 = connection }
  }

  /// Kills the bus itself (by PID; the mock `bluetoothd` goes with it) and starts a new one at the same
  /// address with a fresh `bluetoothd` and a powered adapter: what clients see when the system's
  /// `dbus-daemon` restarts.
  func restartBus() async throws {
    try await Self.offPool { try self.restartBusNow() }
  }

  private func restartBusNow() throws {
    control.withLock { $0.take()?.close() }
    stopBluetoothd()
    if let daemon = daemonProcess.withLock({ $0.take() }), daemon.isRunning {
      kill(daemon.processIdentifier, SIGKILL)
      try? daemon.waitForExit(within: .seconds(5))
    }
    try startBus()
    try startBluetoothdNow()
    try call("AddAdapter", [.string("hci0"), .boolean(true)])
  }

  /// Starts the mock `bluetoothd` and waits (10 s at most) until it owns `org.bluez`.
  func startBluetoothd() async throws {
    try await Self.offPool { try self.startBluetoothdNow() }
  }

  private func startBluetoothdNow() throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Self.python)
    process.arguments = ["-m", "dbusmock", "--system", "--template", Self.template.path]
    process.environment = ["DBUS_SYSTEM_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"]
    let log = directory.appendingPathComponent("bluetoothd.log")
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    process.standardOutput = try FileHandle(forWritingTo: log)
    process.standardError = process.standardOutput
    try process.runWithSignalsUnblocked()
    mock.withLock { $0 = process }
    let watcher = try DBusConnection.open(DBusAddress.parse(address), timeout: .seconds(2))
    defer { watcher.close() }
    let owned = DispatchSemaphore(value: 0)
    _ = try watcher.call(
      busCall(
        "AddMatch",
        [
          .string(
            "type='signal',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.bluez'")
        ]))
    let has = try watcher.call(busCall("NameHasOwner", [.string("org.bluez")]))
    if has.body.first?.bool == true { return }
    watcher.start(
      onMessage: { message in if message.member == "NameOwnerChanged" { owned.signal() } }, onClose: { _ in })
    guard owned.wait(timeout: .now() + 10) == .success else {
      throw Failure(description: "the BlueZ peer did not own org.bluez within 10 s; see \(log.path)")
    }
  }

  /// Stops the mock `bluetoothd` (by PID) and waits until it has left the bus.
  func stopBluetoothd() {
    guard let process = mock.withLock({ $0.take() }) else { return }
    kill(process.processIdentifier, SIGKILL)
    try? process.waitForExit(within: .seconds(5))
  }

  /// Calls a peer control method (interface `org.readerkit.Peer` on `/`).
  @discardableResult
  func call(_ member: String, _ body: [DBusValue] = []) throws -> DBusMessage {
    try control.withLock { connection throws -> DBusMessage in
      guard let connection else { throw Failure(description: "the peer is stopped") }
      return try connection.call(
        .methodCall(destination: "org.bluez", path: "/", interface: "org.readerkit.Peer", member: member, body: body),
        timeout: .seconds(5))
    }
  }

  /// Reads a property of an object `bluetoothd` holds.
  func property(_ path: String, _ interface: String, _ name: String) throws -> DBusValue? {
    try control.withLock { connection throws -> DBusValue? in
      guard let connection else { throw Failure(description: "the peer is stopped") }
      let reply = try connection.call(
        .methodCall(
          destination: "org.bluez", path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
          body: [.string(interface), .string(name)]), timeout: .seconds(5))
      return reply.body.first?.unwrapped
    }
  }

  /// Adds a reader advertising the SMP service, re-announcing itself every `advertiseMilliseconds`.
  @discardableResult
  func addReader(
    address: String, name: String?, rssi: Int16 = -50, advertiseMilliseconds: UInt32 = 100,
    options: [String: DBusValue] = [:]
  ) throws -> String {
    var all = options
    all["advertise_ms"] = .uint32(advertiseMilliseconds)
    let reply = try call(
      "AddReader",
      [
        .string("hci0"), .string(address), .string(name ?? ""), .int16(rssi),
        .stringArray(["8d53dc1d-1db7-4cd3-868b-8a527460aa84"]), .stringVariantDictionary(all),
      ])
    return reply.body.first?.string ?? ""
  }

  /// What the reader's SMP device (`smp_device.py`) runs and was sent.
  struct SMPState: Equatable {
    var hash: [UInt8]
    var version: String
    var confirmed: Bool
    var resets: Int
    /// The offsets of the upload chunks it was sent, in order.
    var uploadOffsets: [Int]
  }

  func smpState(_ path: String) throws -> SMPState {
    let state = try call("SMPState", [.objectPath(path)]).body.first?.dictionary ?? [:]
    return SMPState(
      hash: state["hash"]?.byteArray ?? [], version: state["version"]?.string ?? "",
      confirmed: state["confirmed"]?.bool ?? false, resets: state["resets"]?.int ?? -1,
      uploadOffsets: state["upload_offsets"]?.elements?.compactMap(\.int) ?? [])
  }

  /// Sets a fault of the reader's SMP device; see `SetSMPFault` in the template.
  func smpFault(_ path: String, _ name: String, _ value: DBusValue) throws {
    try call("SetSMPFault", [.objectPath(path), .string(name), .variant(value)])
  }

  /// The Device1/Adapter1 methods called on `path` so far.
  func calls(_ path: String) throws -> [String] {
    try call("Calls", [.objectPath(path)]).body.first?.stringArray ?? []
  }

  /// Stops everything, by PID, and removes the directory. Idempotent.
  func stop() {
    control.withLock { $0.take()?.close() }
    stopBluetoothd()
    if let daemon = daemonProcess.withLock({ $0.take() }), daemon.isRunning {
      kill(daemon.processIdentifier, SIGKILL)
      try? daemon.waitForExit(within: .seconds(5))
    }
    try? FileManager.default.removeItem(at: directory)
  }

  deinit { stop() }

  private func busCall(_ member: String, _ body: [DBusValue]) -> DBusMessage {
    .methodCall(
      destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
      member: member, body: body)
  }
}
