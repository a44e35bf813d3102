import Foundation
import TestSupport
import Testing

/// The install progress bar on a real (pseudo-)terminal, read back through `VirtualScreen`: it fits the
/// width, redraws in place (one bar per install, not a pile of copies), and a terminal that cannot move
/// its cursor gets plain lines and no cursor code.
@Suite(
  .workTimeLimit(.seconds(60)),
  .enabled(if: PseudoTerminal.enabled, "python3 is not on the PATH: the pseudo-terminal tests cannot run"))
struct InstallProgressTerminalTests {
  private typealias Size = PseudoTerminal.Size

  /// The progress bars among `lines`.
  private func bars(_ lines: [String]) -> [String] {
    lines.filter { ($0.contains("[#") || $0.contains("[.")) && $0.contains(" %") }
  }

  private func install(size: Size, environment: [String: String] = [:], steps: [PseudoTerminal.Step] = [])
    async throws -> (PseudoTerminal.Run, ManifestFiles)
  {
    let files = try ManifestFiles()
    let path = try files.write()
    let run = try await PseudoTerminal.run(
      ["update", "--catalog", path, "--install", "--speed", "60"] + ManifestFiles.reader, size: size,
      environment: environment, steps: steps)
    return (run, files)
  }

  @Test(arguments: [80, 44, 24])
  func theBarFitsTheTerminalAndLeavesOneFullBarBehind(columns: Int) async throws {
    let (run, files) = try await install(
      size: Size(rows: 24, columns: columns), steps: [.wait(#"\[#+\.+\]"#), .mark("installing")])
    defer { files.remove() }
    #expect(run.status == 0, "\(run.text.debugDescription)")

    let during = try run.screen(at: "installing")
    #expect(bars(during.lines).count == 1, "\(during.lines)")
    let after = try run.screen()
    #expect(after.unknownSequences.isEmpty)
    let left = bars(after.history)
    #expect(left.count == 1, "one bar, redrawn in place: \(after.history)")
    #expect(left.first?.contains("100 %") == true, "\(left)")
    #expect(left.allSatisfy { $0.count < columns }, "\(left)")
    #expect(!after.wrappedRows.contains { $0.contains("[#") || $0.contains(" %  ETA") }, "\(after.wrappedRows)")
    // The narration wraps at word boundaries, under its text where there is room, never mid-word.
    if columns >= 44 {
      #expect(after.narration.contains { $0.hasSuffix("] Installed 2.01.00.18 in 1:00.") }, "\(after.history)")
    }
    #expect(after.wrappedRows.isEmpty, "\(after.wrappedRows)")
    #expect(!after.history.contains { $0.contains("25 % installed") }, "a live bar, not quarter lines")
  }

  @Test func aDumbTerminalGetsPlainLinesAndNoCursorCodes() async throws {
    let (run, files) = try await install(size: Size(rows: 24, columns: 80), environment: ["TERM": "dumb"])
    defer { files.remove() }
    #expect(run.status == 0)
    #expect(!run.output.contains(0x1B), "\(run.text.debugDescription)")
    let screen = try run.screen()
    #expect(bars(screen.history).isEmpty, "\(screen.history)")
    for quarter in [25, 50, 75] {
      #expect(screen.history.contains { $0.contains("\(quarter) % installed, ETA ") }, "\(quarter) %")
    }
    #expect(screen.history.contains { $0.hasSuffix("now runs 2.01.00.18.") })
  }

  @Test func ctrlCDuringAnInstallCancelsItAndExits130() async throws {
    let files = try ManifestFiles()
    defer { files.remove() }
    let run = try await PseudoTerminal.run(
      ["update", "--catalog", try files.write(), "--install", "--speed", "1"] + ManifestFiles.reader,
      size: Size(rows: 24, columns: 80), steps: [.wait(#"\[#+\.+\]"#), .send("\u{3}")])
    #expect(run.status == 130, "\(run.text.debugDescription)")
    let screen = try run.screen()
    #expect(screen.unknownSequences.isEmpty)
    #expect(bars(screen.history).count == 1, "\(screen.history)")
    #expect(!bars(screen.history).contains { $0.contains("100 %") })
    #expect(screen.history.contains { $0.hasPrefix("readerctl: interrupted: ") }, "\(screen.history)")
    #expect(!screen.history.contains { $0.contains("now runs") })
  }

  @Test func theDemoShowsABarForEachOfItsThreeInstalls() async throws {
    let run = try await PseudoTerminal.run(["demo", "--speed", "400"], size: Size(rows: 24, columns: 72), timeout: 120)
    #expect(run.status == 0)
    let screen = try run.screen()
    #expect(screen.unknownSequences.isEmpty)
    let left = bars(screen.history)
    #expect(left.count == 3, "\(left)")
    #expect(left.allSatisfy { $0.contains("100 %") && $0.count < 72 }, "\(left)")
    #expect(!screen.wrappedRows.contains { $0.contains(" %  ETA") })
  }
}
