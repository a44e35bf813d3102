import Foundation
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// A pcscd of a test's own, beside the one the other tests use: in a mount namespace of its own
/// (`unshare`) where a directory of the test is mounted over `/run/pcscd`, with vpcd on other ports
/// (35965, 35966). Clients reach it by setting `PCSCLITE_CSOCK_NAME` to its socket. It needs root and
/// `unshare`; the test that stops pcscd in the middle of a session uses it, so as not to stop the
/// shared one.
public final class PrivatePcscd: Sendable {
  /// Whether one can be started here (root, `unshare` and `pcscd` present), or why not.
  public static let unavailableReason: String? = {
    guard geteuid() == 0 else { return "a private pcscd needs root (unshare, mount)" }
    for tool in ["/usr/bin/unshare", "/usr/sbin/pcscd"] where !FileManager.default.isExecutableFile(atPath: tool) {
      return "a private pcscd needs \(tool)"
    }
    // A mount namespace of its own needs CAP_SYS_ADMIN, which a container may not give.
    let probe = Process()
    probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    probe.arguments = ["--mount", "--propagation", "private", "true"]
    probe.standardOutput = FileHandle.nullDevice
    probe.standardError = FileHandle.nullDevice
    guard (try? probe.run()) != nil else { return "unshare cannot run" }
    // A `static let`, evaluated where nothing can wait asynchronously: bounded instead.
    guard (try? probe.waitForExit(within: .seconds(10))) != nil else { return "unshare --mount did not end" }
    return probe.terminationStatus == 0 ? nil : "unshare --mount is not permitted here (no CAP_SYS_ADMIN)"
  }()

  private let process: Process
  private let directory: URL

  /// The environment a client needs to reach it.
  public var environment: [String: String] {
    ["PCSCLITE_CSOCK_NAME": directory.appendingPathComponent("run/pcscd.comm").path]
  }

  private init(process: Process, directory: URL) {
    self.process = process
    self.directory = directory
  }

  /// Starts it and waits (at most 10 s, off the cooperative pool) for its socket.
  public static func start() async throws -> PrivatePcscd {
    if let reason = Self.unavailableReason { throw VirtualCards.Failure(description: reason) }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "readerkit-private-pcscd-\(UUID())")
    for name in ["run", "conf"] {
      try FileManager.default.createDirectory(
        at: directory.appendingPathComponent(name), withIntermediateDirectories: true)
    }
    try """
    FRIENDLYNAME "Virtual PCD"
    DEVICENAME   /dev/null:0x8C7D
    LIBPATH      /usr/lib/pcsc/drivers/serial/libifdvpcd.so
    CHANNELID    0x8C7D

    """.write(to: directory.appendingPathComponent("conf/vpcd"), atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    process.arguments = [
      "--mount", "--propagation", "private", "sh", "-c",
      "mount --bind \"$0/run\" /run/pcscd && exec /usr/sbin/pcscd --foreground --config \"$0/conf\"", directory.path,
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.runWithSignalsUnblocked()
    let pcscd = PrivatePcscd(process: process, directory: directory)
    let socket = directory.appendingPathComponent("run/pcscd.comm").path
    let listening = await eventually(within: .seconds(10), every: .milliseconds(20)) {
      FileManager.default.fileExists(atPath: socket) || !process.isRunning
    }
    guard listening, process.isRunning else {
      await pcscd.stop()
      throw VirtualCards.Failure(description: "the private pcscd did not start")
    }
    return pcscd
  }

  deinit {
    if process.isRunning {
      kill(process.processIdentifier, SIGTERM)
      process.exitInBackground(within: .seconds(5))
    }
    try? FileManager.default.removeItem(at: directory)
  }

  /// Stops it (SIGTERM, SIGKILL after 5 s) and waits for it off the cooperative pool; idempotent.
  public func stop() async {
    if process.isRunning {
      kill(process.processIdentifier, SIGTERM)
      try? await process.exit(within: .seconds(5), grace: .seconds(1))
    }
    try? FileManager.default.removeItem(at: directory)
  }
}
