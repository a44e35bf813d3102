import Foundation

/// A command's help, as data: what `--help` prints, what the command's arguments parse against, and
/// the one line a usage error points to.
///
/// Printed in the sections Swift tools use (swift-argument-parser's), within 80 columns:
///
/// ```
/// OVERVIEW: Scans the simulated world for readers.
///
/// USAGE: readerctl discover [--proximity] [--timeout S] …
///
/// ARGUMENTS: …
/// OPTIONS:
///   --timeout S             stop after S simulated seconds (default 10)
///   -h, --help              show this help
///   --version               show the version of readerctl
///
/// EXIT STATUS: …
/// ```
struct CommandHelp: Sendable {
  /// One option: its name (without dashes), the names of its values (none for a flag), what it does.
  struct Option: Sendable {
    var name: String
    var values: [String]
    var summary: String
    /// How the option is shown when not `--name VALUES` (`--tags FILE...`, whose files are arguments).
    var shown: String?

    init(_ name: String, _ values: [String] = [], _ summary: String, shown: String? = nil) {
      self.name = name
      self.values = values
      self.summary = summary
      self.shown = shown
    }

    /// `--json`: one JSON object per event instead of `replaced` (the narration, or the table), the
    /// last line the outcome with `members` after its exit status and error, and `more` after it.
    static func json(insteadOf replaced: String = "the narration", members: String = "", more: String = "") -> Option {
      .init(
        "json", [],
        "one JSON object per event instead of \(replaced); the last line is the outcome, {\"event\": \"result\", "
          + "\"exitStatus\": …, \"error\": …\(members.isEmpty ? "" : ", " + members)}\(more)")
    }

    /// `--name VALUE…` as the OPTIONS section shows it.
    var display: String { shown ?? (["--\(name)"] + values).joined(separator: " ") }
  }

  /// The command's words after `readerctl`: `discover`, `nfc scan`.
  var command: String
  /// One sentence: what the command does.
  var overview: String
  /// The synopsis lines, each without `readerctl <command>` (`[--seed N] [--json]`).
  var synopses: [String]
  /// Paragraphs after the usage.
  var discussion: [String] = []
  /// The positional arguments and what they are.
  var arguments: [(String, String)] = []
  /// The options, in the order shown.
  var options: [Option] = []
  /// The subcommands, for a command that has them (`nfc`, `ndef`).
  var subcommands: [(String, String)] = []
  /// Paragraphs after the options.
  var notes: [String] = []
  /// The exit statuses and what each means.
  var exitStatuses: [(Int32, String)] = []

  /// The width help is written for.
  static let width = 80
  /// Where option and argument descriptions start.
  private static let column = 26

  /// The line a usage error ends with.
  var seeHelp: String { "see '\(command.isEmpty ? "readerctl" : "readerctl \(command)") --help'" }

  /// The flags (options without values) the command's parser accepts.
  var flags: Set<String> { Set(options.filter { $0.values.isEmpty }.map(\.name)) }

  /// The options taking values, and how many each takes.
  var valueCounts: [String: Int] {
    Dictionary(options.filter { !$0.values.isEmpty }.map { ($0.name, $0.values.count) }) { first, _ in first }
  }

  /// `arguments` parsed against this help's options.
  func parse(_ arguments: [String]) throws(UsageError) -> ArgumentList {
    try ArgumentList(arguments, flags: flags, valueCounts: valueCounts)
  }

  /// The help text, every line at most `width` columns, ending in a newline.
  var text: String {
    var sections: [String] = ["OVERVIEW: " + WordWrap.hanging(overview, width: Self.width, indent: 10)]
    sections += discussion.map(Self.paragraph)
    let prefix = command.isEmpty ? "readerctl" : "readerctl \(command)"
    sections.append(
      synopses.enumerated().map { index, synopsis in
        let head = (index == 0 ? "USAGE: " : "       ") + prefix
        // An optional group (`[--seed N]`) stays on one line.
        let kept = Self.bindingBracketedSpaces(synopsis)
        return head + " "
          + WordWrap.hanging(kept, width: Self.width, indent: head.count + 1)
          .replacingOccurrences(of: Self.boundSpace, with: " ")
      }.joined(separator: "\n"))
    if !subcommands.isEmpty {
      sections.append("SUBCOMMANDS:\n" + subcommands.map { Self.entry($0.0, $0.1) }.joined(separator: "\n"))
    }
    if !arguments.isEmpty {
      sections.append("ARGUMENTS:\n" + arguments.map { Self.entry($0.0, $0.1) }.joined(separator: "\n"))
    }
    let shown =
      options.map { ($0.display, $0.summary) } + [
        ("-h, --help", "show this help"), ("--version", "show the version of readerctl"),
      ]
    sections.append("OPTIONS:\n" + shown.map { Self.entry($0.0, $0.1) }.joined(separator: "\n"))
    sections += notes.map(Self.paragraph)
    if !exitStatuses.isEmpty {
      sections.append(
        "EXIT STATUS:\n"
          + exitStatuses.map { status, meaning in
            let number = "\(status)"
            let head = "  " + number + String(repeating: " ", count: max(1, 6 - number.count))
            return head + WordWrap.hanging(meaning, width: Self.width, indent: head.count)
          }.joined(separator: "\n"))
    }
    return sections.joined(separator: "\n\n") + "\n"
  }

  /// A paragraph wrapped to the width.
  private static func paragraph(_ text: String) -> String {
    WordWrap.lines(text, width: width).joined(separator: "\n")
  }

  /// Stands for a space inside `[…]` while a synopsis is wrapped.
  private static let boundSpace = "\u{1F}"

  /// `synopsis` with the spaces inside brackets replaced by `boundSpace`.
  private static func bindingBracketedSpaces(_ synopsis: String) -> String {
    var depth = 0
    var result = ""
    for character in synopsis {
      switch character {
      case "[": depth += 1
      case "]": depth = max(0, depth - 1)
      default: break
      }
      result += character == " " && depth > 0 ? boundSpace : String(character)
    }
    return result
  }

  /// `  name                    summary`, the summary wrapped in its column (on the next line when
  /// the name reaches into it).
  private static func entry(_ name: String, _ summary: String) -> String {
    let head = "  " + name
    let body = WordWrap.hanging(summary, width: width, indent: column)
    let pad = String(repeating: " ", count: column)
    return head.count + 2 <= column
      ? head + String(repeating: " ", count: column - head.count) + body : head + "\n" + pad + body
  }
}
