internal import ReaderCore

/// The observers of a stream of NFC reader events: those of the whole system (`NFCReaderSystem`'s
/// `addEventObserver(_:)`) or of one session (its `events()`). Added and removed from any thread,
/// called in the order they were added, synchronously, outside the lock (an observer may add or
/// remove observers). It can be closed after a last event: it then keeps no observer and refuses new
/// ones.
///
/// `ObserverRegistry`'s rules for NFCKit's one event type: code written for that type alone, so that
/// publishing an event (several times per session) looks up no generic type at run time, as the
/// registry's generic code, called from another module, does at every call.
final class NFCEventObservers: Sendable {
  typealias Observer = @Sendable (NFCReaderEvent) -> Void

  private struct State {
    var next: UInt64 = 0
    /// In the order they were added (tokens only grow, so appending keeps the order).
    var observers: [(token: UInt64, observer: Observer)] = []
    var closed = false
  }

  private let state = Locked(State())

  /// Adds `observer`; returns its token for `remove(_:)`, or nil when closed.
  func add(_ observer: @escaping Observer) -> UInt64? {
    state.withLock { state in
      guard !state.closed else { return nil }
      state.next += 1
      state.observers.append((state.next, observer))
      return state.next
    }
  }

  /// Stops calling the observer of `token`; nothing when it is gone already.
  func remove(_ token: UInt64) {
    state.withLock { state in
      guard let index = state.observers.firstIndex(where: { $0.token == token }) else { return }
      state.observers.remove(at: index)
    }
  }

  /// Calls every observer with `event`, in the order they were added (one copy-on-write snapshot of
  /// the list, no copy). `last`: the stream ends with it, and no observer is kept or taken any more.
  func notify(_ event: NFCReaderEvent, last: Bool = false) {
    let targets = state.withLock { state in
      let targets = state.observers
      if last {
        state.closed = true
        state.observers = []
      }
      return targets
    }
    for target in targets { target.observer(event) }
  }
}
