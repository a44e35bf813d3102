/// Something a simulated reader is scripted to do wrong during its next update install
/// (`SimulatedBluetoothCentral.failNextUpdate(_:atProgress:)`, `dropLinkDuringNextUpdate(_:atProgress:)`).
/// A simulated reader's own faults live here, in the simulator; nothing outside it knows of them.
enum SimulatedUpdateFault: Sendable, Hashable {
  /// Fail with a reader error once progress reaches `atProgress`.
  case fail(atProgress: Double)
  /// Drop the link once progress reaches `atProgress` (the terminal sees `readerSoftwareUpdateFailedInterrupted`).
  case dropLink(atProgress: Double)
}
