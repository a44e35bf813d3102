import Dispatch
import ReaderCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The bottom of a terminal screen that redraws in place (a live table), with narration lines
/// scrolling above it.
///
/// On a terminal that moves its cursor (`Console.supportsCursor`), `say` erases the region, prints
/// its line, and redraws the region below it, so narration and a live table never overwrite each
/// other. The region always fits the screen — its lines are drawn for the rows and columns left
/// (one row for the cursor, one column so no line reaches the edge, where terminals wrap) — so
/// moving the cursor back up by the rows it drew lands on its first line, and the next redraw
/// replaces it instead of piling a copy below. A resize (SIGWINCH) redraws it for the new size; rows of
/// it that a shorter window pushed into the terminal's history, and a taller one brings back (as tmux,
/// VTE and iTerm2 do), are erased when they come back.
///
/// Elsewhere (a pipe, a file, `TERM=dumb`) `say` prints the line, `show` prints nothing and no
/// cursor control code is ever written: the command prints the final table itself.
final class LiveRegion: Sendable {
  /// Lines for the space a region may use.
  typealias Render = @Sendable (TerminalSize) -> [String]

  private struct State {
    var render: Render?
    /// The lines on screen, as drawn.
    var drawn: [String] = []
    /// The columns they were drawn for.
    var drawnColumns = 0
    /// The screen's rows when they were drawn.
    var drawnScreenRows = 0
    /// Rows of an earlier drawing just above the region's top that a shrinking window pushed off the
    /// screen into the terminal's history: growing it again brings them back, and they are erased then.
    var stale = 0
    var resizeSource: (any DispatchSourceSignal)?
  }

  private let console: Console
  private let state = Locked(State())

  init(console: Console) { self.console = console }

  /// Whether the region redraws in place.
  var isLive: Bool { console.supportsCursor }

  /// Prints a narration line above the region.
  func say(_ line: String) {
    state.withLock { state in
      guard isLive, !state.drawn.isEmpty else {
        console.line(line)
        return
      }
      // Blank the region's rows first: a narration line longer than the screen is wide wraps onto
      // rows that it would otherwise only partly cover.
      let rows = moveToTop(&state)
      // The line goes between any stale rows above and the region: they are not next to it any more.
      state.stale = 0
      console.write(rows.codes + blank(rows.count) + line + "\n" + draw(&state, full: false, over: 0))
    }
  }

  /// Replaces the region's content and redraws it (on a terminal that moves its cursor only).
  /// `render` is called again, for the new size, when the terminal is resized.
  func show(_ render: @escaping Render) {
    guard isLive else { return }
    state.withLock { state in
      if state.resizeSource == nil {
        state.resizeSource = SignalWatch.start(SIGWINCH) { [weak self] in self?.redraw() }
      }
      state.render = render
      let rows = moveToTop(&state)
      console.write(rows.codes + draw(&state, full: false, over: rows.count))
    }
  }

  /// Redraws the region for the terminal's new size.
  func redraw() {
    state.withLock { state in
      guard state.render != nil else { return }
      let rows = moveToTop(&state)
      console.write(rows.codes + draw(&state, full: false, over: rows.count))
    }
  }

  /// Draws the region one last time, whole (as many rows as it needs; lines still fit the width), and
  /// leaves it on screen; later lines print below it. After Ctrl-C this also wipes the `^C` that
  /// the terminal echoed below the region.
  func detach() {
    state.withLock { state in
      guard state.render != nil else { return }
      let rows = moveToTop(&state)
      console.write(rows.codes + draw(&state, full: true, over: rows.count + 1))
      state.render = nil
      state.drawn = []
      state.stale = 0
    }
  }

  /// Starts a fresh line after Ctrl-C, whose `^C` echo the terminal left on the current one.
  func lineAfterInterrupt() {
    guard console.isTerminal else { return }
    state.withLock { state in
      if state.drawn.isEmpty { console.write(isLive ? "\r\u{1B}[2K" : "\n") }
    }
  }

  // Every row is erased on its own (`ESC [ 2 K`), never with `ESC [ J`: tmux keeps a screen cleared
  // from its top-left corner in its history, and a region that fills the screen would pile up there.

  /// Moves the cursor from below the region to its first row; returns the codes and the rows moved.
  private func moveToTop(_ state: inout State) -> (codes: String, count: Int) {
    guard !state.drawn.isEmpty else { return ("\r", 0) }
    // Terminals that reflow on resize (most do) wrap lines that no longer fit: count the rows each
    // drawn line takes at the current width. A move past the top of the screen stops there.
    let size = console.terminalSize()
    let rows = state.drawn.reduce(0) { rows, line in
      rows + (size.columns < state.drawnColumns ? max(1, (line.count + size.columns - 1) / size.columns) : 1)
    }
    let visible = min(rows, max(0, size.rows - 1))
    // A taller window than at the last drawing brings back rows from the history: stale ones first.
    let returned = min(state.stale, max(0, size.rows - state.drawnScreenRows))
    let count = min(visible + returned, max(0, size.rows - 1))
    state.stale += rows - visible - returned
    state.drawn = []
    return (count > 0 ? "\r\u{1B}[\(count)A" : "\r", count)
  }

  /// Blanks `rows` rows from the cursor down and comes back.
  private func blank(_ rows: Int) -> String {
    rows > 0 ? String(repeating: "\u{1B}[2K\n", count: rows) + "\u{1B}[\(rows)A" : ""
  }

  /// Renders the region for the terminal's current size and returns its lines, each erasing its row
  /// first, followed by blanks over what is left of the `previous` rows below them.
  private func draw(_ state: inout State, full: Bool, over previous: Int) -> String {
    guard let render = state.render else { return "" }
    let size = console.terminalSize()
    let space = TerminalSize(rows: full ? Int.max : max(0, size.rows - 1), columns: max(1, size.columns - 1))
    let lines = render(space).prefix(space.rows).map { $0.fitted(to: space.columns) }
    state.drawn = lines
    state.drawnColumns = size.columns
    state.drawnScreenRows = size.rows
    let left = previous - lines.count
    return lines.map { "\u{1B}[2K" + $0 + "\n" }.joined()
      + (left > 0 ? String(repeating: "\u{1B}[2K\n", count: left) + "\u{1B}[\(left)A" : "")
  }
}

extension String {
  /// The string cut to at most `width` characters, its last one an ellipsis when cut.
  func fitted(to width: Int) -> String {
    guard count > width else { return self }
    return width <= 0 ? "" : String(prefix(width - 1)) + "…"
  }
}
