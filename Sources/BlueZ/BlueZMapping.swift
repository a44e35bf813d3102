import DBus
import ReaderCore

extension BlueZCentralStateMachine {
  /// Why a link ended, as Stripe's `DisconnectReason`, from the `Device1.Disconnected` reason that
  /// preceded `Connected = false` (nil on BlueZ before 5.82, which has no such signal):
  /// - the terminal's own `disconnect` → `disconnectRequested`, whatever BlueZ says;
  /// - the adapter going off or blocked → `bluetoothDisabled`;
  /// - `org.bluez.Reason.Timeout` (link supervision timeout) → `bluetoothSignalLost`;
  /// - `org.bluez.Reason.Remote` → `rebootRequested` when the reader was asked to reboot, else
  ///   `poweredOff` (the reader ended the link: switched off, or out of resources);
  /// - `org.bluez.Reason.Authentication` → `peerRemovedPairingInformation`;
  /// - anything else (`Local` from another client, `LocalSuspend`, `Unknown`, none) → `unknown`.
  package static func disconnectReason(
    _ reason: String?, requested: Bool, rebootExpected: Bool, radioGoingOff: Bool
  ) -> DisconnectReason {
    if requested { return .disconnectRequested }
    if radioGoingOff { return .bluetoothDisabled }
    switch reason {
    case "org.bluez.Reason.Timeout": return .bluetoothSignalLost
    case "org.bluez.Reason.Remote": return rebootExpected ? .rebootRequested : .poweredOff
    case "org.bluez.Reason.Authentication": return .peerRemovedPairingInformation
    default: return rebootExpected && reason == nil ? .rebootRequested : .unknown
    }
  }

  /// The `ReaderError` a failed `Device1.Connect` gives, with the D-Bus error as its cause:
  /// `NotReady` (adapter off) → `bluetoothDisabled`; no reply → `bluetoothConnectTimedOut`; `Failed`,
  /// `InProgress`, `AuthenticationFailed` and the rest → `connectionFailed`.
  package static func connectError(_ error: DBusError, serialNumber: String) -> ReaderError {
    let cause = ErrorCause.dbus(name: error.name, message: error.message)
    let context = ["serialNumber": serialNumber]
    switch error.name {
    case "org.bluez.Error.NotReady":
      return ReaderError(.bluetoothDisabled, "the Bluetooth adapter is not ready", context: context, cause: cause)
    case DBusError.noReply:
      return ReaderError(
        .bluetoothConnectTimedOut, "bluetoothd did not answer the connect", context: context, cause: cause)
    default:
      return ReaderError(.connectionFailed, "the connection failed", context: context, cause: cause)
    }
  }
}
