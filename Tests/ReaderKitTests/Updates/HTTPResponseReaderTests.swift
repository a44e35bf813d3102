import Foundation
import ReaderCore
import Testing

@testable import ReaderKit

/// The HTTP/1.1 response reader without a socket: answers held in memory and cut into reads of every
/// size, so each bound and each hostile answer is pinned exactly, whatever the network does.
struct HTTPResponseReaderTests {
  /// What reading an answer gives.
  private typealias Answer = Result<BoundedBody, ReaderError>

  private static let url = URL(fileURLWithPath: "/catalog/manifest.json")
  private static let errors = FetchErrors(url: url)

  /// The answer `text` read with `limit`, handed over in reads of `sizes` (the whole of it at once
  /// without sizes).
  private func read(_ text: String, limit: Int = 1 << 20, cutEvery sizes: [Int] = []) -> Answer {
    read(Array(text.utf8), limit: limit, cutEvery: sizes)
  }

  private func read(_ bytes: [UInt8], limit: Int = 1 << 20, cutEvery sizes: [Int] = []) -> Answer {
    var reader = HTTPResponseReader(source: HTTPByteSlices(bytes, cutEvery: sizes), errors: Self.errors)
    return Result { () throws(ReaderError) in try reader.readResponse(limit: limit) }
  }

  /// The same answer whole and cut into reads of 1 to 17 bytes; returns it.
  private func readEveryWay(
    _ text: String, limit: Int = 1 << 20, sourceLocation: SourceLocation = #_sourceLocation
  ) -> Answer {
    let whole = read(text, limit: limit)
    for size in 1...17 {
      let cut = read(text, limit: limit, cutEvery: [size])
      #expect(cut == whole, "cut every \(size) bytes", sourceLocation: sourceLocation)
    }
    return whole
  }

  private func body(_ text: String) -> Answer { .success(.complete(Data(text.utf8))) }

  // MARK: Bodies

  @Test func aContentLengthBodyIsReadToItsLengthHoweverTheAnswerIsCut() {
    #expect(readEveryWay("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello, and more") == body("hello"))
  }

  @Test func aChunkedBodyIsJoinedAndItsExtensionsAndTrailersAreAccepted() {
    let answer =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;name=value\r\nWiki\r\n00005\r\npedia\r\n0\r\n"
      + "X-Checksum: abc\r\n\r\n"
    #expect(readEveryWay(answer) == body("Wikipedia"))
  }

  @Test func aBodyWithoutLengthRunsToTheEndOfTheStream() {
    #expect(readEveryWay("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nto the end") == body("to the end"))
  }

  @Test func interimAnswersAreSkippedUpToEight() {
    let interim = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
    #expect(readEveryWay(interim + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}") == body("{}"))
    let eight = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 8)
    #expect(readEveryWay(eight + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}") == body("{}"))
    let error = readEveryWay("HTTP/1.1 100 Continue\r\n\r\n" + eight + "HTTP/1.1 200 OK\r\n\r\n").failure
    #expect(error?.code == .updateCatalogInvalid)
    #expect(error?.context["reason"] == "malformed response: more than 8 interim answers")
  }

  @Test func noContentHasAnEmptyBodyWhateverItsLengthSays() {
    #expect(readEveryWay("HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n") == body(""))
  }

  @Test func aStatusOutside2xxIsUnavailableWithTheStatus() {
    let error = readEveryWay("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found").failure
    #expect(error?.code == .updateCatalogUnavailable)
    #expect(error?.context["status"] == "404")
    #expect(error?.cause == .httpStatus(404))
    #expect(error?.context["url"] == Self.url.absoluteString)
  }

  // MARK: The body limit

  @Test func aBodyOverTheLimitIsExceededInEveryFraming() {
    let exceeded = Answer.success(.exceeded(limit: 4))
    #expect(readEveryWay("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", limit: 4) == exceeded)
    #expect(readEveryWay("HTTP/1.1 200 OK\r\n\r\nhello", limit: 4) == exceeded)
    #expect(
      readEveryWay("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n", limit: 4)
        == exceeded)
    #expect(readEveryWay("HTTP/1.1 200 OK\r\n\r\nhell", limit: 4) == body("hell"))
  }

  @Test func anAnnouncedLengthOverTheLimitIsExceededWithoutWaitingForTheBody() {
    // The body never comes: the stream ends after the head.
    #expect(
      read("HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n", limit: 100) == .success(.exceeded(limit: 100)))
  }

  // MARK: Hostile answers

  @Test(arguments: [
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nx\r\n0\r\n\r\n", "-1"),
    (
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\nx\r\n0\r\n\r\n",
      "FFFFFFFFFFFFFFFFFFFF"
    ),
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n", "d"),
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nnot a field\r\n\r\n", "not a field"),
    ("SSH-2.0-OpenSSH_9.2\r\n\r\n", "SSH-2.0-OpenSSH_9.2"),
    ("HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n{}", "Content-Length: -5"),
  ])
  func aMalformedAnswerIsInvalidNamingItsLine(answer: String, line: String) {
    let error = readEveryWay(answer).failure
    #expect(error?.code == .updateCatalogInvalid, "\(String(describing: error))")
    #expect(error?.context["line"] == line)
    #expect(error?.context["url"] == Self.url.absoluteString)
  }

  @Test func aStreamThatEndsEarlyIsUnavailableOrMalformedSayingWhere() {
    #expect(readEveryWay("").failure?.context["reason"] == "the connection closed before an answer")
    let inHead = readEveryWay("HTTP/1.1 200 OK\r\nContent-Le").failure
    #expect(inHead?.code == .updateCatalogInvalid)
    #expect(inHead?.context["line"] == "HTTP/1.1 200 OK\\x0D\\x0AContent-Le")
    for cut in [
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n",
    ] {
      let error = readEveryWay(cut).failure
      #expect(error?.code == .updateCatalogUnavailable, "\(cut)")
      #expect(error?.context["reason"] == "the connection closed before the body was complete", "\(cut)")
    }
  }

  // MARK: Exact bounds

  /// A head of `size` bytes with the empty line that ends it.
  private func head(ofSize size: Int) -> String {
    let fixed = "HTTP/1.1 200 OK\r\nX-Padding: \r\nContent-Length: 2\r\n\r\n"
    return "HTTP/1.1 200 OK\r\nX-Padding: " + String(repeating: "p", count: size - fixed.utf8.count)
      + "\r\nContent-Length: 2\r\n\r\n"
  }

  @Test func aHeadOfTheMaximumSizeIsReadAndOneByteMoreIsRefusedHoweverItArrives() {
    let maximum = HTTPResponseReader.maximumHeaderSize
    for sizes in [[], [1], [4096], [65_535], [65_536], [65_537]] {
      #expect(read(head(ofSize: maximum) + "{}", cutEvery: sizes) == body("{}"), "reads of \(sizes)")
      let error = read(head(ofSize: maximum + 1) + "{}", cutEvery: sizes).failure
      #expect(error?.code == .updateCatalogInvalid, "reads of \(sizes)")
      #expect(error?.context["reason"] == "malformed response: the answer's head is larger than 65536 bytes")
    }
  }

  @Test func aChunkSizeLineOfTheMaximumLengthIsReadAndOneByteMoreIsRefusedHoweverItArrives() {
    let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    let longest = String(repeating: "0", count: HTTPResponseReader.maximumChunkLineSize - 1) + "2"
    for sizes in [[], [1], [1000], [1100]] {
      #expect(read(chunked + longest + "\r\n{}\r\n0\r\n\r\n", cutEvery: sizes) == body("{}"), "reads of \(sizes)")
      let error = read(chunked + "0" + longest + "\r\n{}\r\n0\r\n\r\n", cutEvery: sizes).failure
      #expect(
        error?.context["reason"] == "malformed response: a chunk-size line is longer than 1024 bytes",
        "reads of \(sizes)")
    }
  }

  @Test func aTrailerSectionOverTheHeaderLimitIsRefused() {
    let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"
    let field = "X-Trailer: " + String(repeating: "t", count: 1000) + "\r\n"
    #expect(read(chunked + String(repeating: field, count: 64) + "\r\n") == body("{}"))
    let error = read(chunked + String(repeating: field, count: 66) + "\r\n", cutEvery: [7]).failure
    #expect(error?.context["reason"] == "malformed response: the trailer section is larger than 65536 bytes")
  }

  // MARK: Memory and the source

  @Test func theReadBufferIsReusedAndDoesNotGrowWithTheBody() throws {
    let size = 4 << 20
    let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n".utf8) + [UInt8](repeating: 7, count: size)
    for sizes in [[HTTPResponseReader.readSize], [1000, 70_000]] {
      var reader = HTTPResponseReader(source: HTTPByteSlices(answer, cutEvery: sizes), errors: Self.errors)
      let body = try reader.readResponse(limit: size)
      #expect(body == .complete(Data(repeating: 7, count: size)))
      #expect(reader.bufferCapacity == HTTPResponseReader.readSize, "reads of \(sizes)")
    }
  }

  /// A source that hands out `bytes`, then fails as a socket whose deadline passed.
  private struct TimingOutSource: HTTPByteSource {
    var bytes: [UInt8]
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(ReaderError) -> Int {
      guard !bytes.isEmpty else { throw HTTPResponseReaderTests.errors.timedOut(.seconds(3), "late") }
      let count = min(buffer.count, bytes.count)
      buffer.copyBytes(from: bytes.prefix(count))
      bytes.removeFirst(count)
      return count
    }
  }

  @Test func theSourcesErrorsPassThroughUnchanged() {
    var reader = HTTPResponseReader(
      source: TimingOutSource(bytes: Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}".utf8)),
      errors: Self.errors)
    let error = #expect(throws: ReaderError.self) { try reader.readResponse(limit: 100) }
    #expect(error == Self.errors.timedOut(.seconds(3), "late"))
  }

  @Test func randomAnswersGiveTheSameResultHoweverTheyAreCut() {
    let seed = UInt64.random(in: 0...UInt64.max)
    print("HTTPResponseReaderTests seed \(seed)")
    var random = SeededRandom(seed: seed)
    let pieces = [
      "HTTP/1.1 200 OK\r\n", "HTTP/1.1 100 Continue\r\n\r\n", "Transfer-Encoding: chunked\r\n", "Content-Length: 3\r\n",
      "\r\n", "3\r\nabc\r\n", "0\r\n", "X: y\r\n", "abc", "\r", "\n", "ff\r\n", ";e\r\n",
    ].map { Array($0.utf8) }
    for _ in 0..<2_000 {
      var answer: [UInt8] = []
      for _ in 0..<Int(random.next() % 12) { answer += pieces[Int(random.next() % UInt64(pieces.count))] }
      let limit = Int(random.next() % 8)
      let whole = read(answer, limit: limit)
      let sizes = (0..<3).map { _ in 1 + Int(random.next() % 9) }
      #expect(read(answer, limit: limit, cutEvery: sizes) == whole, "seed \(seed)")
      if case .success(.complete(let body)) = whole { #expect(body.count <= limit, "seed \(seed)") }
    }
  }
}
