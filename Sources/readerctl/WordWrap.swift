/// Breaks text into lines at spaces, for a screen or a help text of a given width.
enum WordWrap {
  /// `text` in lines of at most `width` characters, the first of at most `firstWidth`, broken at
  /// spaces (the space at a break is dropped); a word longer than a whole line is cut where the line
  /// ends. Text that fits is returned as it is, in one line. Widths below 1 count as 1.
  static func lines(_ text: String, width: Int, firstWidth: Int? = nil) -> [String] {
    let width = max(1, width)
    var limit = max(1, firstWidth ?? width)
    guard text.count > limit else { return [text] }
    var lines: [String] = []
    var line = ""
    var lineCount = 0
    var started = false
    for piece in text.split(separator: " ", omittingEmptySubsequences: false) {
      var word = piece
      if started {
        if lineCount + 1 + word.count <= limit {
          line += " " + word
          lineCount += 1 + word.count
          continue
        }
        lines.append(line)
        (line, lineCount, limit) = ("", 0, width)
      }
      // A word longer than a whole line is cut into pieces that fill lines.
      while word.count > limit {
        lines.append(String(word.prefix(limit)))
        word = word.dropFirst(limit)
        limit = width
      }
      line = String(word)
      lineCount = word.count
      started = true
    }
    lines.append(line)
    return lines
  }

  /// `text` wrapped into the columns from `indent` to `width`, joined with newlines (none at the end):
  /// the first line follows what the caller puts in the first `indent` columns (a heading, a name);
  /// the others are indented by `indent` spaces.
  static func hanging(_ text: String, width: Int, indent: Int) -> String {
    lines(text, width: width - indent).joined(separator: "\n" + String(repeating: " ", count: indent))
  }
}
