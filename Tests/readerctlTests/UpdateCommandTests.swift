import Foundation
import TestSupport
import Testing

/// The events of a `--json` run: their names, and the progress values between each start and finish.
private struct UpdateEvents {
  let events: [[String: Any]]

  init(_ stdout: String) throws { events = try ReaderctlProcess.jsonLines(stdout) }

  var names: [String] { events.compactMap { $0["event"] as? String } }
  var outcome: [String: Any]? { events.last }

  func index(_ name: String) -> Int? { names.firstIndex(of: name) }

  /// For each install, the progress reported between its start and its finish.
  var installs: [(start: [String: Any], progress: [Double], finish: [String: Any])] {
    var result: [(start: [String: Any], progress: [Double], finish: [String: Any])] = []
    var start: [String: Any]?
    var progress: [Double] = []
    for event in events {
      switch event["event"] as? String {
      case "didStartInstallingUpdate":
        start = event
        progress = []
      case "didReportReaderSoftwareUpdateProgress":
        progress.append(event["progress"] as? Double ?? -1)
      case "didFinishInstallingUpdate":
        if let started = start { result.append((started, progress, event)) }
        start = nil
      default: break
      }
    }
    return result
  }
}

/// `readerctl update` against a manifest file written by the test: the check, the install, and what
/// a broken catalog gives.
@Suite(.workTimeLimit(.seconds(60)))
struct UpdateCommandTests {
  private func run(_ files: ManifestFiles, _ extra: [String], manifest: String? = nil) async throws
    -> ReaderctlProcess.Result
  {
    let path = try manifest ?? files.write()
    return try await ReaderctlProcess.run(["update", "--catalog", path] + ManifestFiles.reader + extra)
  }

  @Test func aCheckPrintsTheUpdateThatAppliesAndInstallsNothing() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let result = try await run(files, [])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.isEmpty)
    let digest = try #require(files.release()["image"] as? [String: Any])["sha256"] as? String
    let expected = [
      "runs 2.01.00.17 at location tml_readerctl", "as of 2026-06-01T00:00:00Z",
      "Update 2.01.00.18 applies and is required", "  components  firmware, config",
      "  estimate    1-2 minutes (estimate1To2Minutes)", "  required    yes", "  requiredAt  2026-03-15T00:00:00Z",
      "  expiresAt   never", "  size        4096 bytes", "  sha256      \(digest ?? "?")", "Add --install",
    ]
    for text in expected { #expect(result.stdout.contains(text), "\(text) in \(result.stdout)") }
    #expect(!result.stdout.contains("Installing"))
  }

  @Test func aCheckInJSONIsOneOutcomeLineWithTheUpdateUnderTheAPIsNames() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let result = try await run(files, ["--json"])
    #expect(result.status == 0)
    let events = try UpdateEvents(result.stdout)
    #expect(events.names == ["result"], "a check connects nothing")
    let outcome = try #require(events.outcome)
    #expect(outcome["exitStatus"] as? Int == 0 && outcome["error"] is NSNull)
    #expect(outcome["required"] as? Bool == true)
    #expect(outcome["date"] as? String == "2026-06-01T00:00:00Z")
    let installed = try #require(outcome["installedSoftware"] as? [String: Any])
    #expect(installed["version"] as? String == ManifestFiles.installed)
    #expect(installed["deviceType"] as? String == "stripeM2")
    let update = try #require(outcome["update"] as? [String: Any])
    #expect(update["deviceSoftwareVersion"] as? String == ManifestFiles.next)
    #expect(update["durationEstimate"] as? String == "estimate1To2Minutes")
    #expect(update["components"] as? [String] == ["firmware", "config"])
    #expect(update["requiredAt"] as? String == "2026-03-15T00:00:00Z")
    #expect(update["isTestUpdate"] as? Bool == false)
    let image = try #require(update["image"] as? [String: Any])
    #expect(image["size"] as? Int == 4096)
    #expect((image["url"] as? String)?.hasSuffix("/images/m2.bin") == true)
  }

  @Test func beforeRequiredAtTheUpdateIsOptional() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let result = try await run(files, ["--date", "2026-03-10T12:00:00+01:00"])
    #expect(result.status == 0)
    #expect(result.stdout.contains("Update 2.01.00.18 applies and is optional until 2026-03-15T00:00:00Z"))
    #expect(result.stdout.contains("  required    no"))
  }

  @Test func aReaderOfAnotherModelOrAlreadyCurrentHasNothingToInstall() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let path = try files.write()
    for arguments in [
      ["--device-type", "chipper2X", "--installed-version", "2.01.00.17"],
      ["--device-type", "stripeM2", "--installed-version", "2.01.00.18"],
    ] {
      let result = try await ReaderctlProcess.run(
        ["update", "--catalog", path, "--date", "2026-06-01", "--install", "--json"] + arguments)
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      let events = try UpdateEvents(result.stdout)
      #expect(events.names == ["result"], "nothing to install, nothing connected: \(arguments)")
      #expect(events.outcome?["update"] is NSNull)
      #expect(events.outcome?["required"] is NSNull)
    }
    let told = try await ReaderctlProcess.run(
      ["update", "--catalog", path, "--date", "2026-06-01", "--device-type", "stripeM2", "--installed-version", "2.02"])
    #expect(told.stdout.contains("No update applies: no release newer than 2.02 for stripeM2 at tml_readerctl"))
  }

  @Test func installingARequiredUpdateRunsWhileConnectingWithProgressFromZeroToOne() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let result = try await run(files, ["--install", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let events = try UpdateEvents(result.stdout)
    let installs = events.installs
    #expect(installs.count == 1)
    let install = try #require(installs.first)
    #expect(install.progress.first == 0 && install.progress.last == 1)
    #expect(install.progress == install.progress.sorted(), "monotonic: \(install.progress)")
    #expect(install.finish["error"] is NSNull)
    #expect((install.start["update"] as? [String: Any])?["deviceSoftwareVersion"] as? String == ManifestFiles.next)
    // Installed before the reader counts as connected.
    let finished = try #require(events.index("didFinishInstallingUpdate"))
    #expect(finished < (events.index("didConnect") ?? -1))
    let reader = try #require(events.outcome?["reader"] as? [String: Any])
    #expect(reader["deviceSoftwareVersion"] as? String == ManifestFiles.next)
    #expect(events.outcome?["exitStatus"] as? Int == 0)
  }

  @Test func whenPipedAnInstallIsToldInPlainLinesAtEveryQuarter() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let result = try await run(files, ["--install"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(!result.stdout.contains("\u{1B}"), "no cursor code when piped")
    let lines = [
      "Installing 2.01.00.18 (firmware+config; estimate: 1-2 minutes)…", "25 % installed, ETA", "50 % installed, ETA",
      "75 % installed, ETA", "Installed 2.01.00.18 in 1:00.", "now runs 2.01.00.18.",
    ]
    var cursor = result.stdout.startIndex
    for line in lines {
      let found = result.stdout.range(of: line, range: cursor..<result.stdout.endIndex)
      #expect(found != nil, "missing, or out of order: \(line)")
      if let found { cursor = found.upperBound }
    }
  }

  @Test func installingAnOptionalUpdateConnectsFirstThenInstallsItAsTheAppWould() async throws {
    var files = try ManifestFiles()
    defer { files.remove() }
    files.releases = [files.release(requiredAt: "2026-09-01T00:00:00Z")]
    let result = try await run(files, ["--install", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let events = try UpdateEvents(result.stdout)
    let connected = try #require(events.index("didConnect"))
    let reported = try #require(events.index("didReportAvailableUpdate"))
    let started = try #require(events.index("didStartInstallingUpdate"))
    #expect(connected < reported && reported < started)
    #expect(events.installs.count == 1 && events.installs.first?.progress.last == 1)
    #expect(events.outcome?["required"] as? Bool == false)
    #expect((events.outcome?["reader"] as? [String: Any])?["deviceSoftwareVersion"] as? String == ManifestFiles.next)
  }

  @Test(arguments: [
    ("version", "2.01-beta", "releases[0].version"),
    ("durationEstimate", "soon", "releases[0].durationEstimate"),
    ("requiredAt", "next week", "releases[0].requiredAt"),
  ])
  func aMalformedManifestExits65NamingTheFieldAndTheValue(key: String, value: String, field: String) async throws {
    var files = try ManifestFiles()
    defer { files.remove() }
    files.releases[0][key] = value
    let result = try await run(files, [])
    #expect(result.status == 65)
    #expect(result.stdout.isEmpty, "\(result.stdout)")
    #expect(result.stderr.hasPrefix("readerctl: the catalog could not be read: updateCatalogInvalid: "))
    #expect(result.stderr.contains(field) && result.stderr.contains(value), "\(result.stderr)")
    let json = try await run(files, ["--json"])
    #expect(json.status == 65)
    let error = try #require(try UpdateEvents(json.stdout).outcome?["error"] as? [String: Any])
    #expect(error["code"] as? String == "updateCatalogInvalid")
    let context = try #require(error["context"] as? [String: String])
    #expect(context["field"] == field && context["value"] == value)
  }

  @Test func aDigestOfTheWrongLengthIsMalformedToo() async throws {
    var files = try ManifestFiles()
    defer { files.remove() }
    files.releases[0]["image"] = ["url": "images/m2.bin", "size": 4096, "sha256": "abc123"]
    let result = try await run(files, [])
    #expect(result.status == 65)
    #expect(result.stderr.contains("releases[0].image.sha256") && result.stderr.contains("abc123"))
  }

  @Test func anImageThatDoesNotMatchItsDigestIsRefusedWith65AndTheReaderKeepsItsVersion() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let path = try files.write()
    var altered = files.image
    altered[100] ^= 0xFF
    try files.replaceImage(with: altered)
    // The check reads only the manifest; the install verifies the image before it reaches the reader.
    #expect(try await run(files, [], manifest: path).status == 0)
    let result = try await run(files, ["--install", "--json"], manifest: path)
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stderr.contains("firmwareImageRejected") && result.stderr.contains("field=sha256"))
    let events = try UpdateEvents(result.stdout)
    #expect(events.index("didConnect") == nil, "a required update that cannot be installed fails the connection")
    let progress = events.installs.first?.progress ?? [-1]
    #expect(progress.allSatisfy { $0 == 0 }, "not a byte went to the reader: \(progress)")
    #expect(events.installs.first?.finish["error"] is [String: Any])
    let error = try #require(events.outcome?["error"] as? [String: Any])
    #expect(error["code"] as? String == "readerSoftwareUpdateFailedServerError")
    #expect((error["context"] as? [String: String])?["cause"] == "firmwareImageRejected")
    #expect(events.outcome?["reader"] == nil)
  }

  @Test func aMissingManifestOrImageFileExits66() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let missing = files.directory.appendingPathComponent("absent.json").path
    let result = try await ReaderctlProcess.run(["update", "--catalog", missing] + ManifestFiles.reader)
    #expect(result.status == 66)
    #expect(result.stderr.contains("updateCatalogUnavailable") && result.stderr.contains(missing), "\(result.stderr)")
    #expect(result.stdout.isEmpty)

    let path = try files.write()
    try FileManager.default.removeItem(at: files.directory.appendingPathComponent("images/m2.bin"))
    let install = try await run(files, ["--install"], manifest: path)
    #expect(install.status == 66, "\(install.stderr)")
    #expect(install.stderr.contains("cause=updateCatalogUnavailable"))
  }

  @Test func aReaderThatIsNotInTheWorldExits69() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let result = try await ReaderctlProcess.run(["update", "--catalog", try files.write(), "--serial", "STRM2-00000"])
    #expect(result.status == 69)
    #expect(result.stderr.contains("readerNotFound") && result.stderr.contains("STRM2-00000"))
  }

  @Test(arguments: [
    ["update"], ["update", "--catalog", ""], ["update", "--catalog", "m.json", "extra"],
    ["update", "--catalog", "ftp://example.com/m.json"], ["update", "--catalog", "m.json", "--device-type", "toaster"],
    ["update", "--catalog", "m.json", "--installed-version", "2.x"],
    ["update", "--catalog", "m.json", "--date", "soon"],
    ["update", "--catalog", "m.json", "--date", "2026-02-30"],
    ["update", "--catalog", "m.json", "--date", "2025-12-31"],
    ["update", "--catalog", "m.json", "--location", " "], ["update", "--catalog", "m.json", "--stall-timeout", "0"],
  ])
  func badArgumentsExit64WithTheUsage(arguments: [String]) async throws {
    let result = try await ReaderctlProcess.run(arguments)
    #expect(result.isUsageError(of: "update"), "\(arguments): \(result.stderr)")
  }
}

/// `readerctl update` against a real HTTP server on 127.0.0.1.
@Suite(
  .workTimeLimit(.seconds(60)),
  .enabled(if: PseudoTerminal.enabled, "python3 is not on the PATH: the HTTP catalog tests cannot run"))
struct UpdateCommandHTTPTests {
  @Test func aManifestOverHTTPIsCheckedAndItsImageInstalled() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    try files.write()
    let server = try await LocalHTTPServer.start(serving: files.directory)
    defer { server.stop() }
    let result = try await ReaderctlProcess.run(
      ["update", "--catalog", server.url("manifest.json"), "--install", "--json"] + ManifestFiles.reader)
    #expect(result.status == 0, "\(result.stderr)")
    let events = try UpdateEvents(result.stdout)
    let update = try #require(events.outcome?["update"] as? [String: Any])
    // The image's relative path is resolved against the manifest's URL.
    #expect((update["image"] as? [String: Any])?["url"] as? String == server.url("images/m2.bin"))
    #expect(events.installs.first?.progress.last == 1)
    #expect((events.outcome?["reader"] as? [String: Any])?["deviceSoftwareVersion"] as? String == ManifestFiles.next)
  }

  @Test func aMissingManifestIsUnavailableWith69AndItsStatus() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let server = try await LocalHTTPServer.start(serving: files.directory)
    defer { server.stop() }
    let result = try await ReaderctlProcess.run(["update", "--catalog", server.url("nothing.json"), "--json"])
    #expect(result.status == 69, "\(result.stderr)")
    let error = try #require(try UpdateEvents(result.stdout).outcome?["error"] as? [String: Any])
    #expect(error["code"] as? String == "updateCatalogUnavailable")
    #expect((error["context"] as? [String: String])?["status"] == "404")
  }

  @Test func aMalformedManifestOverHTTPExits65() async throws {
    var files = try ManifestFiles()
    defer { files.remove() }
    files.releases[0]["components"] = ["firmware", "toppings"]
    try files.write()
    let server = try await LocalHTTPServer.start(serving: files.directory)
    defer { server.stop() }
    let result = try await ReaderctlProcess.run(
      ["update", "--catalog", server.url("manifest.json")] + ManifestFiles.reader)
    #expect(result.status == 65)
    #expect(result.stderr.contains("releases[0].components") && result.stderr.contains("toppings"), "\(result.stderr)")
  }

  @Test func aRefusedConnectionExits69() async throws {
    let port = try SilentPort.closedPort()
    let result = try await ReaderctlProcess.run(["update", "--catalog", "http://127.0.0.1:\(port)/manifest.json"])
    #expect(result.status == 69, "\(result.stderr)")
    #expect(result.stderr.contains("updateCatalogUnavailable"))
  }

  @Test func aServerThatStallsExits75AfterTheStallTimeout() async throws {
    let silent = try SilentPort()
    let result = try await ReaderctlProcess.run(
      ["update", "--catalog", "http://127.0.0.1:\(silent.port)/manifest.json", "--stall-timeout", "1"], timeout: 30)
    #expect(result.status == 75, "\(result.stderr)")
    #expect(result.stderr.contains("updateCatalogTimedOut"))
    #expect(result.elapsed < .seconds(8), "the stall timeout (1 s, not the default 15 s) bounds the wait")
  }
}
