/// The parsed flags and arguments of one subcommand.
///
/// Accepts `--name value`, `--name=value` and boolean `--name`; a lone `-` is positional, and so is
/// everything after `--`. Any other argument starting with `-` is an option: one that is not
/// declared (`-t` too), a missing value, or a value that does not parse is a `UsageError`.
struct ArgumentList {
  private var values: [String: String] = [:]
  private var present: Set<String> = []
  /// The arguments that are not options, in order.
  private(set) var positionals: [String] = []

  /// Parses `arguments` for a command taking the boolean `flags` and the value-taking `options`
  /// (names without the leading dashes).
  init(_ arguments: [String], flags: Set<String> = [], options: Set<String> = []) throws(UsageError) {
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
      } else if options.contains(name) {
        if let inlineValue {
          values[name] = inlineValue
        } else {
          guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
          values[name] = arguments[index]
          index += 1
        }
        present.insert(name)
      } else {
        throw UsageError("unknown option '--\(name)'")
      }
    }
  }

  /// Whether the flag or option was given.
  func has(_ name: String) -> Bool { present.contains(name) }

  /// The value of an option, if given.
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
