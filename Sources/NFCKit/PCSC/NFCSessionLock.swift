package import ReaderCore

/// The one reader session system-wide, across processes: a line that processes join when one of their
/// sessions wants the radio, and leave when it ends. PC/SC has no lock for "waiting for a tag" (a card
/// can be held, a reader cannot), so the PC/SC radio takes its turn here before it polls.
///
/// Calls may block on the file system for a moment; the radio makes them off its scheduler.
package protocol NFCSessionLock: AnyObject, Sendable {
  /// Joins the line if not in it yet, and says whether it is this holder's turn.
  func tryAcquire() -> NFCSessionLockAttempt
  /// Leaves the line (the turn included); nothing when not in it.
  func release()
}

/// The answer of `NFCSessionLock.tryAcquire()`.
package enum NFCSessionLockAttempt: Sendable, Hashable {
  /// It is this holder's turn: no session of another process runs or waits before it.
  case acquired
  /// Another process's session runs or waits first; `holder` names the first (its process id).
  case heldElsewhere(holder: String)
  /// The line could not be joined (the lock directory cannot be created or written).
  case failed(ErrorCause, path: String)
}
