public import ReaderCore

/// An `NFCRadio` that does what the radio it wraps does and writes every command and event, with its
/// time, as a recording line (`NFCRadioRecord`): a run on real hardware that `ReplayingNFCRadio` can
/// play back on the simulator.
///
/// Lines go to `write` in the order they happen, each from the scheduler's thread (commands) or as the
/// event reaches the reader system (events), so an event's time is the time the system handled it.
/// The policy is the first line; each `isReadingAvailable` answer is a line too.
///
/// ```swift
/// let recorder = RecordingNFCRadio(wrapping: radio, scheduler: scheduler) { line in file.write(line + "\n") }
/// let system = NFCReaderSystem(radio: recorder, scheduler: scheduler)
/// ```
public final class RecordingNFCRadio: NFCRadio, Sendable {
  /// The radio doing the work.
  public let radio: any NFCRadio
  private let scheduler: any Scheduler
  private let origin: Duration
  private let write: Locked<@Sendable (String) -> Void>

  /// Wraps `radio`; times count from `origin` on `scheduler`'s time line (now, by default).
  public init(
    wrapping radio: any NFCRadio, scheduler: any Scheduler, origin: Duration? = nil,
    write: @escaping @Sendable (String) -> Void
  ) {
    self.radio = radio
    self.scheduler = scheduler
    self.origin = origin ?? scheduler.elapsed
    self.write = Locked(write)
    record(.policy(radio.policy))
  }

  /// Writes a mark of the app's (`stop`: the run was ended here).
  public func note(_ text: String) { record(.note(text)) }

  private func record(_ entry: NFCRadioRecord.Entry) {
    let line = NFCRadioRecord(time: max(.zero, scheduler.elapsed - origin), entry).jsonLine
    write.withLock { $0(line) }
  }

  public func setEventHandler(_ handler: @escaping @Sendable (NFCRadioEvent) -> Void) {
    radio.setEventHandler { [self] event in
      record(.event(event))
      handler(event)
    }
  }

  public var isReadingAvailable: Bool {
    let available = radio.isReadingAvailable
    record(.readingAvailable(available))
    return available
  }

  public var policy: NFCSystemPolicy { radio.policy }

  public func startPolling(_ round: NFCRadioRequestID) {
    record(.command(.startPolling(round)))
    radio.startPolling(round)
  }

  public func stopPolling(_ round: NFCRadioRequestID) {
    record(.command(.stopPolling(round)))
    radio.stopPolling(round)
  }

  public func connect(to tag: NFCRadioTagID, request: NFCRadioRequestID) {
    record(.command(.connect(tag, request)))
    radio.connect(to: tag, request: request)
  }

  public func queryNDEFStatus(of tag: NFCRadioTagID, request: NFCRadioRequestID) {
    record(.command(.queryNDEFStatus(tag, request)))
    radio.queryNDEFStatus(of: tag, request: request)
  }

  public func readNDEF(from tag: NFCRadioTagID, request: NFCRadioRequestID) {
    record(.command(.readNDEF(tag, request)))
    radio.readNDEF(from: tag, request: request)
  }

  public func writeNDEF(_ bytes: [UInt8], to tag: NFCRadioTagID, request: NFCRadioRequestID) {
    record(.command(.writeNDEF(bytes, tag, request)))
    radio.writeNDEF(bytes, to: tag, request: request)
  }

  public func writeLock(_ tag: NFCRadioTagID, request: NFCRadioRequestID) {
    record(.command(.writeLock(tag, request)))
    radio.writeLock(tag, request: request)
  }

  public func presentSheet(alertMessage: String) {
    record(.command(.presentSheet(alertMessage)))
    radio.presentSheet(alertMessage: alertMessage)
  }

  public func updateSheet(alertMessage: String) {
    record(.command(.updateSheet(alertMessage)))
    radio.updateSheet(alertMessage: alertMessage)
  }

  public func dismissSheet(errorMessage: String?) {
    record(.command(.dismissSheet(errorMessage)))
    radio.dismissSheet(errorMessage: errorMessage)
  }
}
