/// The parsed flags and arguments of one subcommand.
///
/// Accepts `--name value`, `--name=value` and boolean `--name`; an option may take several values
/// (`--mime TYPE FILE`, or `--mime=TYPE FILE`). A lone `-` is positional, and so is everything after
/// `--`. Any other argument starting with `-` is an option: one that is not declared (`-t` too) is a
/// `UsageError`, and so is a missing value or one that does not parse. A value is taken as it is, even
/// when it starts with `-` (`--text -5`), unless it is an option the command knows (`--mime
/// text/plain --hex` is missing its FILE, not reading a file named `--hex`): `--name=value` gives such a
/// value anyway. `--help`, `-h`, `--version` and `-V` are never values.
struct ArgumentList {
  /// One option as given, in order.
  struct Occurrence: Equatable {
    var name: String
    var values: [String]
  }

  private var values: [String: String] = [:]
  private var present: Set<String> = []
  /// Every flag and option given, in order (for options whose order matters, such as record flags).
  private(set) var occurrences: [Occurrence] = []
  /// The arguments that are not options, in order.
  private(set) var positionals: [String] = []

  /// The arguments every command understands (handled before a command parses its own).
  static let builtIn: Set<String> = ["--help", "-h", "--version", "-V"]

  /// Parses `arguments` for a command taking the boolean `flags`, the one-value `options`, and the
  /// options of `valueCounts` with that many values each (names without the leading dashes).
  init(
    _ arguments: [String], flags: Set<String> = [], options: Set<String> = [], valueCounts: [String: Int] = [:]
  ) throws(UsageError) {
    var counts = valueCounts
    for name in options { counts[name] = 1 }
    let known = flags.union(counts.keys)
    /// Whether `argument` names an option rather than being a value.
    func isOption(_ argument: String) -> Bool {
      guard argument.hasPrefix("--"), argument != "--" else { return Self.builtIn.contains(argument) }
      return known.contains(String(argument.dropFirst(2).prefix { $0 != "=" })) || Self.builtIn.contains(argument)
    }
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if argument == "--" {
        positionals += arguments[index...]
        break
      }
      guard argument.hasPrefix("-"), argument != "-" else {
        positionals.append(argument)
        continue
      }
      guard argument.hasPrefix("--") else { throw UsageError("unknown option '\(argument)'") }
      let body = argument.dropFirst(2)
      let name = String(body.prefix { $0 != "=" })
      let inlineValue = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
      if flags.contains(name) {
        guard inlineValue == nil else { throw UsageError("--\(name) takes no value") }
        present.insert(name)
        occurrences.append(Occurrence(name: name, values: []))
      } else if let count = counts[name] {
        var taken = inlineValue.map { [$0] } ?? []
        while taken.count < count, index < arguments.count, !isOption(arguments[index]), arguments[index] != "--" {
          taken.append(arguments[index])
          index += 1
        }
        guard taken.count == count else {
          throw UsageError(count == 1 ? "--\(name) needs a value" : "--\(name) needs \(count) values")
        }
        values[name] = taken.last
        present.insert(name)
        occurrences.append(Occurrence(name: name, values: taken))
      } else {
        throw UsageError("unknown option '--\(name)'")
      }
    }
  }

  /// Whether the flag or option was given.
  func has(_ name: String) -> Bool { present.contains(name) }

  /// The value of an option, if given (the last one, when given more than once).
  func string(_ name: String) -> String? { values[name] }

  /// An integer option within `range`, or `defaultValue` when absent.
  func integer<T: FixedWidthInteger>(_ name: String, default defaultValue: T, in range: ClosedRange<T>)
    throws(UsageError) -> T
  {
    guard let text = values[name] else { return defaultValue }
    guard let value = T(text), range.contains(value) else {
      throw UsageError(
        "--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
    }
    return value
  }

  /// A number option within `range`, or `defaultValue` when absent.
  func number(_ name: String, default defaultValue: Double, in range: ClosedRange<Double>) throws(UsageError) -> Double
  {
    guard let text = values[name] else { return defaultValue }
    guard let value = Double(text), value.isFinite, range.contains(value) else {
      throw UsageError("--\(name) must be a number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
    }
    return value
  }

  /// Fails unless there are exactly `names.count` positional arguments; returns them.
  func positionals(named names: [String]) throws(UsageError) -> [String] {
    guard positionals.count == names.count else {
      if positionals.count < names.count {
        throw UsageError("missing \(names[positionals.count])")
      }
      throw UsageError("unexpected argument '\(positionals[names.count])'")
    }
    return positionals
  }
}
