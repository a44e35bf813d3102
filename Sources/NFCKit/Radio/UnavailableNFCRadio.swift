public import ReaderCore

/// A host without NFC: `isReadingAvailable` is `false`, and a session begun anyway ends with
/// `readerErrorUnsupportedFeature`.
///
/// This backs the per-process `NFCReaderSystem.shared` on a host without an NFC stack ReaderKit can use
/// (no pcsc-lite on Linux; Apple platforms until Core NFC is bound), so an app sees no reading
/// capability rather than a fake one.
public final class UnavailableNFCRadio: NFCRadio, Sendable {
  private let scheduler: any Scheduler
  private let handler = Locked<(@Sendable (NFCRadioEvent) -> Void)?>(nil)

  /// Creates the radio; its (only) answers are delivered on `scheduler`.
  public init(scheduler: any Scheduler) {
    self.scheduler = scheduler
  }

  public func setEventHandler(_ handler: @escaping @Sendable (NFCRadioEvent) -> Void) {
    self.handler.withLock { $0 = handler }
  }
  public var isReadingAvailable: Bool { false }
  /// No limit: no session ever runs.
  public var policy: NFCSystemPolicy { NFCSystemPolicy(sessionTimeout: nil) }

  public func startPolling(_ round: NFCRadioRequestID) { send(.pollingFailed(round, .unsupported)) }
  public func stopPolling(_ round: NFCRadioRequestID) {}
  public func connect(to tag: NFCRadioTagID, request: NFCRadioRequestID) { send(.response(request, .failed(.tagLost))) }
  public func queryNDEFStatus(of tag: NFCRadioTagID, request: NFCRadioRequestID) {
    send(.response(request, .failed(.tagLost)))
  }
  public func readNDEF(from tag: NFCRadioTagID, request: NFCRadioRequestID) {
    send(.response(request, .failed(.tagLost)))
  }
  public func writeNDEF(_ bytes: [UInt8], to tag: NFCRadioTagID, request: NFCRadioRequestID) {
    send(.response(request, .failed(.tagLost)))
  }
  public func writeLock(_ tag: NFCRadioTagID, request: NFCRadioRequestID) {
    send(.response(request, .failed(.tagLost)))
  }
  public func presentSheet(alertMessage: String) {}
  public func updateSheet(alertMessage: String) {}
  public func dismissSheet(errorMessage: String?) {}

  private func send(_ event: NFCRadioEvent) {
    guard let handler = handler.withLock({ $0 }) else { return }
    scheduler.execute { handler(event) }
  }
}
