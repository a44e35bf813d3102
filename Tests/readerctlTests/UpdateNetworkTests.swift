import Foundation
import ReaderKit
import TestSupport
import Testing

/// `readerctl update` against a server that never answers, trickles a byte at a time, or answers with
/// malformed HTTP: Ctrl-C stops it within half a second, every fetch has a deadline, nothing crashes,
/// and the manifest is fetched once per run.
@Suite(
  .workTimeLimit(.seconds(60)),
  .enabled(if: PseudoTerminal.enabled, "python3 is not on the PATH: the HTTP catalog tests cannot run"))
struct UpdateNetworkTests {
  /// A manifest on `server` under `prefix` whose image is `imagePath` (relative to the manifest).
  private func publish(_ server: CatalogTestServer, _ prefix: String, image imagePath: String = "images/m2.bin")
    throws -> ManifestFiles
  {
    var files = try ManifestFiles()
    var release = files.release()
    var image = release["image"] as? [String: Any] ?? [:]
    image["url"] = imagePath
    release["image"] = image
    files.releases = [release]
    let written = URL(fileURLWithPath: try files.write()).deletingLastPathComponent()
    let target = server.root.appendingPathComponent(prefix)
    try FileManager.default.copyItem(at: written, to: target)
    return files
  }

  @Test func ctrlCStopsACatalogFetchBlockedOnASilentServerWithin500ms() async throws {
    let server = try await CatalogTestServer.start()
    let result = try await ReaderctlProcess.run(
      ["update", "--catalog", server.url("p/stall"), "--stall-timeout", "60"] + ManifestFiles.reader,
      interruptWhen: { (try? server.openConnections("p")) == 1 })
    #expect(result.status == 130, "\(result.stderr)")
    #expect(result.stderr.hasPrefix("readerctl: interrupted: "), "\(result.stderr)")
    let stopped = try #require(result.stoppedAfterInterrupt)
    #expect(stopped < Duration.milliseconds(500).allowingForSlowdown, "stopped \(stopped) after Ctrl-C")
    #expect(try server.openConnections("p") == 0, "the connection was left open")
  }

  /// Ctrl-C within a millisecond of the fetch's connection, twenty times: a signal that comes right
  /// after `readerctl` starts watching for it is handled like any other (an ignored SIGINT that the
  /// signal source was not yet armed for used to be lost, and the fetch ran on to its stall timeout).
  @Test func ctrlCRightAfterTheFetchConnectsIsNeverLost() async throws {
    for run in 0..<20 {
      let silent = try SilentPort()
      let result = try await ReaderctlProcess.run(
        ["update", "--catalog", "http://127.0.0.1:\(silent.port)/manifest.json", "--stall-timeout", "5"]
          + ManifestFiles.reader, timeout: 30, interruptWhen: { silent.hasPendingConnection },
        checkingEvery: .milliseconds(1))
      #expect(result.status == 130, "run \(run): \(result.stderr)")
      #expect(try #require(result.stoppedAfterInterrupt) < .seconds(5), "run \(run): Ctrl-C was not handled")
    }
  }

  @Test func ctrlCStopsATricklingFetch() async throws {
    let server = try await CatalogTestServer.start()
    let result = try await ReaderctlProcess.run(
      ["update", "--catalog", server.url("p/trickle/200"), "--stall-timeout", "60"] + ManifestFiles.reader,
      interruptWhen: { (try? server.openConnections("p")) == 1 })
    #expect(result.status == 130, "\(result.stderr)")
    #expect(try #require(result.stoppedAfterInterrupt) < Duration.milliseconds(500).allowingForSlowdown)
  }

  @Test func aTricklingServerIsStoppedByTheFetchDeadline() async throws {
    let server = try await CatalogTestServer.start()
    let result = try await ReaderctlProcess.run(
      ["update", "--catalog", server.url("p/trickle/200"), "--stall-timeout", "3", "--fetch-timeout", "1", "--json"]
        + ManifestFiles.reader, timeout: 30)
    #expect(result.status == 75, "\(result.stderr)")
    #expect(result.stderr.contains("not finished after 1 s"), "\(result.stderr)")
    #expect(result.elapsed < .seconds(10), "a hang guard, not a timing claim")
    let outcome = try #require(try ReaderctlProcess.jsonLines(result.stdout).last)
    let error = try #require(outcome["error"] as? [String: Any])
    #expect(error["code"] as? String == "updateCatalogTimedOut")
    #expect((error["context"] as? [String: Any])?["timeout"] as? Double == 1, "a number of seconds: \(error)")
  }

  @Test(arguments: [
    ("chunk-negative", "-1"), ("chunk-huge", "FFFFFFFFFFFFFFFFFFFF"), ("chunk-bad-trailer", "not a field"),
    ("junk-status", "SSH-2.0-OpenSSH_9.2"), ("length-negative", "Content-Length: -5"),
  ])
  func aHostileAnswerIsMalformedDataNotACrash(name: String, line: String) async throws {
    let server = try await CatalogTestServer.start()
    let result = try await ReaderctlProcess.run(
      ["update", "--catalog", server.url("p/raw/\(name)"), "--json"] + ManifestFiles.reader)
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stderr.contains("malformed response"), "\(result.stderr)")
    #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(result.stderr)")
    let outcome = try #require(try ReaderctlProcess.jsonLines(result.stdout).last)
    let context = (outcome["error"] as? [String: Any])?["context"] as? [String: Any]
    #expect(context?["line"] as? String == line, "\(outcome)")
  }

  @Test func anInstallFetchesTheManifestOnce() async throws {
    let server = try await CatalogTestServer.start()
    let files = try publish(server, "p")
    defer { files.remove() }
    let result = try await ReaderctlProcess.run(
      ["update", "--catalog", server.url("p/manifest.json"), "--install", "--dock"] + ManifestFiles.reader)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try server.requests("p/manifest.json") == 1)
    #expect(try server.requests("p/images/m2.bin") == 1)
  }

  @Test func ctrlCStopsAnImageDownloadThatIsShownAsADownload() async throws {
    let server = try await CatalogTestServer.start()
    let files = try publish(server, "p", image: "stall")
    defer { files.remove() }
    let result = try await ReaderctlProcess.run(
      ["update", "--catalog", server.url("p/manifest.json"), "--install", "--dock", "--stall-timeout", "60"]
        + ManifestFiles.reader, interruptWhen: { (try? server.openConnections("p")) == 1 })
    #expect(result.status == 130, "\(result.stderr)")
    #expect(try #require(result.stoppedAfterInterrupt) < Duration.milliseconds(500).allowingForSlowdown)
    #expect(result.stdout.contains("Downloading the image of 2.01.00.18 (4096 bytes) from 127.0.0.1…"))
    #expect(!result.stdout.contains("% installed"))
  }

  @Test func aFileURLNamingAnotherHostIsRefused() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let path = try files.write()
    let result = try await ReaderctlProcess.run(
      ["update", "--catalog", "file://otherhost" + path] + ManifestFiles.reader)
    #expect(result.isUsageError(of: "update"), "\(result.stderr)")
    #expect(result.stderr.contains("names the host 'otherhost'"))
    #expect(
      try await ReaderctlProcess.run(["update", "--catalog", "file://localhost" + path] + ManifestFiles.reader).status
        == 0)
  }
}
