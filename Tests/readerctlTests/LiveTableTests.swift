import Foundation
import TestSupport
import Testing

/// The live table on a real (pseudo-)terminal of a given size, read back through `VirtualScreen`:
/// it fits the width and the height, follows a resize, never leaves a pile of copies above itself,
/// and writes no cursor code to a terminal that cannot move its cursor.
@Suite(
  .workTimeLimit(.seconds(60)),
  .enabled(if: PseudoTerminal.enabled, "python3 is not on the PATH: the pseudo-terminal tests cannot run"))
struct LiveTableTests {
  private typealias Size = PseudoTerminal.Size

  /// The header rows of reader tables among `lines`.
  private func headers(_ lines: [String]) -> [String] { lines.filter { $0.contains("Serial") } }

  /// Table rows (a signal strength) among `lines`.
  private func tableRows(_ lines: [String]) -> [String] { lines.filter { $0.contains(" dBm ") } }

  @Test func aScanFitsAnEightyColumnTerminalAndLeavesOneTable() async throws {
    let run = try await PseudoTerminal.run(
      ["discover", "--readers", "5", "--timeout", "5", "--speed", "20"], size: Size(rows: 40, columns: 80))
    #expect(run.status == 0, "\(run.text.debugDescription)")
    let screen = try run.screen()
    #expect(screen.unknownSequences.isEmpty)
    #expect(screen.wrappedRows.isEmpty, "no line reached the edge")
    #expect(headers(screen.history).count == 1, "one table, not copies: \(screen.history)")
    #expect(tableRows(screen.history).count == 5)
    #expect(screen.history.allSatisfy { $0.count < 80 })
    #expect(screen.history.contains("Found 5 readers in 00:00:05.0 of simulated time."))
  }

  @Test func aShortTerminalShowsHowManyMoreAndStillOneTable() async throws {
    let size = Size(rows: 12, columns: 80)
    let run = try await PseudoTerminal.run(
      ["discover", "--readers", "16", "--timeout", "8", "--speed", "20"], size: size,
      steps: [.wait(#"and \d+ more\r\n"#), .mark("short")])
    #expect(run.status == 0)

    // While the scan runs: the table takes the rows above the cursor's, and says what it leaves out.
    let during = try run.screen(at: "short")
    let region = Array(during.lines.drop { !$0.contains("Serial") }.prefix { !$0.isEmpty })
    #expect(region.count <= size.rows - 1, "\(during.lines)")
    #expect(region.last?.hasPrefix("  … and ") == true && region.last?.hasSuffix(" more") == true, "\(region)")
    let more = Int(region.last?.split(separator: " ").dropLast().last ?? "") ?? -1
    #expect(tableRows(region).count + more == 16, "\(region)")
    #expect(headers(during.history).count == 1, "\(during.history)")
    #expect(during.wrappedRows.isEmpty)

    // When it ends the whole list is printed once, below nothing but the first line.
    let after = try run.screen()
    #expect(headers(after.history).count == 1, "\(after.history)")
    #expect(tableRows(after.history).count == 16)
    #expect(after.wrappedRows.isEmpty)
    #expect(after.unknownSequences.isEmpty)
    #expect(after.history.contains("Found 16 readers in 00:00:08.0 of simulated time."))
  }

  @Test func theTableFollowsAResizeAndCtrlCExits130() async throws {
    let small = Size(rows: 12, columns: 60)
    let run = try await PseudoTerminal.run(
      ["discover", "--readers", "16", "--timeout", "0", "--speed", "0.5"], size: Size(rows: 40, columns: 100),
      steps: [
        .wait(#"\n(?:\x1b\[2K)?  16  [A-Z]"#), .mark("wide"), .resize(small), .wait(#"and \d+ more\r\n"#),
        .mark("resized"),
        .send("\u{3}"),
      ])
    #expect(run.status == 130, "\(run.text.debugDescription)")

    let wide = try run.screen(at: "wide")
    #expect(tableRows(wide.lines).count == 16)
    #expect(wide.lines.contains { $0.contains("Software") }, "every column fits 100 columns")

    // After the resize the table is drawn again for 12 × 60: fewer columns, fewer rows, one header.
    let resized = try run.screen(at: "resized")
    #expect(headers(resized.lines).count == 1, "\(resized.lines)")
    #expect(!resized.lines.contains { $0.contains("Software") || $0.contains("Label") })
    #expect(resized.lines.allSatisfy { $0.count < small.columns }, "\(resized.lines)")
    #expect(resized.screen.allSatisfy { !$0.wrapped }, "\(resized.lines)")
    #expect(resized.lines.contains { $0.hasPrefix("  … and ") })
    // Redrawn at once by SIGWINCH, not at the next update (a second later at this speed): the same
    // readers with the same signal strengths, which change at every update.
    let cells = { (row: String) -> [String] in
      let words = row.split(separator: " ").map(String.init)
      return [words[1], words[(words.firstIndex(of: "dBm") ?? 1) - 1]]  // the serial number and the signal
    }
    let before = tableRows(wide.lines).map(cells)
    let after = tableRows(resized.lines).map(cells)
    #expect(!after.isEmpty && Array(before.prefix(after.count)) == after, "\(before) then \(after)")

    // Ctrl-C: the scan stops, the whole list stays, and the last line starts on a line of its own.
    let final = try run.screen()
    #expect(final.lines.contains("Stopped: 16 readers in view."), "\(final.lines)")
    #expect(!final.history.contains { $0.contains("^C") }, "the echoed ^C is wiped with the table's last redraw")
    #expect(!final.history.contains { $0.hasPrefix("Found") })
    #expect(final.unknownSequences.isEmpty)
  }

  @Test(arguments: [
    PseudoTerminal.Size(rows: 12, columns: 60), PseudoTerminal.Size(rows: 12, columns: 100),
    PseudoTerminal.Size(rows: 40, columns: 60),
  ])
  func growingTheWindowAgainLeavesNoStaleRowsOfTheOldTable(small: PseudoTerminal.Size) async throws {
    let large = Size(rows: 40, columns: 100)
    let run = try await PseudoTerminal.run(
      ["discover", "--readers", "16", "--timeout", "0", "--speed", "0.5"], size: large,
      steps: [
        .wait(#"\n(?:\x1b\[2K)?  16  [A-Z]"#), .resize(small), .wait(#"(and \d+ more|  16  [A-Z].*)\r\n"#),
        .resize(large), .wait(#"\n(?:\x1b\[2K)?  16  [A-Z]"#), .mark("grown"), .send("\u{3}"),
      ])
    #expect(run.status == 130, "\(run.text.debugDescription)")
    let grown = try run.screen(at: "grown")
    #expect(headers(grown.history).count == 1, "one table, no rows of the old one: \(grown.history)")
    #expect(tableRows(grown.history).count == 16, "\(grown.history)")
    #expect(grown.history.filter { $0.hasPrefix("  … and ") }.isEmpty, "\(grown.history)")
  }

  @Test func aDumbTerminalGetsNoCursorCodesAndCtrlCStartsAFreshLine() async throws {
    let run = try await PseudoTerminal.run(
      ["discover", "--timeout", "0", "--speed", "20"], size: Size(rows: 24, columns: 80),
      environment: ["TERM": "dumb"], steps: [.wait("3 in view"), .send("\u{3}")])
    #expect(run.status == 130)
    #expect(!run.output.contains(0x1B), "\(run.text.debugDescription)")
    let screen = try run.screen()
    #expect(screen.history.contains("^C"), "\(screen.history)")
    #expect(screen.history.contains("Stopped: 3 readers in view."))
    #expect(headers(screen.history).count == 1)
    #expect(tableRows(screen.history).count == 3)
  }

  @Test func theDemoOnATerminalKeepsOneTableAndSaysHowLongItTook() async throws {
    let run = try await PseudoTerminal.run(["demo", "--speed", "400"], size: Size(rows: 24, columns: 80), timeout: 120)
    #expect(run.status == 0)
    let screen = try run.screen()
    #expect(screen.unknownSequences.isEmpty)
    #expect(headers(screen.history).count == 1, "\(screen.history)")
    #expect(!screen.wrappedRows.contains { $0.contains(" dBm ") || $0.contains("Serial") })
    #expect(screen.history.contains { $0.contains("of simulated time took") && $0.contains("s of wall time") })
  }
}
