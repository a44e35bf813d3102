
/// A `ReaderStore` that keeps the record in memory, for the simulator and for tests.
///
/// It has the semantics of the real stores — a failed save keeps the old record, a failed load
/// changes nothing — and can be told to fail its next load, save or clear, so fault paths such as
/// "the store is corrupt at launch" can be exercised without touching a file system:
///
/// ```swift
/// let store = InMemoryReaderStore(SavedReader(serialNumber: "CHB20-0001", locationId: "tml_1"))
/// store.failNextLoad(with: ReaderError(.storeCorrupt, "injected"))
/// try store.loadLastReader()  // throws the injected error
/// try store.loadLastReader()  // returns the record again
/// ```
///
/// All methods are safe to call from any thread; the state sits behind one `Locked`.
public final class InMemoryReaderStore: ReaderStore {
  private struct State {
    var reader: SavedReader?
    var loadFailure: ReaderError?
    var saveFailure: ReaderError?
    var clearFailure: ReaderError?
  }

  private let state: Locked<State>

  /// Creates a store holding `reader` (`nil`: nothing saved yet).
  public init(_ reader: SavedReader? = nil) {
    state = Locked(State(reader: reader))
  }

  /// The record currently held, read without consuming any injected failure.
  public var savedReader: SavedReader? {
    state.withLock { $0.reader }
  }

  /// Makes the next `loadLastReader()` throw `error` instead of returning the record; later loads
  /// succeed again. Calling it again before that load replaces the pending error.
  public func failNextLoad(
    with error: ReaderError = ReaderError(.storeUnavailable, "injected load failure")
  ) {
    state.withLock { $0.loadFailure = error }
  }

  /// Makes the next `saveLastReader(_:)` throw `error` and keep the old record; later saves succeed
  /// again. Calling it again before that save replaces the pending error.
  public func failNextSave(
    with error: ReaderError = ReaderError(.storeUnavailable, "injected save failure")
  ) {
    state.withLock { $0.saveFailure = error }
  }

  /// Makes the next `clearLastReader()` throw `error` and keep the record; later clears succeed
  /// again. Calling it again before that clear replaces the pending error.
  public func failNextClear(
    with error: ReaderError = ReaderError(.storeUnavailable, "injected clear failure")
  ) {
    state.withLock { $0.clearFailure = error }
  }

  /// The saved reader, or `nil` when nothing was saved or it was cleared.
  /// - Throws: the error given to `failNextLoad(with:)`, once.
  public func loadLastReader() throws(ReaderError) -> SavedReader? {
    try consumingFailure(\.loadFailure) { $0.reader }
  }

  /// Replaces the saved reader.
  /// - Throws: the error given to `failNextSave(with:)`, once; the old record is kept.
  public func saveLastReader(_ reader: SavedReader) throws(ReaderError) {
    try consumingFailure(\.saveFailure) { $0.reader = reader }
  }

  /// Forgets the saved reader; succeeds when there is none.
  /// - Throws: the error given to `failNextClear(with:)`, once; the record is kept.
  public func clearLastReader() throws(ReaderError) {
    try consumingFailure(\.clearFailure) { $0.reader = nil }
  }

  /// Throws (and clears) the injected failure at `failure`; otherwise runs `operation` on the state.
  private func consumingFailure<T: Sendable>(
    _ failure: WritableKeyPath<State, ReaderError?>, _ operation: (inout State) -> T
  ) throws(ReaderError) -> T {
    let result: Result<T, ReaderError> = state.withLock { state in
      if let error = state[keyPath: failure] {
        state[keyPath: failure] = nil
        return .failure(error)
      }
      return .success(operation(&state))
    }
    return try result.get()
  }
}
