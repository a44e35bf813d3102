import Foundation
import TestSupport
import Testing

/// The narration on a (pseudo-)terminal: wrapped at word boundaries to the window, continuation lines
/// under the text, the time stamp one width for the whole run; piped, one event per line as before.
@Suite(
  .workTimeLimit(.seconds(60)),
  .enabled(if: PseudoTerminal.enabled, "python3 is not on the PATH: the pseudo-terminal tests cannot run"))
struct NarrationTerminalTests {
  /// What the terminal shows as live tables and bars instead of narration lines.
  private static func isNarratedOnTerminal(_ line: String) -> Bool {
    !line.contains(" in view: ") && !line.contains("% installed, ETA")
  }

  @Test(arguments: [60, 80, 132])
  func theDemoNarrationWrapsAtWordsUnderItsTextWithOneStampWidth(columns: Int) async throws {
    let piped = try await ReaderctlProcess.run(["demo"])
    #expect(piped.status == 0)
    let run = try await PseudoTerminal.run(
      ["demo", "--speed", "0"], size: PseudoTerminal.Size(rows: 30, columns: columns), timeout: 120)
    #expect(run.status == 0, "\(run.text.debugDescription)")
    let screen = try run.screen()
    #expect(screen.wrappedRows.isEmpty, "the terminal wrapped: \(screen.wrappedRows)")
    #expect(screen.history.allSatisfy { $0.count < columns }, "\(screen.history.filter { $0.count >= columns })")
    // Every narration line is on screen whole: its words in order, broken only where spaces were, its
    // stamp ending in the same column as every other stamp's (which `narration` requires).
    let expected = piped.lines.filter { $0.hasPrefix("[") && Self.isNarratedOnTerminal($0) }
    #expect(expected.count > 100)
    let shown = screen.narration
    let squeezed = { (lines: [String]) in lines.map { $0.filter { $0 != " " } } }
    #expect(squeezed(shown) == squeezed(expected), "\(Array(zip(shown, expected).filter { $0 != $1 }.prefix(3)))")
    // Broken only at spaces, unless a word is longer than the text column itself.
    for (line, original) in zip(shown, expected) where line != original {
      #expect(original.split(separator: " ").contains { $0.count > columns - 1 - 16 }, "\(line)")
    }
    // The stamps of the first and the last narration rows end in the same column.
    let stamped = screen.history.filter { $0.contains("] ") && $0.trimmingPrefix(while: \.isWhitespace).hasPrefix("[") }
    #expect(Set(stamped.map { Array($0).firstIndex(of: "]") }).count == 1, "\(stamped.prefix(3)) \(stamped.suffix(3))")
  }

  @Test func pipedNarrationIsOneEventPerLineWhateverItsLength() async throws {
    let piped = try await ReaderctlProcess.run(["demo"], environment: ["COLUMNS": "40"])
    #expect(piped.lines.contains { $0.count > 120 && $0.hasPrefix("[") })
    #expect(!piped.lines.contains { $0.hasPrefix("    ") && !$0.trimmingPrefix(while: \.isWhitespace).isEmpty })
    #expect(piped.lines.contains { $0.hasPrefix("[1d 00:") } && piped.lines.contains { $0.hasPrefix("[00:") })
  }
}
