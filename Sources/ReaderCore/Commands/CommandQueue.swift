/// The terminal's command line-up: one command runs at a time, the rest wait in FIFO order.
///
/// No command ever fails because another is running. A held queue (during automatic
/// reconnection) starts nothing until released. A waiting command can be cancelled; the running one
/// is cancelled by its own driver.
package struct CommandQueue<ID: Hashable & Sendable> {
  package enum Start: Equatable {
    /// Start this command now.
    case start(ID)
    /// Nothing to start.
    case none
  }

  package enum Removal: Equatable {
    /// The command was waiting and is now removed; complete it with `canceled`.
    case removedWaiting
    /// The command is the running one; its driver must stop it.
    case running
    /// The command is neither waiting nor running (it finished).
    case unknown
  }

  /// Whether a command runs.
  private enum State: Equatable {
    /// Nothing runs.
    case idle
    /// `ID` runs.
    case running(ID)
  }

  private var state = State.idle
  private var waiting: [ID] = []
  private var held = false

  package init() {}

  package var running: ID? {
    if case .running(let id) = state { return id }
    return nil
  }

  package var waitingCount: Int { waiting.count }

  /// The waiting commands, first in line first.
  package var waitingIDs: [ID] { waiting }

  /// Adds a command at the back of the line.
  package mutating func submit(_ id: ID) -> Start {
    waiting.append(id)
    return next()
  }

  /// Puts a command at the front of the line, ahead of those waiting (used by connect, which ends a
  /// running discovery and must not wait behind discoveries queued after it).
  package mutating func submitFirst(_ id: ID) -> Start {
    waiting.insert(id, at: 0)
    return next()
  }

  /// Marks the running command done and starts the next.
  package mutating func finish(_ id: ID) -> Start {
    guard case .running(let current) = state, current == id else { return .none }
    state = .idle
    return next()
  }

  package mutating func remove(_ id: ID) -> Removal {
    if case .running(let current) = state, current == id { return .running }
    guard let index = waiting.firstIndex(of: id) else { return .unknown }
    waiting.remove(at: index)
    return .removedWaiting
  }

  /// Stops starting commands (the running one, if any, goes on).
  package mutating func hold() { held = true }

  /// Resumes starting commands.
  package mutating func release() -> Start {
    held = false
    return next()
  }

  private mutating func next() -> Start {
    guard case .idle = state, !held, !waiting.isEmpty else { return .none }
    let id = waiting.removeFirst()
    state = .running(id)
    return .start(id)
  }
}
