/// How a discovery finds readers.
public enum DiscoveryMethod: Sendable, Hashable {
  /// A continuous Bluetooth scan that reports every nearby reader, nearest first, until cancelled,
  /// until a reader is connected, or until `timeout` (nil: no limit).
  case bluetoothScan(timeout: Duration?)
  /// Finds the single nearest Chipper 2X held close to the device and reports it twice: first with
  /// only its serial number, then with its details.
  case bluetoothProximity
}

/// The tuning of a discovery; the defaults match what the documentation promises.
public struct DiscoveryTuning: Sendable, Hashable {
  /// How often the reported list is recomputed: advertisements arriving between two ticks are
  /// coalesced into at most one `didUpdateDiscoveredReaders` call. 0.5 s by default.
  public var updateInterval: Duration = .milliseconds(500)
  /// A reader not heard from for this long leaves the list. 6 s by default.
  public var stalenessWindow: Duration = .seconds(6)
  /// Proximity discovery only considers readers at least this strong, in dBm. -60 by default.
  public var proximityThreshold: Int = -60
  /// The pause between proximity's first (serial only) and second (detailed) report. 1 s by default.
  public var proximityDetailDelay: Duration = .seconds(1)

  /// The default tuning.
  public init() {}
}
