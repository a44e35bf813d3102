/// What to do when a reading session ends: the handling Core NFC's guidance and field experience
/// recommend, as a pure decision. Use it as is (``NFCReadLoop`` does) or read it as the reference.
///
/// | the session ended with | decision |
/// |---|---|
/// | `readerSessionInvalidationErrorFirstNDEFTagRead` (204) | `finish` — or, `continuous`, `beginNewSession` |
/// | `readerSessionInvalidationErrorSessionTimeout` (201) | `beginNewSession`: a long series of reads never assumes one session lasts |
/// | `readerSessionInvalidationErrorSystemIsBusy` (203) | `beginNewSession` the first time; `report` if the retry is busy too |
/// | `readerSessionInvalidationErrorUserCanceled` (200) | `stopQuietly`: the user chose to stop |
/// | `readerSessionInvalidationErrorSessionTerminatedUnexpectedly` (202) | `report` |
/// | anything else (no capability, radio off, a code not known) | `report` |
///
/// ```swift
/// var policy = NFCReadLoopPolicy(continuous: true)
/// switch policy.decision(after: error) {
/// case .beginNewSession: NFCNDEFReaderSession(delegate: self, queue: nil, invalidateAfterFirstRead: false).begin()
/// case .finish, .stopQuietly: break
/// case .report(let error): show(error)
/// }
/// ```
public struct NFCReadLoopPolicy: Sendable, Hashable {
  /// What to do next.
  public enum Decision: Sendable, Hashable {
    /// Begin a new session and keep reading.
    case beginNewSession
    /// Reading is done: the tag was read.
    case finish
    /// Stop without telling the user anything.
    case stopQuietly
    /// Stop and tell the user why.
    case report(NFCReaderError)
  }

  /// Whether reading goes on after a tag was read.
  public var continuous: Bool
  /// How many sessions in a row before this one ended with `SystemIsBusy`.
  public private(set) var busyInARow = 0

  /// Creates a policy.
  public init(continuous: Bool = false) {
    self.continuous = continuous
  }

  /// The decision after a session ended with `error`; counts busy ends in a row.
  public mutating func decision(after error: NFCReaderError) -> Decision {
    let decision = Self.decision(after: error, continuous: continuous, busyInARow: busyInARow)
    busyInARow = error.code == .readerSessionInvalidationErrorSystemIsBusy ? busyInARow + 1 : 0
    return decision
  }

  /// The decision after a session ended with `error`, when `busyInARow` sessions in a row before it
  /// ended with `SystemIsBusy`. Pure.
  public static func decision(after error: NFCReaderError, continuous: Bool, busyInARow: Int) -> Decision {
    switch error.code {
    case .readerSessionInvalidationErrorFirstNDEFTagRead:
      continuous ? .beginNewSession : .finish
    case .readerSessionInvalidationErrorSessionTimeout:
      .beginNewSession
    case .readerSessionInvalidationErrorSystemIsBusy:
      busyInARow < 1 ? .beginNewSession : .report(error)
    case .readerSessionInvalidationErrorUserCanceled:
      .stopQuietly
    default:
      .report(error)
    }
  }
}
