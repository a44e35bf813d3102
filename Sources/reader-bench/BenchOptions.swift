/// The options every benchmark reads: how many rounds to measure, and which cases to run.
struct BenchOptions: Sendable {
  /// Measured rounds per comparison (after one warm-up round): `--rounds N`, 7 unless told.
  var rounds = 7
  /// When set (`--only TEXT`), only the cases whose names contain it run: for counting one case's
  /// instructions under callgrind. Ratios that need a case left out print "not measured".
  var only: String?

  /// This process's command line, parsed: the options and the other arguments, or what is wrong.
  static let commandLine = parse(Array(CommandLine.arguments.dropFirst()))

  /// The options of this process (the defaults when its command line does not parse: `main` stops then).
  static var current: BenchOptions {
    guard case .success(let (options, _)) = commandLine else { return BenchOptions() }
    return options
  }

  /// Whether the case named `name` runs under these options.
  func includes(_ name: String) -> Bool {
    guard let only else { return true }
    return name.contains(only)
  }

  /// Takes `--rounds N` and `--only TEXT` out of `arguments`; returns the options and the other arguments,
  /// or a message saying what is wrong.
  static func parse(_ arguments: [String]) -> Result<(BenchOptions, [String]), UsageFailure> {
    var options = BenchOptions()
    var rest: [String] = []
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      switch argument {
      case "--rounds":
        guard let value = iterator.next(), let rounds = Int(value), (1...1_000).contains(rounds) else {
          return .failure(UsageFailure("--rounds takes a number of rounds from 1 to 1000"))
        }
        options.rounds = rounds
      case "--only":
        guard let value = iterator.next(), !value.isEmpty else {
          return .failure(UsageFailure("--only takes part of a case's name"))
        }
        options.only = value
      default:
        rest.append(argument)
      }
    }
    return .success((options, rest))
  }

  /// Options that do not parse.
  struct UsageFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
  }
}
