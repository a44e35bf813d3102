/// A small terminal emulator, enough to see what a person would see: it keeps the screen, the lines
/// that scrolled off its top, and which rows the terminal wrapped because a line was too long.
///
/// It understands printable text (UTF-8, one column per character), `\r`, `\n`, backspace, tab, and
/// the cursor and erase sequences `ESC [ n A/B/C/D/G/H/f/J/K`, ignores `ESC [ … m` and
/// `ESC [ ? … h/l`, and records any other escape or control code in `unknownSequences`, so a test
/// can insist the program wrote nothing it does not understand. Writing in the last column wraps
/// only when the next character comes (as xterm does). A resize reflows wrapped lines to the new
/// width and keeps the cursor's line on screen, as most terminals (tmux, VTE, iTerm2) do. Erasing
/// the whole screen (`ESC [ J` from the top-left corner, or `ESC [ 2 J`) first moves what it shows
/// into the scrollback, as tmux does (its `scroll-on-clear` option, on by default).
struct VirtualScreen {
  /// One row of cells, and whether the terminal wrapped it into the next row.
  struct Row: Equatable {
    var cells: [Character]
    var wrapped = false

    init(columns: Int) { cells = Array(repeating: " ", count: columns) }

    /// The row's text without trailing blanks.
    var text: String {
      var cells = self.cells[...]
      while cells.last == " " { cells = cells.dropLast() }
      return String(cells)
    }
  }

  private(set) var rows: Int
  private(set) var columns: Int
  private(set) var screen: [Row]
  /// The rows that scrolled off the top, oldest first.
  private(set) var scrollback: [Row] = []
  private(set) var cursorRow = 0
  private(set) var cursorColumn = 0
  /// Escape and control codes this emulator does not know, as received.
  private(set) var unknownSequences: [String] = []

  private var pendingWrap = false
  private var undecoded: [UInt8] = []
  private var escape: String?

  init(rows: Int, columns: Int) {
    self.rows = rows
    self.columns = columns
    screen = Array(repeating: Row(columns: columns), count: rows)
  }

  /// The visible rows' text.
  var lines: [String] { screen.map(\.text) }

  /// Every row's text, scrollback first.
  var history: [String] { (scrollback + screen).map(\.text) }

  /// The rows the terminal wrapped into the next one, scrollback included.
  var wrappedRows: [String] { (scrollback + screen).filter(\.wrapped).map(\.text) }

  // MARK: Input

  /// Interprets `bytes`; a character split across calls is completed by the next one.
  mutating func feed(_ bytes: some Collection<UInt8>) {
    undecoded += bytes
    var index = 0
    while index < undecoded.count {
      let lead = undecoded[index]
      let length = lead < 0x80 ? 1 : lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 ? 4 : 1
      guard index + length <= undecoded.count else { break }
      let scalar = String(decoding: undecoded[index..<index + length], as: UTF8.self).unicodeScalars.first!
      index += length
      receive(scalar)
    }
    undecoded.removeFirst(index)
  }

  private mutating func receive(_ scalar: Unicode.Scalar) {
    if var sequence = escape {
      sequence.unicodeScalars.append(scalar)
      if sequence == "\u{1B}[" || (sequence.hasPrefix("\u{1B}[") && !(0x40...0x7E).contains(scalar.value)) {
        escape = sequence
        return
      }
      escape = nil
      perform(sequence)
      return
    }
    switch scalar {
    case "\u{1B}": escape = "\u{1B}"
    case "\r":
      cursorColumn = 0
      pendingWrap = false
    case "\n":
      lineFeed()
      pendingWrap = false
    case "\u{8}":
      cursorColumn = max(0, cursorColumn - 1)
      pendingWrap = false
    case "\t": cursorColumn = min(columns - 1, (cursorColumn / 8 + 1) * 8)
    case "\u{7}": break
    case "\u{0}"..."\u{1F}", "\u{7F}": unknownSequences.append(String(scalar))
    default: put(Character(scalar))
    }
  }

  private mutating func put(_ character: Character) {
    if pendingWrap {
      screen[cursorRow].wrapped = true
      lineFeed()
      cursorColumn = 0
      pendingWrap = false
    }
    screen[cursorRow].cells[cursorColumn] = character
    if cursorColumn == columns - 1 {
      pendingWrap = true
    } else {
      cursorColumn += 1
    }
  }

  private mutating func lineFeed() {
    if cursorRow == rows - 1 {
      scrollback.append(screen.removeFirst())
      screen.append(Row(columns: columns))
    } else {
      cursorRow += 1
    }
  }

  private mutating func perform(_ sequence: String) {
    guard sequence.hasPrefix("\u{1B}["), let final = sequence.last else {
      unknownSequences.append(sequence)
      return
    }
    let body = sequence.dropFirst(2).dropLast()
    if body.hasPrefix("?"), final == "h" || final == "l" { return }
    let parameters = body.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
    guard parameters.allSatisfy({ $0 != nil }) || body.isEmpty else {
      unknownSequences.append(sequence)
      return
    }
    let first = parameters.first.flatMap { $0 } ?? 0
    let count = max(1, first)
    pendingWrap = false
    switch final {
    case "A": cursorRow = max(0, cursorRow - count)
    case "B": cursorRow = min(rows - 1, cursorRow + count)
    case "C": cursorColumn = min(columns - 1, cursorColumn + count)
    case "D": cursorColumn = max(0, cursorColumn - count)
    case "G": cursorColumn = min(columns - 1, count - 1)
    case "H", "f":
      cursorRow = min(rows - 1, count - 1)
      cursorColumn = min(columns - 1, max(1, parameters.count > 1 ? parameters[1]! : 1) - 1)
    case "J":
      if first == 2 || (first == 0 && cursorRow == 0 && cursorColumn == 0) {
        let shown = (screen.lastIndex { !$0.text.isEmpty }).map { screen[...$0] } ?? []
        scrollback += shown
      }
      switch first {
      case 0:
        eraseLine(from: cursorColumn, to: columns)
        for row in (cursorRow + 1)..<rows { screen[row] = Row(columns: columns) }
      case 1:
        for row in 0..<cursorRow { screen[row] = Row(columns: columns) }
        eraseLine(from: 0, to: cursorColumn + 1)
      case 2: screen = Array(repeating: Row(columns: columns), count: rows)
      default: unknownSequences.append(sequence)
      }
    case "K":
      switch first {
      case 0: eraseLine(from: cursorColumn, to: columns)
      case 1: eraseLine(from: 0, to: cursorColumn + 1)
      case 2: eraseLine(from: 0, to: columns)
      default: unknownSequences.append(sequence)
      }
    case "m": break
    default: unknownSequences.append(sequence)
    }
  }

  private mutating func eraseLine(from start: Int, to end: Int) {
    for column in start..<min(end, columns) { screen[cursorRow].cells[column] = " " }
    if end >= columns { screen[cursorRow].wrapped = false }
  }

  // MARK: Resize

  /// Changes the size: lines the terminal had wrapped are joined and wrapped again at the new width,
  /// blank rows below the cursor go first when rows are lost, then rows scroll off the top.
  mutating func resize(rows newRows: Int, columns newColumns: Int) {
    var all = scrollback + screen
    let cursorIndex = scrollback.count + cursorRow
    // Blank rows below the cursor are not content.
    while all.count > cursorIndex + 1, all.last?.text.isEmpty == true, all.last?.wrapped == false { all.removeLast() }

    // Logical lines, and where the cursor is in its own.
    var logical: [[Character]] = []
    var cursorLine = 0
    var cursorOffset = 0
    var current: [Character] = []
    for (index, row) in all.enumerated() {
      if index == cursorIndex {
        cursorLine = logical.count
        cursorOffset = current.count + cursorColumn
      }
      current += row.wrapped ? row.cells : Array(row.text)
      if !row.wrapped {
        logical.append(current)
        current = []
      }
    }
    if !current.isEmpty { logical.append(current) }

    var rebuilt: [Row] = []
    var newCursorRow = 0
    var newCursorColumn = 0
    for (number, line) in logical.enumerated() {
      let needed = max(line.count, number == cursorLine ? cursorOffset + 1 : 0)
      let count = max(1, (needed + newColumns - 1) / newColumns)
      for piece in 0..<count {
        var row = Row(columns: newColumns)
        let start = piece * newColumns
        for (column, character) in line.dropFirst(start).prefix(newColumns).enumerated() {
          row.cells[column] = character
        }
        row.wrapped = piece < count - 1
        rebuilt.append(row)
      }
      if number == cursorLine {
        newCursorRow = rebuilt.count - count + min(cursorOffset / newColumns, count - 1)
        newCursorColumn = min(cursorOffset % newColumns, newColumns - 1)
      }
    }
    let top = max(0, min(rebuilt.count - newRows, newCursorRow))
    scrollback = Array(rebuilt[..<top])
    screen = Array(rebuilt[top...].prefix(newRows))
    while screen.count < newRows { screen.append(Row(columns: newColumns)) }
    rows = newRows
    columns = newColumns
    cursorRow = newCursorRow - top
    cursorColumn = newCursorColumn
    pendingWrap = false
  }
}

extension VirtualScreen {
  /// The narration on screen and in the history, one entry per stamped line: a row whose stamp ends
  /// in column 15 (`[1d 00:00:00.0] `, narrower stamps right-aligned in it), joined with the rows
  /// indented under its text that continue it.
  var narration: [String] {
    var entries: [String] = []
    let indent = String(repeating: " ", count: 16)
    for row in history {
      if row.hasPrefix(indent), let last = entries.indices.last, !row.dropFirst(16).hasPrefix(" ") {
        entries[last] += " " + row.dropFirst(16)
      } else if row.count > 16, Array(row)[14] == "]", row.drop(while: { $0 == " " }).hasPrefix("[") {
        entries.append(String(row.drop(while: { $0 == " " })))
      }
    }
    return entries
  }
}
