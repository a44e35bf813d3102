/// The observers of one stream of events: added and removed from any thread, called in the order
/// they were added, synchronously, outside the lock (an observer may add or remove observers).
///
/// The one registry behind `Terminal.addEventObserver(_:)`, `NFCReaderSystem.addEventObserver(_:)`
/// and a session's `events()`. A registry can be closed after a last event: it then keeps no
/// observer and refuses new ones. Notifying costs one copy-on-write snapshot of the list (no copy, no
/// sort), whatever the number of observers.
///
/// `public` with `package` members, as `Locked` is, so that `notify` is inlined and specialized for
/// the event type in the other modules of the package (a `package` type's `@inlinable` members are not).
public final class ObserverRegistry<Event: Sendable>: Sendable {
  package typealias Observer = @Sendable (Event) -> Void

  // Inlinable, with what it reads, so a caller in another module gets `notify` specialized for its
  // event type instead of the generic code, which passes every event through its metadata.
  @usableFromInline struct State {
    @usableFromInline var next: UInt64 = 0
    /// In the order they were added (tokens only grow, so appending keeps the order).
    @usableFromInline var observers: [(token: UInt64, observer: @Sendable (Event) -> Void)] = []
    @usableFromInline var closed = false

    @usableFromInline init() {}
  }

  @usableFromInline let state = Locked(State())

  package init() {}

  /// Adds `observer`; returns its token for `remove(_:)`, or nil when the registry is closed.
  package func add(_ observer: @escaping Observer) -> UInt64? {
    state.withLock { state in
      guard !state.closed else { return nil }
      state.next += 1
      state.observers.append((state.next, observer))
      return state.next
    }
  }

  /// Stops calling the observer of `token`; nothing when it is gone already.
  package func remove(_ token: UInt64) {
    state.withLock { state in
      guard let index = state.observers.firstIndex(where: { $0.token == token }) else { return }
      state.observers.remove(at: index)
    }
  }

  /// Calls every observer with `event`, in the order they were added. `last`: the stream ends with
  /// it, and the registry closes.
  @inlinable
  package func notify(_ event: Event, last: Bool = false) {
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
