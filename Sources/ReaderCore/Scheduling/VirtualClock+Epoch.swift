#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension VirtualClock {
  /// The date a simulation on a virtual clock starts at (2026-01-01 00:00 UTC), so dates in a seeded
  /// run — an update's `requiredAt`, the grace window — replay exactly.
  public static let simulationEpoch = Date(timeIntervalSince1970: 1_767_225_600)

  /// The simulation's epoch: a virtual clock's dates do not depend on when it runs.
  public var epoch: Date { Self.simulationEpoch }

  /// A virtual clock is deterministic: a run is a pure function of what was submitted.
  public var isDeterministic: Bool { true }
}
