#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Something a reader reports over its link, always on the terminal's scheduler.
public enum ReaderLinkEvent: Sendable, Hashable {
  /// A reader installing an update reported how far it got, in `0...1`.
  case updateProgress(serialNumber: String, progress: Double)
  /// A reader finished installing an update: `nil` is success (it now runs the update's version);
  /// otherwise it keeps its previous version.
  case updateFinished(serialNumber: String, error: ReaderError?)
  /// A connected reader reported new battery readings.
  case batteryDidChange(serialNumber: String, level: Double, isCharging: Bool)
  /// A connected reader answered a reboot request; `nil` means it accepted.
  case rebootResponse(serialNumber: String, error: ReaderError?)
}

/// Commands to one reader, as the terminal needs them: the channel to a reader, next to the radio
/// (`BluetoothCentral`) that finds readers and opens links to them.
///
/// Commands go to the reader with the given serial number: a connected reader for `reboot`, a
/// connected or advertising one for `flashLEDs` (proximity discovery flashes the reader it picked).
/// Implementations deliver every `ReaderLinkEvent` on the terminal's `Scheduler`, one at a time and
/// never re-entrantly from inside a command; commands are fire-and-forget and their results arrive
/// as events. `SimulatedBluetoothCentral` implements both protocols; a real backend maps these
/// commands to the reader's GATT service.
public protocol ReaderLink: AnyObject, Sendable {
  /// Installs the receiver of events. Called once, before any command.
  func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void)
  /// Asks the reader to flash its LEDs so a person can pick it out.
  func flashLEDs(serialNumber: String)
  /// Asks a connected reader to reboot; answered by `rebootResponse`, then (if accepted) the radio's
  /// `didDisconnect(reason: .rebootRequested)`.
  func reboot(serialNumber: String)
  /// Sends a software update to a connected reader with its verified image (nil for an update
  /// without one, such as a test update). Answered by `updateProgress` events and one
  /// `updateFinished`; if the link drops first, the reader keeps its previous version and no
  /// `updateFinished` follows.
  func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?)
  /// Asks a reader to stop installing; answered by `updateFinished` (with an error once it stopped,
  /// or success when it had already finished).
  func cancelUpdate(serialNumber: String)
}
