/// Where a station stands at an instant: what faults are aimed at, and what they are counted under.
///
/// A station has two sides, each in one state at a time: its Bluetooth side (the terminal, its reader and
/// the app that drives them) and its NFC side (the reader sessions of the app on the same phone).
public enum SoakState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
  /// No reader and nothing under way (a scan may run).
  case idle
  /// A first connection is under way: listening, linking, or preparing the reader.
  case connecting
  /// A software update installs (while connecting, reconnecting or connected).
  case installing
  /// A reader is connected and nothing else runs.
  case connected
  /// Automatic reconnection is under way.
  case reconnecting
  /// The reader restarts: a requested reboot or its security reboot, until it is connected again.
  case rebootWindow
  /// The app's reconnect at launch is under way.
  case launchReconnect
  /// The app was killed and is not running yet.
  case appDown
  /// No NFC session is begun.
  case nfcIdle
  /// An NFC session waits in the system's line (another one runs).
  case nfcQueued
  /// An NFC session polls, with no other waiting.
  case nfcActive

  /// The states of the Bluetooth side, in the order reports print them.
  public static let bluetooth: [SoakState] = [
    .idle, .connecting, .installing, .connected, .reconnecting, .rebootWindow, .launchReconnect, .appDown,
  ]
  /// The states of the NFC side, in the order reports print them.
  public static let nfc: [SoakState] = [.nfcIdle, .nfcQueued, .nfcActive]

  /// The states a fault can wait for: every state but `appDown`, which only the app's death brings.
  public static let aimable: [SoakState] = bluetooth.filter { $0 != .appDown } + nfc

  /// Whether the state belongs to the NFC side.
  public var isNFC: Bool { SoakState.nfc.contains(self) }

  /// How long a station typically stays in the state, the span an aimed fault's delay is drawn from.
  var typicalSpan: Duration {
    switch self {
    case .idle: .seconds(60)
    case .connecting: .seconds(3)
    case .installing: .seconds(60)
    case .connected: .seconds(600)
    case .reconnecting: .seconds(20)
    case .rebootWindow: .seconds(12)
    case .launchReconnect: .seconds(4)
    case .appDown: .seconds(30)
    case .nfcIdle: .seconds(60)
    case .nfcQueued: .seconds(5)
    case .nfcActive: .seconds(8)
    }
  }

  /// The state's name in a report's columns.
  var column: String {
    switch self {
    case .rebootWindow: "reboot"
    case .launchReconnect: "launch"
    case .reconnecting: "reconnect"
    default: rawValue
    }
  }

  public var description: String { rawValue }
}
