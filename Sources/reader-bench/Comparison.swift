import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Cases measured in turns, so that a busy moment of the machine hits every case alike.
///
/// A run is `BenchOptions.current.rounds` rounds after one warm-up round. Each round runs every case
/// once, one after another, starting one case further along each round (so no case always runs right
/// after the same neighbour). A ratio between two cases is taken within each round, on times measured
/// seconds apart, and reported as the minimum, median and maximum over the rounds: never a best time
/// of one case against a best time of another taken minutes later.
struct Comparison {
  /// One thing measured.
  struct Case {
    /// Its name, unique in the comparison (`--only` picks cases by it).
    let name: String
    /// Sets up one run (not timed) and returns the work to time and what to do after it (not timed).
    let prepare: () -> (run: () -> Void, finish: () -> Void)
    /// For work timed elsewhere (in another process): runs it and returns the seconds it took there.
    let reported: (() -> Double)?

    private init(
      name: String, prepare: @escaping () -> (run: () -> Void, finish: () -> Void), reported: (() -> Double)?
    ) {
      self.name = name
      self.prepare = prepare
      self.reported = reported
    }

    /// A case with set-up and clean-up that are not timed: `prepare` returns the work to time and what to do
    /// after it.
    static func withSetUp(_ name: String, _ prepare: @escaping () -> (run: () -> Void, finish: () -> Void)) -> Case {
      Case(name: name, prepare: prepare, reported: nil)
    }

    /// A case whose work is timed by whoever does it (another process, which reports its own time, so that
    /// starting it and talking to it are not counted); its time counts as both wall and CPU time.
    static func reported(_ name: String, _ seconds: @escaping () -> Double) -> Case {
      Case(name: name, prepare: { ({}, {}) }, reported: seconds)
    }

    /// A case that is all timed.
    init(_ name: String, _ body: @escaping () -> Void) {
      self.init(name: name, prepare: { (body, {}) }, reported: nil)
    }
  }

  let cases: [Case]

  init(_ cases: [Case]) {
    precondition(Set(cases.map(\.name)).count == cases.count, "case names are unique")
    self.cases = cases
  }

  /// Runs the warm-up round and the measured rounds; cases left out by `--only` are not run.
  func measure(rounds: Int = BenchOptions.current.rounds) -> Timings {
    let chosen = cases.filter { BenchOptions.current.includes($0.name) }
    var timings = Timings()
    for round in 0...max(1, rounds) {
      for offset in chosen.indices {
        let trial = chosen[(offset + round) % chosen.count]
        if let reported = trial.reported {
          let seconds = max(reported(), 1e-9)
          guard round > 0 else { continue }
          timings.wall[trial.name, default: []].append(seconds)
          timings.cpu[trial.name, default: []].append(seconds)
          continue
        }
        let (body, finish) = trial.prepare()
        let (wallStart, cpuStart) = (ContinuousClock.now, Self.threadCPUSeconds())
        timedBody(body)
        let (cpuEnd, wallEnd) = (Self.threadCPUSeconds(), ContinuousClock.now)
        finish()
        guard round > 0 else { continue }
        timings.wall[trial.name, default: []].append(max(wallStart.duration(to: wallEnd).seconds, 1e-9))
        timings.cpu[trial.name, default: []].append(max(cpuEnd - cpuStart, 1e-9))
      }
    }
    return timings
  }

  /// The CPU time of the calling thread, which a machine busy with other work disturbs less than wall time.
  static func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
}

/// Every timed body runs through this one function, so that `valgrind --tool=callgrind
/// --collect-atstart=no --toggle-collect=reader_bench_timed_body` counts the instructions of the timed
/// work alone (with `--only` choosing the case).
@inline(never) @_silgen_name("reader_bench_timed_body")
func timedBody(_ body: () -> Void) {
  body()
}

/// The times of every measured round of each case, in seconds, in round order.
struct Timings {
  var wall: [String: [Double]] = [:]
  var cpu: [String: [Double]] = [:]

  /// Which clock a ratio is taken on.
  enum Clock: String {
    case wall
    case cpu
  }

  /// The times of `name` on `clock` (empty when the case did not run).
  func times(_ name: String, _ clock: Clock = .wall) -> [Double] {
    (clock == .wall ? wall : cpu)[name] ?? []
  }

  /// The median time of a case.
  func median(_ name: String, _ clock: Clock = .wall) -> Double {
    Ratio.median(times(name, clock))
  }

  /// `time(numerator) / time(denominator)` in each round, summarised; `nil` when either case did not run.
  ///
  /// With a baseline as numerator this is a speed ratio (above 1: faster than the baseline); with the
  /// baseline as denominator a cost ratio (above 1: slower).
  func ratio(
    _ name: String, _ numerator: String, over denominator: String, goal: Ratio.Goal? = nil,
    clock: Clock = .wall
  ) -> Ratio {
    let (top, bottom) = (times(numerator, clock), times(denominator, clock))
    return Ratio(name: name, samples: zip(top, bottom).map { $0 / $1 }, goal: goal)
  }
}

/// A ratio between two cases over the rounds of one run: minimum, median and maximum.
struct Ratio {
  /// What a ratio must reach.
  enum Goal {
    /// At least this much (a speed against a baseline).
    case atLeast(Double)
    /// At most this much (a cost against a baseline).
    case atMost(Double)

    func text(ratio: Bool) -> String {
      let (sign, value) =
        switch self {
        case .atLeast(let value): ("≥", value)
        case .atMost(let value): ("≤", value)
        }
      let number = value.rounded() == value ? String(Int(value)) : String(value)
      return "\(sign) \(number)\(ratio ? "×" : "")"
    }

    func isMet(by value: Double) -> Bool {
      switch self {
      case .atLeast(let goal): value >= goal
      case .atMost(let goal): value <= goal
      }
    }
  }

  let name: String
  /// One value per round, sorted.
  let samples: [Double]
  let goal: Goal?
  /// Whether the figure is a ratio (printed with `×`) or a plain number such as an exponent.
  let isRatio: Bool

  init(name: String, samples: [Double], goal: Goal?, isRatio: Bool = true) {
    self.name = name
    self.samples = samples.sorted()
    self.goal = goal
    self.isRatio = isRatio
  }

  var min: Double { samples.first ?? .nan }
  var median: Double { Self.median(samples) }
  var max: Double { samples.last ?? .nan }
  /// Whether the median meets the goal (`nil` without a goal or without samples).
  var met: Bool? {
    guard let goal, !samples.isEmpty else { return nil }
    return goal.isMet(by: median)
  }

  /// One line: `name  min … median … max …  goal … met`.
  var line: String {
    let label = name.padding(toLength: Swift.max(name.count, 60), withPad: " ", startingAt: 0)
    guard !samples.isEmpty else { return "  \(label)  not measured" }
    var text =
      "  \(label)  min \(format(min).leftAligned(9))median \(format(median).leftAligned(9))max \(format(max).leftAligned(9))"
    if let goal, let met { text += "goal \(goal.text(ratio: isRatio)) \(met ? "met" : "NOT MET")" }
    return text
  }

  /// The row of the summary table in the README.
  var markdownRow: String {
    let goalText = goal?.text(ratio: isRatio) ?? ""
    let status = met.map { $0 ? "met" : "not met" } ?? ""
    return "| \(name) | \(format(min)) | \(format(median)) | \(format(max)) | \(goalText) | \(status) |"
  }

  private func format(_ value: Double) -> String {
    isRatio ? Self.format(value) : String(Self.format(value).dropLast())
  }

  static func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
  }

  /// A ratio with three significant digits and a `×`.
  static func format(_ value: Double) -> String {
    guard value.isFinite else { return "n/a" }
    guard Swift.abs(value) < 100_000 else { return String(format: "%.3g×", value) }
    let magnitude = Swift.abs(value)
    let digits = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : magnitude >= 0.1 ? 3 : 4
    return String(format: "%.\(digits)f×", value)
  }
}

extension Duration {
  /// The duration in seconds, as a `Double`.
  var seconds: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }
}

extension String {
  fileprivate func leftAligned(_ width: Int) -> String {
    count >= width ? self + " " : self + String(repeating: " ", count: width - count)
  }
}
