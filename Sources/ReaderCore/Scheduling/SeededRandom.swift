/// A small, fast, seedable generator (SplitMix64): the same seed always gives the same sequence.
///
/// Everything random in ReaderKit (reconnect jitter, simulated faults) draws from one of these,
/// injected, so a run is reproducible from its seed.
public struct SeededRandom: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// Creates a generator for `seed`.
  public init(seed: UInt64) { state = seed }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A uniformly distributed value in `0..<1`.
  public mutating func nextUnit() -> Double {
    Double(next() >> 11) / Double(1 << 53)
  }
}
