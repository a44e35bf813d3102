import NFCKit
import ReaderCore

extension NFCReaderSystem {
  /// A reader system on the built-in simulator: a `VirtualClock` and a `SimulatedNFCRadio` (Core NFC's
  /// 60-second limit and FIFO queue unless `policy` says otherwise). Drive time with `radio.clock`.
  public static func simulated(
    seed: UInt64,
    policy: NFCSystemPolicy = NFCSystemPolicy(sessionTimeout: SimulatedNFCRadio.documentedSessionTimeout),
    timing: SimulatedNFCRadio.Timing = SimulatedNFCRadio.Timing()
  ) -> (system: NFCReaderSystem, radio: SimulatedNFCRadio) {
    let clock = VirtualClock()
    let radio = SimulatedNFCRadio(clock: clock, seed: seed, policy: policy, timing: timing)
    return (NFCReaderSystem(radio: radio, scheduler: clock), radio)
  }
}
