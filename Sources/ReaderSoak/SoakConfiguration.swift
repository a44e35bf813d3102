/// What a soak runs: how long, from which seed, how many faults, over how many stations.
public struct SoakConfiguration: Sendable, Hashable {
  /// The seed of everything: the worlds, the apps' decisions and the fault schedule.
  public var seed: UInt64
  /// Simulated days of faults (fractions allowed); the run then settles for `settle`.
  public var days: Double
  /// Faults a simulated hour on each station, on average.
  public var faultsPerHour: Double
  /// Stations: phones, each with its app, its readers, its NFC radio and its disk.
  public var stations: Int
  /// Readers in each station's world.
  public var readersPerStation: Int
  /// When set, only the faults with these ids run (a shrunk schedule, replayed).
  public var keep: Set<Int>?
  /// How long the run goes on after the last fault, with no new initiative, before its final checks.
  public var settle: Duration
  /// When set, the run stops there (no settling, no final checks): for shrinking.
  public var stopAt: Duration?
  /// When set, the run stops at its first violation.
  public var stopsAtFirstViolation: Bool
  /// When set, a run that takes longer in wall-clock time stops with a `wallTime` violation.
  public var wallClockLimit: Duration?
  /// Whether the report keeps the event log's lines (the digest is always computed).
  public var keepsLog: Bool
  /// Breakage put between the terminals and their worlds, for the soak's own tests.
  package var sabotage: SoakSabotage?

  /// A configuration; the defaults are the benchmark's: 30 days, 4 faults an hour, 2 stations of 3 readers.
  public init(
    seed: UInt64 = 1, days: Double = 30, faultsPerHour: Double = 4, stations: Int = 2, readersPerStation: Int = 3,
    keep: Set<Int>? = nil, settle: Duration = .seconds(900), stopAt: Duration? = nil,
    stopsAtFirstViolation: Bool = false, wallClockLimit: Duration? = nil, keepsLog: Bool = false
  ) {
    self.seed = seed
    self.days = days
    self.faultsPerHour = faultsPerHour
    self.stations = stations
    self.readersPerStation = readersPerStation
    self.keep = keep
    self.settle = settle
    self.stopAt = stopAt
    self.stopsAtFirstViolation = stopsAtFirstViolation
    self.wallClockLimit = wallClockLimit
    self.keepsLog = keepsLog
  }

  /// How long faults are drawn over.
  public var faultSpan: Duration { .seconds(max(0, days) * 86_400) }
}
