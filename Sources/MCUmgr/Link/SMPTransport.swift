import ReaderCore

/// Something an `SMPTransport` reports, always on the terminal's `Scheduler`, one at a time.
public enum SMPTransportEvent: Sendable, Hashable {
  /// The link to the reader is up and usable for SMP: the GATT services are resolved and notifications
  /// of the SMP characteristic are on. `maximumWriteLength` is the largest `send` the link takes in one
  /// write without response (the ATT MTU minus 3: 20 on a link that kept the default MTU of 23, 244
  /// with an MTU of 247). Reported again after every reconnection.
  case ready(maximumWriteLength: Int)
  /// One notification of the SMP characteristic, as received: part of a response, a whole one, or
  /// (rarely) the end of one and the start of the next. Nothing is delivered between `down` and the
  /// next `ready`.
  case received([UInt8])
  /// A `send` of these bytes failed (BlueZ: `WriteValue` answered with an error such as
  /// `org.bluez.Error.Failed`, `NotPermitted`, `InProgress` or `NotConnected`; `cause` carries its
  /// name): they never reached the reader, so the request they belong to fails at once instead of
  /// waiting for its timeout. Reported once per failed `send`, in the order of the sends.
  case sendFailed([UInt8], ErrorCause)
  /// The link went down, whatever the reason (out of range, reader reset, adapter off, our own
  /// disconnect). Reported before the radio reports the loss to the terminal (if it does), so that a
  /// reset the reader was asked for is answered first.
  case down
}

/// How the backend is to read the next loss of a reader's link, as the SMP link declares it before
/// it asks the reader to reset (see `SMPTransport.expectLinkLoss(_:)`).
public enum SMPLinkLossExpectation: Sendable, Hashable {
  /// The reader was asked to reboot (`ReaderLink.reboot`): report the next loss of the link to the
  /// terminal as `BluetoothEvent.didDisconnect(reason: .rebootRequested)`, whatever BlueZ says (a
  /// reset shows as `org.bluez.Reason.Remote` or `Timeout`). The expectation ends with that loss.
  case reboot
  /// The reader restarts into a new software image as one step of an install: keep the loss from the
  /// terminal (no `didDisconnect`; it still counts the reader as connected), reconnect to the same
  /// device, and report `.ready` again once its SMP characteristic notifies. Keep reconnecting until
  /// the link is back or the SMP link clears the expectation; the SMP link bounds the wait itself.
  case restart
}

/// The SMP channel to one reader: MCUmgr's Simple Management Protocol over Bluetooth LE GATT, as
/// Zephyr's "SMP transport over Bluetooth" specifies it — one characteristic
/// (`SMPGATT.characteristicUUID`) in one service (`SMPGATT.serviceUUID`); requests go to
/// the reader as writes without response, responses come back as notifications; a request or a
/// response longer than one write or notification is split across several, with no framing of its own
/// (the 8-byte SMP header of the first piece gives the total length).
///
/// A Bluetooth backend (BlueZ over D-Bus, CoreBluetooth) implements it once per reader and hands it
/// out through an `SMPTransportProvider`; `SMPReaderLink` speaks SMP over it. The contract, for the
/// backend:
///
/// - **Threading.** Every event is delivered on the terminal's `Scheduler`, one at a time, never from
///   inside a call the SMP link makes (`send`, `expectLinkLoss`): schedule it with
///   `scheduler.execute`. The SMP link calls the transport on that scheduler too.
/// - **Readiness.** Report the reader connected to the terminal (`didConnect`) only once the transport
///   is ready: services resolved, notifications on (BlueZ: `StartNotify` or `AcquireNotify` on the
///   characteristic), and `maximumWriteLength` known. Deliver `.ready` at that moment (and again after
///   every reconnection), `.received` for every notification (BlueZ: the characteristic's `Value` in
///   `PropertiesChanged`, or a read on the `AcquireNotify` socket), and `.down` when the link ends —
///   before reporting `didDisconnect` to the terminal.
/// - **Sending.** `send` writes its bytes as they are, in order, as one write without response
///   (BlueZ: `WriteValue` with `type: "command"`, or the `AcquireWrite` socket). The SMP link never
///   passes more than `maximumWriteLength` bytes at once. A write that fails is reported with
///   `.sendFailed` (its bytes and the backend's error), and the SMP link fails the request it carried
///   at once; a send while the link is down is dropped.
/// - **Expected losses.** `expectLinkLoss(_:)` says how to read the next loss of the link; see
///   `SMPLinkLossExpectation`. While `.restart` is set, a loss is not reported to the terminal: deliver
///   `.down` to the transport, reconnect to the same device (bounded waits for `ServicesResolved`,
///   retried), and deliver `.ready` once it is back. When the SMP link clears the expectation (`nil`)
///   while the link is still down, it has given up waiting: report the hidden loss to the terminal
///   right then (`didDisconnect` with the reason the loss had, mapped as any other) and stop
///   reconnecting. One exception: the host's radio going off (adapter powered off, rfkill) is reported
///   at once as usual, expectation or not, and ends the expectation.
public protocol SMPTransport: AnyObject, Sendable {
  /// Installs the receiver of events; the SMP link calls it once, before anything else. Replaces any
  /// previous handler.
  func setEventHandler(_ handler: @escaping @Sendable (SMPTransportEvent) -> Void)
  /// The largest `send` the link takes now (ATT MTU − 3), or `nil` while the link is down or not yet
  /// ready. The SMP link reads it when it starts using a transport that may already be up; afterwards
  /// it follows the events.
  var maximumWriteLength: Int? { get }
  /// Writes `bytes` (at most `maximumWriteLength`) to the SMP characteristic as one write without
  /// response.
  func send(_ bytes: [UInt8])
  /// Says how to read the next loss of the link (`nil`: as usual, mapped from BlueZ's reason). Set
  /// before the request that makes the reader reset is sent; cleared by the SMP link when the reader
  /// refused it, when the restart is over, or when it stopped waiting for the reader to come back.
  func expectLinkLoss(_ expectation: SMPLinkLossExpectation?)
}

/// The GATT identifiers of SMP over Bluetooth, from Zephyr's "SMP transport over Bluetooth"
/// specification. A reader that speaks SMP advertises `serviceUUID`.
public enum SMPGATT {
  /// The SMP service.
  public static let serviceUUID = "8D53DC1D-1DB7-4CD3-868B-8A527460AA84"
  /// The one characteristic of the SMP service: write without response (requests), notify (responses).
  public static let characteristicUUID = "DA2E7828-FBCE-4E01-AE9E-261174997C48"
}

/// Hands out the SMP transport of each reader the Bluetooth backend knows, by serial number (the
/// serial number the backend reports in `Advertisement` and `didConnect`).
public protocol SMPTransportProvider: AnyObject, Sendable {
  /// The transport to the reader with `serialNumber`, or `nil` when the backend does not know the
  /// reader. Called on the terminal's scheduler, when the SMP link first needs the reader (a reboot or
  /// an install); the SMP link keeps the transport and its event handler from then on, across
  /// reconnections, so return the same object for the same reader every time.
  func smpTransport(forSerialNumber serialNumber: String) -> (any SMPTransport)?
}
