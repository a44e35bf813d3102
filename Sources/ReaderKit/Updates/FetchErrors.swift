import Foundation
import ReaderCore

/// The errors of one fetch of `url`, worded alike whichever transport fetched it. Every error has
/// `context["url"]` and `context["reason"]`; durations in the context are plain numbers of seconds.
package struct FetchErrors: Sendable {
  /// What was fetched.
  package let url: URL

  /// The errors of a fetch of `url`.
  package init(url: URL) {
    self.url = url
  }

  /// `updateCatalogUnavailable`: the fetch could not be made or went wrong on the way.
  func unavailable(_ reason: String, errno code: Int32? = nil) -> ReaderError {
    var context = ["url": url.absoluteString, "reason": reason]
    if let code { context["errno"] = "\(code)" }
    return ReaderError(
      .updateCatalogUnavailable, "cannot fetch \(url.absoluteString): \(reason)", context: context,
      cause: code.map(ErrorCause.errno))
  }

  /// `updateCatalogUnavailable`: the server answered with `status`, outside 2xx (`context["status"]`,
  /// an `.httpStatus` cause).
  func status(_ status: Int) -> ReaderError {
    ReaderError(
      .updateCatalogUnavailable, "\(url.absoluteString) answered with HTTP status \(status)",
      context: ["url": url.absoluteString, "status": "\(status)", "reason": "HTTP status \(status)"],
      cause: .httpStatus(status))
  }

  /// `updateCatalogUnavailable`: the server's certificate did not verify (`reason` is OpenSSL's, such as
  /// "certificate has expired"): `context["verification"]`, an `.other("certificate verify failed: …")`
  /// cause, and OpenSSL's `X509_V_ERR` number in `context["verifyCode"]`.
  func untrusted(_ reason: String, code: Int) -> ReaderError {
    ReaderError(
      .updateCatalogUnavailable,
      "cannot fetch \(url.absoluteString): the server's certificate is not trusted: \(reason)",
      context: [
        "url": url.absoluteString, "reason": "certificate verify failed: \(reason)", "verification": reason,
        "verifyCode": "\(code)",
      ],
      cause: .other("certificate verify failed: \(reason)"))
  }

  /// `updateCatalogTimedOut`: `timeout` ran out (`context["timeout"]`, in seconds).
  func timedOut(_ timeout: Duration, _ reason: String) -> ReaderError {
    ReaderError(
      .updateCatalogTimedOut, "\(url.absoluteString) did not answer in time: \(reason)",
      context: ["url": url.absoluteString, "timeout": timeout.contextSeconds, "reason": reason])
  }

  /// `updateCatalogInvalid`: the server's answer breaks the HTTP syntax (`context["line"]`).
  func malformed(_ error: HTTPMalformedResponse) -> ReaderError {
    ReaderError(
      .updateCatalogInvalid,
      "\(url.absoluteString) sent a malformed response: \(error.reason) (line \"\(error.line)\")",
      context: ["url": url.absoluteString, "reason": "malformed response: \(error.reason)", "line": error.line])
  }

  /// `canceled`: the fetch's `CatalogCancellation` was cancelled.
  func canceled() -> ReaderError {
    ReaderError(
      .canceled, "fetching \(url.absoluteString) was canceled",
      context: ["url": url.absoluteString, "operation": "fetch", "reason": "canceled"])
  }
}
