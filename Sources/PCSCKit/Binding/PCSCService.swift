/// The PC/SC calls an NFC backend makes, asynchronously: every call returns at once and its result
/// comes back through its completion, run as a work item of the backend's `Scheduler`.
///
/// Calls on readers' states (`listReaders`, `waitForChange`) run one after another on one lane; calls
/// on cards (`connect`, `transmit`, `disconnect`) one after another on another, so a transmit never
/// waits behind a blocked status wait. `LivePCSCService` makes the C calls through pcsc-lite; tests use
/// a scripted service on a `VirtualClock`.
package protocol PCSCService: AnyObject, Sendable {
  /// The readers' names (none: an empty list, not an error).
  func listReaders(_ completion: @escaping @Sendable (Result<[String], PCSCError>) -> Void)
  /// Waits until one of `readers` differs from its `currentState`, or `timeout` passes
  /// (`SCARD_E_TIMEOUT`), or `cancelWait()` (`SCARD_E_CANCELLED`); answers with the readers' new states.
  func waitForChange(
    _ readers: [PCSCReaderState], timeout: Duration,
    _ completion: @escaping @Sendable (Result<[PCSCReaderState], PCSCError>) -> Void)
  /// Ends the wait in progress, and any not yet begun, with `SCARD_E_CANCELLED`.
  func cancelWait()
  /// Connects to the card in `reader`, exclusively, with T=0 or T=1.
  func connect(_ reader: String, _ completion: @escaping @Sendable (Result<PCSCCard, PCSCError>) -> Void)
  /// Sends a command APDU to `card` and answers with the response (status word included).
  func transmit(
    _ apdu: [UInt8], to card: PCSCCard, _ completion: @escaping @Sendable (Result<[UInt8], PCSCError>) -> Void)
  /// Releases `card`, leaving it powered.
  func disconnect(_ card: PCSCCard)
  /// Gives up the card lane, which a call blocks: later card calls go to a new one, and cards of the
  /// old lane answer `SCARD_E_INVALID_HANDLE`.
  func abandonCardLane()
  /// The readers and their states now (`eventState`, `atr`), blocking the caller for two round trips
  /// to the service: for a capability check or a listing. Fails with `SCARD_E_NO_SERVICE` when the
  /// service is not running.
  func probe() -> Result<[PCSCReaderState], PCSCError>
}
