import Foundation
import TestSupport
import Testing

@testable import readerctl

/// Smaller things `readerctl update` must get right, each pinned: its words, what its help promises,
/// a reader too low on battery, and manifests that editors and hostile files produce.
@Suite(.workTimeLimit(.seconds(60)))
struct UpdateCommandItemTests {
  private func update(_ files: ManifestFiles, _ extra: [String]) async throws -> ReaderctlProcess.Result {
    try await ReaderctlProcess.run(["update", "--catalog", try files.write()] + extra)
  }

  @Test(arguments: [
    (["--device-type", "wisePad3"], "no wisePad3 reader in the simulated world of seed 1"),
    (["--serial", "NOPE-1"], "no reader NOPE-1 in the simulated world of seed 1"),
    (
      ["--serial", "NOPE-1", "--device-type", "wisePad3"], "no wisePad3 reader NOPE-1 in the simulated world of seed 1"
    ),
  ])
  func aMissingReaderIsNamedInPlainWords(flags: [String], words: String) async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let result = try await update(files, flags + ["--date", "2026-06-01"])
    #expect(result.status == 69)
    #expect(result.stderr.contains(words), "\(result.stderr)")
    #expect(!result.stderr.contains("reader a "))
  }

  /// Seed 5 with six readers has a Chipper 2X at 41 % battery, not charging.
  private static let lowReader = ["--seed", "5", "--readers", "6", "--serial", "CHB20-56093"]

  @Test func aReaderTooLowOnBatteryFailsWith75UnlessDocked() async throws {
    var files = try ManifestFiles()
    defer { files.remove() }
    files.releases = [files.release(deviceType: "chipper2X")]
    let arguments =
      Self.lowReader + ["--installed-version", ManifestFiles.installed, "--date", "2026-06-01", "--install"]
    let low = try await update(files, arguments + ["--json"])
    #expect(low.status == 75, "\(low.stderr)")
    let outcome = try #require(try ReaderctlProcess.jsonLines(low.stdout).last)
    #expect((outcome["error"] as? [String: Any])?["code"] as? String == "readerSoftwareUpdateFailedBatteryLow")
    let docked = try await update(files, arguments + ["--dock"])
    #expect(docked.status == 0, "\(docked.stderr)")
    #expect(docked.stdout.contains("it goes on its charging dock first"))
  }

  @Test func anInstallKeepsTheReaderInMemoryOnlyAsItsHelpSays() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let data = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: data) }
    let result = try await ReaderctlProcess.run(
      ["update", "--catalog", try files.write(), "--install", "--json"] + ManifestFiles.reader,
      environment: ["XDG_DATA_HOME": data.path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: data.path).isEmpty, "nothing written")
    let install = try #require(UpdateCommand.help.options.first { $0.name == "install" })
    #expect(install.summary.contains("kept in memory only, never in the store `readerctl reconnect` reads"))
    #expect(!UpdateCommand.help.text.contains("is not saved"))
    let reconnect = try await ReaderctlProcess.run(["reconnect"], environment: ["XDG_DATA_HOME": data.path])
    #expect(reconnect.status == 66, "\(reconnect.stderr)")
  }

  @Test func aManifestStartingWithAByteOrderMarkIsRead() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let path = try files.write()
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    try (Data([0xEF, 0xBB, 0xBF]) + bytes).write(to: URL(fileURLWithPath: path))
    let result = try await ReaderctlProcess.run(["update", "--catalog", path] + ManifestFiles.reader)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("Update 2.01.00.18 applies"))
  }

  @Test func garbageIsNotValidJSONAtItsFirstFaultyByte() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let path = try files.write()
    try Data((String(repeating: "[", count: 10) + "\u{7F}ELF").utf8).write(to: URL(fileURLWithPath: path))
    let result = try await ReaderctlProcess.run(["update", "--catalog", path] + ManifestFiles.reader)
    #expect(result.status == 65)
    #expect(result.stderr.contains("is not valid JSON (error at byte 10)"), "\(result.stderr)")
    #expect(!result.stderr.contains("deeper than"))
  }

  @Test func anUnsupportedManifestVersionIsSaidOnce() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let path = try files.write()
    try Data(#"{"manifestVersion": 2, "releases": []}"#.utf8).write(to: URL(fileURLWithPath: path))
    let result = try await ReaderctlProcess.run(["update", "--catalog", path] + ManifestFiles.reader)
    #expect(result.status == 65)
    #expect(result.stderr.contains("the field manifestVersion is 2: this ReaderKit reads manifest version 1 only"))
    #expect(!result.stderr.contains("manifestVersion manifest version"))
  }
}
