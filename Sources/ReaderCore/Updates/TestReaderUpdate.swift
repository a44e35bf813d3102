#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How a test update fails. The terminal plays it (`UpdateInstallStateMachine`), as Stripe's SDK plays
/// test updates on simulated and physical readers alike: no reader is ever asked to misbehave.
package enum UpdateFault: Sendable, Hashable {
  /// Refuse the install: the battery is too low (`readerSoftwareUpdateFailedBatteryLow`).
  case lowBattery
  /// Fail with a reader error once progress reaches `atProgress`.
  case fail(atProgress: Double)
  /// Drop the link once progress reaches `atProgress` (`readerSoftwareUpdateFailedInterrupted`).
  case dropLink(atProgress: Double)
}

/// The update a connection sees in testing instead of the catalog's, chosen per connection with
/// `BluetoothConnectionConfiguration.Builder.setTestReaderUpdate(_:)`, as Stripe's `TestReaderUpdate`.
/// The resulting update has `isTestUpdate` set, so an app can label it.
///
/// ```swift
/// let config = try BluetoothConnectionConfigurationBuilder(delegate: self, locationId: "tml_1")
///   .setTestReaderUpdate(.required([.firmware, .config]))
///   .build()
/// ```
public struct TestReaderUpdate: Sendable, Hashable {
  /// What the update does.
  public enum Kind: Sendable, Hashable {
    /// An optional update, required in 7 days: reported, not installed.
    case available
    /// A required update, installed while connecting.
    case required
    /// A required update the reader refuses for a low battery; the connection fails.
    case lowBattery
    /// A required update the reader refuses for a low battery; the reader runs recent software, so
    /// the connection succeeds with the update pending.
    case lowBatterySucceedConnect
    /// One of the above, or no update, drawn from the terminal's seed at each connection.
    case random
    /// A required update the reader fails with a reader error at `atProgress`; the connection fails.
    case failing(atProgress: Double)
    /// A required update during which the reader drops the link at `atProgress`; the connection fails.
    case interrupted(atProgress: Double)
  }

  /// What the update does.
  public let kind: Kind
  /// What it contains (meaningful for `available` and `required`).
  public let components: UpdateComponent

  /// The components of a full update: firmware, configuration and keys.
  public static let fullUpdate: UpdateComponent = [.firmware, .config, .keys]

  private init(_ kind: Kind, _ components: UpdateComponent) {
    self.kind = kind
    self.components = components
  }

  /// An optional update with `components`, required 7 days from the connection.
  public static func available(_ components: UpdateComponent) -> TestReaderUpdate { .init(.available, components) }
  /// A required update with `components`, installed while connecting (a full one takes about a simulated minute).
  public static func required(_ components: UpdateComponent) -> TestReaderUpdate { .init(.required, components) }
  /// A required update that fails for a low battery; the connection fails.
  public static func lowBattery() -> TestReaderUpdate { .init(.lowBattery, fullUpdate) }
  /// A required update that fails for a low battery while the connection succeeds.
  public static func lowBatterySucceedConnect() -> TestReaderUpdate { .init(.lowBatterySucceedConnect, fullUpdate) }
  /// No update or one of the kinds above, drawn from the terminal's seed at each connection.
  public static func random() -> TestReaderUpdate { .init(.random, fullUpdate) }
  /// A required update the reader fails at `progress` (0...1) with a reader error.
  public static func failing(atProgress progress: Double) -> TestReaderUpdate {
    .init(.failing(atProgress: progress), fullUpdate)
  }
  /// A required update during which the reader drops the link at `progress` (0...1).
  public static func interrupted(atProgress progress: Double) -> TestReaderUpdate {
    .init(.interrupted(atProgress: progress), fullUpdate)
  }

  /// How long ago a reader "ran the latest software" in a test update that keeps it recent (the
  /// grace rule applies) and in one that does not.
  static let recently = Duration.seconds(86_400)
  static let longAgo = Duration.seconds(60 * 86_400)

  /// What a connection to a reader running `installedVersion` sees at `now`, and the fault the reader
  /// is asked to show; `random` draws `.random`'s choice.
  package func resolve(installedVersion: String, at now: Date, random: inout SeededRandom)
    -> (availability: UpdateAvailability, fault: UpdateFault?)
  {
    var kind = self.kind
    if kind == .random {
      let choices: [Kind?] = [nil, .available, .required, .lowBattery, .lowBatterySucceedConnect]
      guard let drawn = choices[Int(random.next() % UInt64(choices.count))] else { return (.upToDate, nil) }
      kind = drawn
    }
    let components = self.components.isEmpty ? Self.fullUpdate : self.components
    let (requiredIn, ranLatest, fault): (Duration, Duration, UpdateFault?) =
      switch kind {
      case .available: (.seconds(7 * 86_400), Self.recently, nil)
      case .required, .random: (.seconds(-1), Self.longAgo, nil)
      case .lowBattery: (.seconds(-1), Self.longAgo, .lowBattery)
      case .lowBatterySucceedConnect: (.seconds(-1), Self.recently, .lowBattery)
      case .failing(let progress): (.seconds(-1), Self.longAgo, .fail(atProgress: progress))
      case .interrupted(let progress): (.seconds(-1), Self.longAgo, .dropLink(atProgress: progress))
      }
    let update = ReaderSoftwareUpdate(
      deviceSoftwareVersion: Self.version(after: installedVersion, components: components),
      durationEstimate: components.contains(.firmware) || components.contains(.config)
        ? .estimate1To2Minutes : .estimateLessThan1Minute,
      components: components, requiredAt: now.addingTimeInterval(requiredIn.inSeconds), isTestUpdate: true)
    return (
      UpdateAvailability(update: update, installedVersionSupersededAt: now.addingTimeInterval(-ranLatest.inSeconds)),
      fault
    )
  }

  /// The version an update brings: the installed one for an incremental-only update (as in Stripe's
  /// SDK), otherwise the installed one with its last number raised.
  static func version(after installed: String, components: UpdateComponent) -> String {
    guard components != .incremental else { return installed }
    guard (try? SoftwareVersion(installed)) != nil else { return "1.0.0" }
    // Raise the last number in place, keeping the others as written ("2.01.00.17" → "2.01.00.18").
    var parts = installed.split(separator: ".").map(String.init)
    let last = parts.removeLast()
    let raised = String((Int(last) ?? 0) + 1)
    return (parts + [String(repeating: "0", count: max(0, last.count - raised.count)) + raised]).joined(separator: ".")
  }
}
