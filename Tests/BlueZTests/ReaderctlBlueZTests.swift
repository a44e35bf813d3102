import Foundation
import Testing

/// `readerctl discover --bluez` through the built executable, against the D-Bus peer.
@Suite struct ReaderctlBlueZTests {
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
  }

  static func readerctl(_ arguments: [String], environment: [String: String]) throws -> Run {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let started = ContinuousClock.now
    try BlueZPeer.run(process)
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Run(
      status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
      stderr: String(decoding: stderr, as: UTF8.self), elapsed: ContinuousClock.now - started)
  }

  @Test func withoutASystemBusDiscoverExits69WithinASecondSayingSo() throws {
    let run = try Self.readerctl(
      ["discover", "--bluez"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/system_bus_socket"])
    #expect(run.status == 69)
    #expect(run.stderr.hasPrefix("readerctl: discovery failed: no D-Bus system bus at unix:path=/nonexistent/"))
    #expect(run.elapsed < .seconds(1))
  }

  @Test(.enabled(if: BlueZPeer.enabled, BlueZPeer.skipNote))
  func withoutBluetoothdOrTheAdapterDiscoverExits69SayingWhich() throws {
    let peer = try BlueZPeer.start()
    defer { peer.stop() }
    let noAdapter = try Self.readerctl(["discover", "--bluez", "--adapter", "hci7"], environment: peer.environment)
    #expect(noAdapter.status == 69)
    #expect(noAdapter.stderr == "readerctl: discovery failed: no Bluetooth adapter named hci7\n")
    peer.stopBluetoothd()
    let noBluetoothd = try Self.readerctl(["discover", "--bluez"], environment: peer.environment)
    #expect(noBluetoothd.status == 69)
    #expect(noBluetoothd.stderr.contains("bluetoothd is not running"))
  }

  @Test(.enabled(if: BlueZPeer.enabled, BlueZPeer.skipNote))
  func discoverListsTheReadersBlueZReportsNearestFirst() throws {
    let peer = try BlueZPeer.start()
    defer { peer.stop() }
    try peer.addReader(address: "C0:00:00:00:00:01", name: "STRM2-0001", rssi: -70)
    try peer.addReader(address: "C0:00:00:00:00:02", name: "WPC32-0002", rssi: -50)
    let run = try Self.readerctl(["discover", "--bluez", "--timeout", "1.5"], environment: peer.environment)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.hasPrefix("Scanning for readers through BlueZ…\n"))
    let table = run.stdout.split(separator: "\n").filter { $0.contains("STRM2-0001") || $0.contains("WPC32-0002") }
    #expect(table.last?.contains("STRM2-0001") == true && table.dropLast().last?.contains("WPC32-0002") == true)
    #expect(run.stdout.contains("Found 2 readers in "))
  }
}
