import Dispatch
import Foundation
import ReaderCore
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One bounded HTTP GET: the body of a 2xx answer, or a typed error, within fixed time and memory.
///
/// The body is read as it arrives and the transfer is cancelled as soon as it passes `limit` (or at
/// once when the answer announces a larger `Content-Length`), so an oversized answer is never
/// buffered. A server that goes quiet for `stallTimeout` ends the transfer, and so does one that has
/// not finished after `totalTimeout`.
final class HTTPFetch: NSObject, URLSessionDataDelegate, Sendable {
  private enum Outcome: Sendable {
    case body(BoundedBody)
    case status(Int)
    case failed(URLError)
  }

  private struct State: Sendable {
    var received = Data()
    /// Set once; what the transfer produced.
    var outcome: Outcome?
  }

  private let url: URL
  private let limit: Int
  private let state = Mutex(State())
  private let finished = DispatchSemaphore(value: 0)

  private init(url: URL, limit: Int) {
    self.url = url
    self.limit = limit
  }

  /// Fetches `url` and returns its body, or `.exceeded` when it has more than `limit` bytes.
  /// - Throws: `updateCatalogUnavailable` for a refused or failed connection or a status outside 2xx
  ///   (`context["status"]`); `updateCatalogTimedOut` for a server that stalls or is too slow. Every
  ///   error has `context["url"]` and `context["reason"]`.
  static func get(
    _ url: URL, limit: Int, stallTimeout: Duration, totalTimeout: Duration
  ) throws(ReaderError) -> BoundedBody {
    let fetch = HTTPFetch(url: url, limit: limit)
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = stallTimeout.timeInterval
    configuration.timeoutIntervalForResource = totalTimeout.timeInterval
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.urlCache = nil
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    let session = URLSession(configuration: configuration, delegate: fetch, delegateQueue: queue)
    defer { session.invalidateAndCancel() }
    var request = URLRequest(url: url)
    request.timeoutInterval = stallTimeout.timeInterval
    let task = session.dataTask(with: request)
    task.resume()

    // URLSession enforces both timeouts; this wait is the backstop should it fail to.
    if fetch.finished.wait(timeout: .now() + (totalTimeout + stallTimeout).timeInterval) == .timedOut {
      task.cancel()
      _ = fetch.finished.wait(timeout: .now() + 2)
      fetch.settle(.failed(URLError(.timedOut)))
    }
    return try fetch.result(stallTimeout: stallTimeout)
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

  private func result(stallTimeout: Duration) throws(ReaderError) -> BoundedBody {
    let outcome = state.withLock { $0.outcome } ?? .failed(URLError(.unknown))
    let address = url.absoluteString
    switch outcome {
    case .body(let body):
      return body
    case .status(let status):
      throw ReaderError(
        .updateCatalogUnavailable, "\(address) answered with HTTP status \(status)",
        context: ["url": address, "status": "\(status)", "reason": "HTTP status \(status)"])
    case .failed(let error) where error.code == .timedOut:
      let seconds = stallTimeout.timeInterval
      throw ReaderError(
        .updateCatalogTimedOut, "\(address) did not answer in time",
        context: ["url": address, "timeout": "\(seconds)", "reason": "timed out"])
    case .failed(let error):
      let reason = Self.reason(error)
      throw ReaderError(
        .updateCatalogUnavailable, "cannot fetch \(address): \(reason)",
        context: ["url": address, "reason": reason, "code": "\(error.code.rawValue)"])
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
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    if !(200..<300).contains(status) {
      settle(.status(status))
      completionHandler(.cancel)
    } else if response.expectedContentLength > Int64(limit) {
      settle(.body(.exceeded(limit: limit)))
      completionHandler(.cancel)
    } else {
      completionHandler(.allow)
    }
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let over = state.withLock { state -> Bool in
      guard state.outcome == nil else { return false }
      guard state.received.count + data.count <= limit else { return true }
      state.received.append(data)
      return false
    }
    if over, settle(.body(.exceeded(limit: limit))) { dataTask.cancel() }
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
