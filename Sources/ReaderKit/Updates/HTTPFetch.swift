// URLSession, for the platforms without the system libssl that `SocketHTTPFetch` uses.
#if !canImport(Glibc)
  import Dispatch
  import Foundation
  import ReaderCore

  #if canImport(FoundationNetworking)
    import FoundationNetworking
  #endif

  /// One bounded HTTP GET: the body of a 2xx answer, or a typed error, within fixed time and memory.
  ///
  /// The body is read as it arrives; the fetch ends as soon as the body passes `limit` (at once when the
  /// answer announces a larger `Content-Length`), keeping nothing of it, and a refused status ends it at
  /// the headers. A server that goes quiet for `stallTimeout` ends the fetch, and so does one that has
  /// not finished after `totalTimeout`; a `CatalogCancellation` ends it at once.
  ///
  /// The fetch returns then and cancels the transfer. Used where libssl is not part of the system (Apple
  /// platforms): on Linux, URLSession (swift-corelibs-foundation)
  /// reads ahead of its delegate without back-pressure and acts on a cancel only after the data already
  /// queued, so a server that streams without a `Content-Length` can make it hold far more than the bound
  /// for a while (nothing of it is kept here); `HTTPUpdateCatalog` therefore reads `http:` and `https:` on
  /// Linux with `SocketHTTPFetch`.
  final class HTTPFetch: NSObject, URLSessionDataDelegate, Sendable {
    private enum Outcome: Sendable {
      case body(BoundedBody)
      case status(Int)
      case failed(URLError)
      case canceled
    }

    private struct State: Sendable {
      var received = Data()
      /// Set once; what the transfer produced.
      var outcome: Outcome?
      /// When the server last sent anything (the request's start, before that).
      var lastActivity = DispatchTime.now()
    }

    private let url: URL
    private let limit: Int
    private let state = Locked(State())
    private let finished = DispatchSemaphore(value: 0)

    private init(url: URL, limit: Int) {
      self.url = url
      self.limit = limit
    }

    /// Fetches `url` and returns its body, or `.exceeded` when it has more than `limit` bytes.
    /// - Throws: `updateCatalogUnavailable` for a refused or failed connection or a status outside 2xx
    ///   (`context["status"]`); `updateCatalogTimedOut` when the server sends nothing for `stallTimeout`
    ///   or the transfer is not over after `totalTimeout` (`context["timeout"]`, in seconds); `canceled`
    ///   once `cancellation` is cancelled. Every error has `context["url"]` and `context["reason"]`.
    static func get(
      _ url: URL, limit: Int, stallTimeout: Duration, totalTimeout: Duration, cancellation: CatalogCancellation
    ) throws(ReaderError) -> BoundedBody {
      let errors = FetchErrors(url: url)
      guard !cancellation.isCancelled else { throw errors.canceled() }
      let fetch = HTTPFetch(url: url, limit: limit)
      let token = cancellation.onCancel { if fetch.settle(.canceled) { fetch.finished.signal() } }
      defer { cancellation.removeHandler(token) }
      // The timeouts are enforced here, to the millisecond; URLSession's own (whole seconds on Linux,
      // where a fraction is cut to zero) stand behind them a second later.
      let configuration = URLSessionConfiguration.ephemeral
      configuration.timeoutIntervalForRequest = (stallTimeout.timeInterval + 1).rounded(.up)
      configuration.timeoutIntervalForResource = (totalTimeout.timeInterval + 1).rounded(.up)
      configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
      configuration.urlCache = nil
      let queue = OperationQueue()
      queue.maxConcurrentOperationCount = 1
      let session = URLSession(configuration: configuration, delegate: fetch, delegateQueue: queue)
      defer { session.invalidateAndCancel() }
      var request = URLRequest(url: url)
      request.timeoutInterval = configuration.timeoutIntervalForRequest
      let task = session.dataTask(with: request)
      // Cancelled from this thread, not from a delegate callback: on Linux a cancel issued there waits
      // behind every chunk already queued for the delegate.
      defer { task.cancel() }
      let start = DispatchTime.now()
      fetch.state.withLock { $0.lastActivity = start }
      task.resume()

      let totalDeadline = start + totalTimeout.timeInterval
      var timeout: (duration: Duration, reason: String)?
      while true {
        let activity = fetch.state.withLock { $0.lastActivity }
        let stallDeadline = activity + stallTimeout.timeInterval
        if fetch.finished.wait(timeout: min(stallDeadline, totalDeadline)) == .success { break }
        let now = DispatchTime.now()
        if now >= totalDeadline {
          timeout = (totalTimeout, "not finished after \(totalTimeout.contextSeconds) s")
        } else if now >= stallDeadline, fetch.state.withLock({ $0.lastActivity == activity }) {
          timeout = (stallTimeout, "nothing received for \(stallTimeout.contextSeconds) s")
        } else {
          continue
        }
        fetch.settle(.failed(URLError(.timedOut)))
        task.cancel()
        // The cancellation ends the transfer at once; the bound only guards against a lost callback.
        _ = fetch.finished.wait(timeout: .now() + 2)
        break
      }
      return try fetch.result(timeout: timeout, stallTimeout: stallTimeout, errors: errors)
    }

    /// Records `outcome` unless one was recorded already; returns whether it was recorded.
    @discardableResult
    private func settle(_ outcome: Outcome) -> Bool {
      state.withLock { state in
        guard state.outcome == nil else { return false }
        state.outcome = outcome
        state.received = Data()
        return true
      }
    }

    /// What the transfer produced; `timeout` is the limit that ended it, if one did.
    private func result(timeout: (duration: Duration, reason: String)?, stallTimeout: Duration, errors: FetchErrors)
      throws(ReaderError) -> BoundedBody
    {
      let outcome = state.withLock { $0.outcome } ?? .failed(URLError(.unknown))
      switch outcome {
      case .body(let body):
        return body
      case .status(let status):
        throw errors.status(status)
      case .canceled:
        throw errors.canceled()
      case .failed(let error) where error.code == .timedOut:
        let (duration, reason) = timeout ?? (stallTimeout, "URLSession timed out")
        throw errors.timedOut(duration, reason)
      case .failed(let error):
        var failure = errors.unavailable(Self.reason(error))
        failure.context["code"] = "\(error.code.rawValue)"
        throw failure
      }
    }

    private static func reason(_ error: URLError) -> String {
      switch error.code {
      case .cannotConnectToHost: "connection refused"
      case .cannotFindHost, .dnsLookupFailed: "unknown host"
      case .networkConnectionLost: "the connection was lost"
      case .notConnectedToInternet: "no network"
      case .unsupportedURL: "unsupported URL"
      case .badServerResponse: "bad server response"
      default: error.localizedDescription
      }
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
      _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
      completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
      state.withLock { $0.lastActivity = .now() }
      let status = (response as? HTTPURLResponse)?.statusCode ?? 0
      let refusal: Outcome? =
        if !(200..<300).contains(status) {
          .status(status)
        } else if response.expectedContentLength > Int64(limit) {
          .body(.exceeded(limit: limit))
        } else {
          nil
        }
      guard let refusal else { return completionHandler(.allow) }
      completionHandler(.cancel)
      if settle(refusal) { finished.signal() }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
      let over = state.withLock { state -> Bool in
        state.lastActivity = .now()
        guard state.outcome == nil else { return false }
        guard state.received.count + data.count <= limit else { return true }
        state.received.append(data)
        return false
      }
      if over, settle(.body(.exceeded(limit: limit))) { finished.signal() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
      state.withLock { state in
        guard state.outcome == nil else { return }
        if let error {
          state.outcome = .failed(error as? URLError ?? URLError(.unknown))
        } else {
          state.outcome = .body(.complete(state.received))
        }
        state.received = Data()
      }
      finished.signal()
    }
  }

  extension Duration {
    /// The duration in seconds, as Foundation's APIs take it.
    fileprivate var timeInterval: TimeInterval {
      let (seconds, attoseconds) = components
      return Double(seconds) + Double(attoseconds) / 1e18
    }
  }
#endif
