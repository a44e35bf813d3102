import Synchronization

/// The bottom of a terminal screen that redraws in place (a live table), with narration lines
/// scrolling above it.
///
/// On a terminal, `say` erases the region, prints its line, and redraws the region below it, so
/// narration and a live table never overwrite each other. Elsewhere (a pipe, a file) `say` prints
/// the line and `show` prints nothing: only the final table is printed, by the command.
final class LiveRegion: Sendable {
  private struct State {
    var lines: [String] = []
    var linesOnScreen = 0
  }

  private let console: Console
  private let state = Mutex(State())

  init(console: Console) { self.console = console }

  /// Prints a narration line above the region.
  func say(_ line: String) {
    state.withLock { state in
      guard console.isTerminal, state.linesOnScreen > 0 else {
        console.line(line)
        return
      }
      console.write(erase(&state) + "\u{1B}[2K" + line + "\n" + state.lines.map { $0 + "\n" }.joined())
      state.linesOnScreen = state.lines.count
    }
  }

  /// Replaces the region's content and redraws it (on a terminal only).
  func show(_ lines: [String]) {
    state.withLock { state in
      state.lines = lines
      guard console.isTerminal else { return }
      console.write(erase(&state) + lines.map { "\u{1B}[2K" + $0 + "\n" }.joined())
      state.linesOnScreen = lines.count
    }
  }

  /// Leaves the region on screen as it is; later lines print below it.
  func detach() {
    state.withLock { state in
      state.lines = []
      state.linesOnScreen = 0
    }
  }

  /// Moves the cursor to the top of the region and clears it.
  private func erase(_ state: inout State) -> String {
    guard state.linesOnScreen > 0 else { return "" }
    return "\u{1B}[\(state.linesOnScreen)A" + String(repeating: "\u{1B}[2K\n", count: state.linesOnScreen)
      + "\u{1B}[\(state.linesOnScreen)A"
  }
}
