import Foundation
import ReaderCore
import Testing
import TestSupport

@testable import ReaderKit

#if canImport(Glibc)
  import Glibc
#endif

/// Both ways the catalog fetches: plain HTTP and HTTPS.
private let transports = CatalogScheme.available

/// The HTTP catalog's fetches stop when asked — a `CatalogCancellation`, a cancelled task, a
/// `Cancelable` — and when their deadline passes, and a hostile answer is an error naming its line:
/// against `Server/catalog_server.py`, a server that never answers, trickles a byte at a time, or sends
/// malformed HTTP. Serialized: the tests count the threads catalog calls run on.
@Suite(.serialized, .timeLimit(.minutes(1))) struct HTTPFetchInterruptionTests {
  private static var installed: InstalledSoftware {
    get throws {
      InstalledSoftware(
        deviceType: .stripeM2, serialNumber: "STRM2-1", locationId: "tml_1", version: try SoftwareVersion("1"))
    }
  }

  private func catalog(
    _ server: CatalogSite, _ path: String, stallTimeout: Duration = .seconds(20),
    totalTimeout: Duration? = .seconds(30)
  ) -> HTTPUpdateCatalog {
    HTTPUpdateCatalog(
      manifestURL: server.url(path), stallTimeout: stallTimeout, totalTimeout: totalTimeout,
      trustedCertificates: server.trustedCertificates)
  }

  /// How many stall and trickle connections under `server` the server still holds open.
  private static func openConnections(_ server: CatalogSite) throws -> Int {
    let body = try SocketHTTPFetch.get(
      server.plainURL("open"), limit: 100, stallTimeout: .seconds(5), totalTimeout: .seconds(5),
      cancellation: CatalogCancellation())
    guard case .complete(let data) = body,
      let count = Int(String(decoding: data, as: UTF8.self).dropFirst(5).dropLast())
    else { throw CatalogServer.Failure(description: "the server's open count is unreadable: \(body)") }
    return count
  }

  /// Waits, polling, until `condition` holds or `timeout` has passed; returns whether it holds.
  private func eventually(within timeout: Duration = .seconds(5), _ condition: () throws -> Bool) rethrows -> Bool {
    let end = ContinuousClock.now + timeout
    while ContinuousClock.now < end {
      if try condition() { return true }
      usleep(10_000)
    }
    return try condition()
  }

  /// The threads of this process that run catalog calls (`rk-fetch`).
  private static func fetchThreads() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter {
      (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?.hasPrefix(catalogThreadName)
        == true
    }.count
  }

  // MARK: Cancellation

  @Test(arguments: transports)
  func aCancellationStopsABlockedFetchAtOnceAndClosesItsSocket(scheme: CatalogScheme) throws {
    try withCatalogServer(scheme) { server throws in
      let stop = CatalogCancellation()
      let outcome = Locked<Result<UpdateAvailability, ReaderError>?>(nil)
      let catalog = catalog(server, "stall")
      let installed = try Self.installed
      let thread = Thread {
        let result = Result { () throws(ReaderError) in
          try catalog.availableUpdate(for: installed, at: Date(), cancellation: stop)
        }
        outcome.withLock { $0 = result }
      }
      thread.start()
      #expect(try eventually { try Self.openConnections(server) == 1 }, "the fetch never reached the server")
      let cancelledAt = ContinuousClock.now
      stop.cancel()
      #expect(eventually { outcome.withLock { $0 != nil } })
      let stoppedWithin = ContinuousClock.now - cancelledAt
      #expect(stoppedWithin < .milliseconds(500), "stopped after \(stoppedWithin)")
      let result = try #require(outcome.withLock { $0 })
      #expect(result.failure?.code == .canceled, "\(result)")
      #expect(result.failure?.context["url"] == server.url("stall").absoluteString)
      #expect(
        try eventually(within: .milliseconds(500)) { try Self.openConnections(server) == 0 }, "the socket is open")
    }
  }

  @Test func aFetchGivenAnAlreadyCancelledCancellationDoesNotStart() throws {
    try withCatalogServer { server throws in
      let stop = CatalogCancellation()
      stop.cancel()
      #expect(throws: ReaderError.self) {
        try catalog(server, "stall").availableUpdate(for: Self.installed, at: Date(), cancellation: stop)
      }
      #expect(try Self.openConnections(server) == 0)
    }
  }

  @Test(arguments: transports)
  func cancellingTheTaskStopsTheAsyncFetchAndLeavesNoThreadOrSocket(scheme: CatalogScheme) async throws {
    let server = try CatalogSite.fresh(scheme)
    defer { try? FileManager.default.removeItem(at: server.root) }
    let threadsBefore = Self.fetchThreads()
    let catalog = catalog(server, "stall")
    let installed = try Self.installed
    let task = Task { () async throws(ReaderError) -> UpdateAvailability in
      try await catalog.availableUpdate(for: installed, at: Date())
    }
    let open = { @Sendable in (try? Self.openConnections(server)) ?? -1 }
    #expect(await TestSupport.eventually(within: .seconds(5)) { open() == 1 }, "the fetch never reached the server")
    #expect(Self.fetchThreads() > threadsBefore, "the fetch runs on a thread of its own")
    task.cancel()
    // Timed on the server's side, by a thread outside the task pool: when the awaiting task runs
    // again depends on how busy the pool is.
    #expect(
      await TestSupport.eventually(within: .milliseconds(500)) { open() == 0 }, "the socket is open 500 ms after cancel")
    let result = await task.result
    #expect((result.failure as? ReaderError)?.code == .canceled, "\(result)")
    #expect(
      await TestSupport.eventually(within: .seconds(1)) { Self.fetchThreads() <= threadsBefore },
      "the fetch's thread is still there")
  }

  @Test(arguments: transports)
  func theCancelableOfTheCompletionFormStopsTheDownloadAndAnswersOnceItHasStopped(
    scheme: CatalogScheme
  ) throws {
    try withCatalogServer(scheme) { server throws in
      let catalog = catalog(server, "manifest.json")
      let image = FirmwareImage(
        url: server.url("trickle/200"), size: 100_000, sha256: try #require(SHA256Checksum(bytes: Data(count: 32))))
      let events = Locked<[String]>([])
      let cancelable = catalog.firmwareImage(for: image) { result in
        events.withLock { $0.append("completion \(result.failure?.code.description ?? "bytes")") }
      }
      #expect(try eventually { try Self.openConnections(server) == 1 }, "the download never reached the server")
      let cancelledAt = ContinuousClock.now
      cancelable.cancel { error in events.withLock { $0.append("cancel \(error.map { "\($0)" } ?? "done")") } }
      #expect(eventually { events.withLock { $0.count == 2 } })
      #expect(ContinuousClock.now - cancelledAt < .milliseconds(500))
      #expect(events.withLock { $0 } == ["completion canceled", "cancel done"])
      #expect(
        try eventually(within: .milliseconds(500)) { try Self.openConnections(server) == 0 }, "the socket is open")
      let again = Locked<String?>(nil)
      cancelable.cancel { error in again.withLock { $0 = error.map { "\($0)" } ?? "done" } }
      #expect(again.withLock { $0 } == "done", "cancel is idempotent: it was cancelled")
    }
  }

  // MARK: Deadlines

  @Test(arguments: transports)
  func aServerTricklingFasterThanTheStallTimeoutIsStoppedByTheDeadline(scheme: CatalogScheme) throws {
    try withCatalogServer(scheme) { server throws in
      let started = ContinuousClock.now
      let catalog = catalog(server, "trickle/100", stallTimeout: .seconds(5), totalTimeout: .seconds(1))
      let error = #expect(throws: ReaderError.self) { try catalog.manifest() }
      #expect(error?.code == .updateCatalogTimedOut, "\(String(describing: error))")
      #expect(error?.context["timeout"] == "1")
      #expect(error?.context["reason"] == "not finished after 1 s")
      #expect(ContinuousClock.now - started < .seconds(4), "a hang guard, not a timing claim")
      #expect(try eventually { try Self.openConnections(server) == 0 })
    }
  }

  @Test func theDefaultDeadlineComesFromWhatTheFetchMayBring() {
    #expect(HTTPUpdateCatalog.defaultTotalTimeout(forLimit: 0) == .seconds(10))
    #expect(HTTPUpdateCatalog.defaultTotalTimeout(forLimit: 1) == .seconds(11))
    #expect(HTTPUpdateCatalog.defaultTotalTimeout(forLimit: 65_536) == .seconds(11))
    #expect(HTTPUpdateCatalog.defaultTotalTimeout(forLimit: UpdateManifest.maximumSize) == .seconds(26))
    #expect(HTTPUpdateCatalog.defaultTotalTimeout(forLimit: 256 * 1024 * 1024) == .seconds(4106))
    #expect(HTTPUpdateCatalog(manifestURL: URL(string: "http://127.0.0.1/m.json")!).totalTimeout == nil)
  }

  // MARK: Hostile answers

  @Test(arguments: [
    ("chunk-negative", "-1"), ("chunk-signed", "+2"), ("chunk-huge", "FFFFFFFFFFFFFFFFFFFF"),
    ("chunk-bad-trailer", "not a field"), ("junk-status", "SSH-2.0-OpenSSH_9.2"),
    ("signed-status", "HTTP/1.1 +200 OK"), ("length-negative", "Content-Length: -5"),
    ("length-disagree", "Content-Length: 2, 3"), ("no-colon", "this is not a field"),
  ])
  func aMalformedAnswerIsInvalidNamingItsLineNotACrash(name: String, line: String) throws {
    try withCatalogServer { server throws in
      let error = #expect(throws: ReaderError.self) { try catalog(server, "raw/\(name)").manifest() }
      #expect(error?.code == .updateCatalogInvalid, "\(String(describing: error))")
      #expect(error?.context["line"] == line, "\(String(describing: error))")
      #expect(error?.context["reason"]?.hasPrefix("malformed response: ") == true)
      #expect(error?.context["url"] == server.url("raw/\(name)").absoluteString)
    }
  }
}
