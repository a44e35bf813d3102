/// Reconnect at launch: look the saved reader up, listen for it within a timeout, connect to it.
///
/// Pure: the terminal machine loads the store, runs the discovery and the connect on its behalf and
/// feeds their results back. The timeout bounds the search only; once the reader is found, the
/// connect has its own timeout.
package struct LaunchReconnectStateMachine {
  package enum Action: Equatable, Sendable {
    /// Load the saved reader; answered by `savedReaderLoaded`.
    case loadSavedReader
    /// Publish a launch event (`didStartLaunchReconnect`, `didFindNoSavedReader`, `didFindSavedReader`).
    case report(TerminalEvent.Kind)
    /// Scan for readers (simulated ones when the saved reader was simulated).
    case startDiscovery(simulated: Bool)
    /// End the search's discovery with `error`; answered by `discoveryEnded`.
    case stopDiscovery(ReaderError)
    case armTimeout(Duration)
    case disarmTimeout
    /// End the search and connect to the reader found; answered by `connectFinished`.
    case connect(Reader, ConnectionSettings)
    /// The launch is over: the reader, `nil` when nothing was saved, or why it failed.
    case finish(Result<Reader?, ReaderError>)
  }

  /// Where the launch stands.
  private enum State: Equatable {
    /// Not started.
    case idle
    /// Waiting for the store.
    case loading
    /// Listening for the saved reader.
    case searching(SavedReader, ConnectionSettings)
    /// Connecting to the reader found.
    case connecting
    /// Over; late results are ignored.
    case finished
  }

  private var state = State.idle
  private let timeout: Duration
  private let autoReconnect: Bool

  /// A launch that searches for at most `timeout` and connects with automatic reconnection on or off.
  package init(timeout: Duration, autoReconnect: Bool) {
    self.timeout = timeout
    self.autoReconnect = autoReconnect
  }

  /// Whether the launch is searching (its discovery runs).
  package var isSearching: Bool {
    if case .searching = state { return true }
    return false
  }

  package mutating func start() -> [Action] {
    guard state == .idle else { return [] }
    state = .loading
    return [.loadSavedReader]
  }

  /// The store answered. `connectRefusal` is the connection machine's objection to a new connect
  /// (a reader is connected), checked once the saved reader is known.
  package mutating func savedReaderLoaded(_ result: Result<SavedReader?, ReaderError>, connectRefusal: ReaderError?)
    -> [Action]
  {
    guard state == .loading else { return [] }
    let saved: SavedReader
    switch result {
    case .failure(let error):
      return finish(.failure(error))
    case .success(nil):
      return [.report(.didFindNoSavedReader)] + finish(.success(nil))
    case .success(let found?):
      saved = found
    }
    let settings: ConnectionSettings
    do {
      settings = try ConnectionSettings(locationId: saved.locationId, autoReconnect: autoReconnect)
    } catch {
      return finish(.failure(error))
    }
    let started = Action.report(.didStartLaunchReconnect(serialNumber: saved.serialNumber))
    if let connectRefusal { return [started] + finish(.failure(connectRefusal)) }
    state = .searching(saved, settings)
    return [started, .armTimeout(timeout), .startDiscovery(simulated: saved.simulated)]
  }

  /// The search's discovery reported readers; the saved one, if among them, is connected.
  package mutating func readersReported(_ readers: [Reader]) -> [Action] {
    guard case .searching(let saved, let settings) = state,
      let reader = readers.first(where: { $0.serialNumber == saved.serialNumber })
    else { return [] }
    state = .connecting
    return [.report(.didFindSavedReader(reader)), .disarmTimeout, .connect(reader, settings)]
  }

  /// The search's time is up. `heard` is what its discovery heard up to this moment, reported just now:
  /// a reader heard before the timeout fired counts even though no tick reported it yet (on a busy
  /// host the timeout's wake-up can run before the work that would have reported it). The saved
  /// reader among them is connected; otherwise the search ends with `readerNotFound`.
  package mutating func timedOut(heard: [Reader]) -> [Action] {
    guard case .searching(let saved, _) = state else { return [] }
    if heard.contains(where: { $0.serialNumber == saved.serialNumber }) { return readersReported(heard) }
    return [
      .stopDiscovery(
        ReaderError(
          .readerNotFound, "the saved reader was not found before the timeout",
          context: ["serialNumber": saved.serialNumber, "timeout": timeout.contextSeconds]))
    ]
  }

  /// The app cancelled the launch. While it searches, the search ends first (`discoveryEnded`
  /// follows); while it loads, it ends at once. A connect under way is cancelled by its own machine.
  package mutating func cancel() -> [Action] {
    switch state {
    case .loading: return finish(.failure(.canceled("reconnectToSavedReader")))
    case .searching: return [.stopDiscovery(.canceled("reconnectToSavedReader"))]
    case .idle, .connecting, .finished: return []
    }
  }

  /// The search's discovery ended: a failure (cancel, timeout, radio off) ends the launch; success
  /// means it ended because the reader was found.
  package mutating func discoveryEnded(_ error: ReaderError?) -> [Action] {
    guard case .searching = state, let error else { return [] }
    return [.disarmTimeout] + finish(.failure(error))
  }

  package mutating func connectFinished(_ result: Result<Reader, ReaderError>) -> [Action] {
    guard state == .connecting else { return [] }
    return finish(result.map { $0 })
  }

  private mutating func finish(_ result: Result<Reader?, ReaderError>) -> [Action] {
    state = .finished
    return [.finish(result)]
  }
}
