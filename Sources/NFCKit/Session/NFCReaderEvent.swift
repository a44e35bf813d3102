/// One entry of a reader system's ordered event log: every delegate call of every session, and
/// every session that had to wait in line.
///
/// Events are published on the system's scheduler, in order, before the delegate call they mirror —
/// except the first `didDetectTags` of a session whose delegate was not yet known to take tags, which
/// follows the call that shows it does (see `NFCNDEFReaderSessionDelegate`). On a `VirtualClock` the log
/// is a pure function of the seed and the script. `name` is stable, for logs and JSON.
public struct NFCReaderEvent: Sendable, Hashable {
  /// When it happened: scheduler time since the scheduler started.
  public var time: Duration
  /// The session's `identifier`.
  public var session: UInt64
  /// What happened.
  public var kind: Kind

  /// The events, named after the delegate method they mirror.
  public enum Kind: Sendable, Hashable {
    /// `begin()` found another session running; this one waits. `position` counts from 1.
    case didQueue(position: Int)
    /// `readerSessionDidBecomeActive(_:)`: polling runs, the sheet shows.
    case didBecomeActive
    /// `readerSession(_:didDetectNDEFs:)`.
    case didDetectNDEFs([NDEFMessage])
    /// `readerSession(_:didDetect:)` (read-write sessions).
    case didDetectTags([NFCNDEFTag])
    /// `readerSession(_:didFailToReadNDEF:)`: a tag gave no message (read-only sessions).
    case didFailToReadNDEF(NFCReaderError)
    /// `readerSession(_:didInvalidateWithError:)`: the session's last event.
    case didInvalidate(NFCReaderError)
  }

  /// Creates an event.
  public init(time: Duration, session: UInt64, kind: Kind) {
    self.time = time
    self.session = session
    self.kind = kind
  }

  /// The event's name in logs and JSON: `didQueue`, `didBecomeActive`, `didDetectNDEFs`,
  /// `didDetectTags`, `didFailToReadNDEF` or `didInvalidateWithError`.
  public var name: String {
    switch kind {
    case .didQueue: "didQueue"
    case .didBecomeActive: "didBecomeActive"
    case .didDetectNDEFs: "didDetectNDEFs"
    case .didDetectTags: "didDetectTags"
    case .didFailToReadNDEF: "didFailToReadNDEF"
    case .didInvalidate: "didInvalidateWithError"
    }
  }

  /// Whether it is the session's last event (`didInvalidate`).
  var isLast: Bool { kind.isLast }

  /// The error of `didFailToReadNDEF` and `didInvalidate`.
  public var error: NFCReaderError? {
    switch kind {
    case .didFailToReadNDEF(let error), .didInvalidate(let error): error
    case .didQueue, .didBecomeActive, .didDetectNDEFs, .didDetectTags: nil
    }
  }
}

extension NFCReaderEvent.Kind {
  /// Whether it is a session's last event (`didInvalidate`).
  var isLast: Bool {
    if case .didInvalidate = self { return true }
    return false
  }
}
