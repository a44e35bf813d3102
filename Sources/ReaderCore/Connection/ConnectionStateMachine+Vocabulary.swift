// What goes into the link machine and what comes out of it.
extension ConnectionStateMachine {
  /// The timers the machine asks the driver to keep.
  package enum Timer: Hashable, Sendable {
    /// How long a connect listens for a reader last heard too long ago.
    case locate
    /// The first connection's deadline.
    case connect
    /// One reconnection attempt's deadline.
    case reconnectAttempt
    /// The pause between reconnection attempts.
    case reconnectBackoff
    /// The overall reconnection deadline.
    case reconnectDeadline
    /// How long the reader has to close the link after the app's disconnect.
    case disconnectReply
    /// How long the reader has to answer a reboot request.
    case rebootReply
    /// How long a reader that accepted a reboot has to drop the link.
    case rebootDrop
  }

  /// What the driver must do, in order.
  package enum Action: Equatable, Sendable {
    /// Listen for advertisements (a connect waits to hear its reader).
    case listen
    /// Stop listening.
    case stopListening
    case openLink(serialNumber: String)
    case abandonLink(serialNumber: String)
    case closeLink(serialNumber: String)
    case sendReboot(serialNumber: String)
    case arm(Timer, after: Duration)
    case disarm(Timer)
    /// The link is up and the reader must be prepared (its software checked, a required update
    /// installed) before it counts as connected: answer with `prepared` or `preparationFailed`.
    case linkReady(Reader)
    /// The first connection completed.
    case connected(Reader)
    /// The first connection failed; the status is back to `notConnected`.
    case connectFailed(ReaderError)
    /// The app's `disconnectReader()` completed.
    case disconnectCompleted(Reader)
    /// The reader accepted (`nil`) or refused a reboot request, or did not answer in time.
    case rebootAnswered(ReaderError?)
    /// The reader accepted a reboot but kept the link for `replyTimeout`; it counts as connected.
    case rebootNotCarriedOut(Reader)
    /// An unexpected disconnect started automatic reconnection.
    case reconnectStarted(Reader, reason: DisconnectReason)
    /// Automatic reconnection won the reader back.
    case reconnectSucceeded(Reader)
    /// Automatic reconnection gave up (or was cancelled); `disconnected` always follows.
    case reconnectFailed(Reader, ReaderError)
    /// The reader is gone for good, for `reason`.
    case disconnected(Reader, reason: DisconnectReason)
    /// The connected reader's battery crossed below the warning level.
    case lowBatteryWarning(Reader)
    /// The connected reader's details changed (battery, charging).
    case readerUpdated(Reader)
  }

  /// What a reader being prepared will become.
  package enum Preparation: Equatable {
    /// The first connection.
    case connect
    /// The end of a reconnection.
    case reconnect(Reconnection)
  }

  package struct Reconnection: Equatable {
    package var reader: Reader
    package var reason: DisconnectReason
    package var attempt: Int
    package var phase: Phase
    /// How many times the reader was lost again while it was being prepared (its update installing).
    package var preparationLosses = 0

    package enum Phase: Equatable {
      /// A link is being opened.
      case attempting
      /// Waiting before the next attempt.
      case backingOff
      /// The host's radio is off; waiting for it.
      case waitingForRadio
    }
  }

  /// Whether a disconnect for `reason` is followed by automatic reconnection. Not after the app's
  /// own disconnect, and not after a critical battery or an idle power-down: the reader has shut
  /// itself down and will not answer until a person switches it on or charges it. Not after a lost
  /// pairing either: every attempt would fail until the user pairs the reader again.
  package static func reconnects(after reason: DisconnectReason) -> Bool {
    switch reason {
    case .disconnectRequested, .criticallyLowBattery, .idlePowerDown, .peerRemovedPairingInformation: false
    case .unknown, .rebootRequested, .securityReboot, .poweredOff, .bluetoothDisabled, .bluetoothSignalLost,
      .usbDisconnected:
      true
    }
  }
}
