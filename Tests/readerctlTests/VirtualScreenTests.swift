import Testing

/// The emulator the live-table tests read the screen with: if it were wrong, they would prove nothing.
@Suite(.timeLimit(.minutes(1)))
struct VirtualScreenTests {
  private func screen(_ text: String, rows: Int = 4, columns: Int = 10) -> VirtualScreen {
    var screen = VirtualScreen(rows: rows, columns: columns)
    screen.feed(Array(text.utf8))
    return screen
  }

  @Test func aLineAsWideAsTheScreenWrapsOnlyWhenMoreComes() {
    let exact = screen("0123456789\r\nnext")
    #expect(exact.lines == ["0123456789", "next", "", ""])
    #expect(exact.wrappedRows.isEmpty)
    let longer = screen("0123456789ab\r\n")
    #expect(longer.lines == ["0123456789", "ab", "", ""])
    #expect(longer.wrappedRows == ["0123456789"])
  }

  @Test func rowsScrollIntoTheScrollback() {
    let screen = screen("a\r\nb\r\nc\r\nd\r\ne\r\n", rows: 3)
    #expect(screen.scrollback.map(\.text) == ["a", "b", "c"])
    #expect(screen.lines == ["d", "e", ""])
    #expect(screen.history == ["a", "b", "c", "d", "e", ""])
  }

  @Test func cursorUpStopsAtTheTopAndEraseBelowClearsTheRest() {
    let redrawn = screen("x\r\none\r\ntwo\r\n\r\u{1B}[2A\u{1B}[JONE\r\n")
    #expect(redrawn.lines == ["x", "ONE", "", ""])
    let clamped = screen("a\r\nb\r\nc\r\n\r\u{1B}[9A\u{1B}[1B\u{1B}[Jz")
    #expect(clamped.lines == ["a", "z", "", ""])
    #expect(clamped.unknownSequences.isEmpty)
  }

  @Test func clearingTheWholeScreenKeepsItInTheScrollbackAsTmuxDoes() {
    let fromTheTop = screen("a\r\nb\r\n\u{1B}[2A\u{1B}[Jc")
    #expect(fromTheTop.scrollback.map(\.text) == ["a", "b"])
    #expect(fromTheTop.lines == ["c", "", "", ""])
    let fromBelow = screen("a\r\nb\r\n\u{1B}[1A\u{1B}[Jc")
    #expect(fromBelow.scrollback.isEmpty)
    #expect(fromBelow.lines == ["a", "c", "", ""])
  }

  @Test func eraseInLineAndUnknownCodesAreTold() {
    let erased = screen("hello\r\u{1B}[2Kbye\u{1B}[1m\u{1B}[?25l\u{1B}7\u{1B}[5n")
    #expect(erased.lines.first == "bye")
    #expect(erased.unknownSequences == ["\u{1B}7", "\u{1B}[5n"])
  }

  @Test func narrowingReflowsWrappedAndLongLinesAndKeepsTheCursorLine() {
    var screen = screen("abcdefgh\r\n12\r\n", rows: 4, columns: 10)
    screen.resize(rows: 4, columns: 4)
    #expect(screen.lines == ["abcd", "efgh", "12", ""])
    #expect(screen.wrappedRows == ["abcd"])
    screen.feed(Array("z".utf8))
    #expect(screen.lines == ["abcd", "efgh", "12", "z"])
    screen.resize(rows: 2, columns: 4)
    #expect(screen.lines == ["12", "z"])
    #expect(screen.scrollback.map(\.text) == ["abcd", "efgh"])
  }

  @Test func aCharacterSplitAcrossFeedsIsJoined() {
    var screen = VirtualScreen(rows: 1, columns: 5)
    let bytes = Array("…".utf8)
    screen.feed(bytes.prefix(1))
    screen.feed(bytes.dropFirst())
    #expect(screen.lines == ["…"])
  }
}
