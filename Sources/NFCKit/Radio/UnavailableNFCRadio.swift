public import ReaderCore

/// A host without NFC: `isReadingAvailable` is `false`, and a session begun anyway ends with
/// `readerErrorUnsupportedFeature`.
///
/// This backs the per-process `NFCReaderSystem.shared` on a host without an NFC stack ReaderKit can use
/// (no pcsc-lite on Linux; Apple platforms until Core NFC is bound), so an app sees no reading
/// capability rather than a fake one. It also stands in for the host's radio when the host's NFC
/// configuration file cannot be used: the administrator's rules are never silently replaced by the
/// defaults, and the error a session ends with names the file and line.
public final class UnavailableNFCRadio: NFCRadio, Sendable {
  private let scheduler: any Scheduler
  private let reason: NFCRadioFailure
  private let handler = Locked<(@Sendable (NFCRadioEvent) -> Void)?>(nil)

  /// Creates the radio; its (only) answers are delivered on `scheduler`. A session begun on it ends with
  /// `reason` mapped to its Core NFC code (`readerErrorUnsupportedFeature` for `.unsupported`, with the
  /// message, cause and context of a `.detailed` reason).
  public init(scheduler: any Scheduler, reason: NFCRadioFailure = .unsupported) {
    self.scheduler = scheduler
    self.reason = reason
  }

  public func setEventHandler(_ handler: @escaping @Sendable (NFCRadioEvent) -> Void) {
    self.handler.withLock { $0 = handler }
  }
  public var isReadingAvailable: Bool { false }
  /// No limit: no session ever runs.
  public var policy: NFCSystemPolicy { NFCSystemPolicy(sessionTimeout: nil) }

  public var unavailableReason: NFCRadioFailure { reason }

  public func startPolling(_ round: NFCRadioRequestID) { send(.pollingFailed(round, reason)) }
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
