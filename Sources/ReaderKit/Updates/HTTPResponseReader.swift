import Foundation
import ReaderCore

/// The reading half of a bounded HTTP/1.1 GET: from the bytes an `HTTPByteSource` gives, the final
/// answer's head (interim 1xx answers skipped), its status, and the body — delimited by
/// `Content-Length`, by chunked transfer coding (chunk sizes, chunk ends and trailer fields checked) or
/// by the end of the stream — or a typed error. It does no I/O of its own: the socket is one source,
/// slices of bytes in memory another, so every hostile answer can be tested and fuzzed without a server.
///
/// Memory stays bounded whatever the server sends: a head or a trailer section of at most
/// `maximumHeaderSize` bytes, chunk-size lines of at most `maximumChunkLineSize`, at most `limit` body
/// bytes (reading stops at the first byte beyond them), and a read buffer of its own reused from read
/// to read. Every bound is exact, whatever sizes the source reads in: the same bytes give the same
/// answer however they are cut.
package struct HTTPResponseReader {
  /// The most header bytes accepted: the answer's head, with the empty line that ends it, and the
  /// trailer section of a chunked body.
  static let maximumHeaderSize = 64 * 1024
  /// The longest chunk-size line accepted, and the longest line where a chunk's end is expected.
  static let maximumChunkLineSize = 1024
  /// The most interim (1xx) answers skipped before the final one.
  static let maximumInterimAnswers = 8
  /// The most bytes asked of the source at once.
  static let readSize = 64 * 1024

  private var source: any HTTPByteSource
  private let errors: FetchErrors
  /// The read buffer: `storage[start..<end]` holds the bytes read and not consumed yet. It is reused
  /// from read to read and grows only for a head or a line longer than what it holds.
  private var storage: [UInt8] = []
  private var start = 0
  private var end = 0

  /// A reader of the answer `source` gives to a GET of `errors.url`.
  package init(source: any HTTPByteSource, errors: FetchErrors) {
    self.source = source
    self.errors = errors
  }

  /// The size of the read buffer, for the tests that pin its bound.
  var bufferCapacity: Int { storage.count }

  /// Reads the whole answer: the body of a 2xx answer, or `.exceeded` when it has more than `limit`
  /// bytes (at once, without reading on, when `Content-Length` says so).
  /// - Throws: `updateCatalogUnavailable` for a status outside 2xx (`context["status"]`, an `.httpStatus`
  ///   cause) or a stream that ends early; `updateCatalogInvalid` for an answer that breaks the syntax
  ///   or a bound (`context["line"]` shows the line); and whatever the source throws.
  package mutating func readResponse(limit: Int) throws(ReaderError) -> BoundedBody {
    let head = try readFinalHead()
    guard (200..<300).contains(head.status) else { throw errors.status(head.status) }
    let framing: HTTPResponseHead.Framing
    do throws(HTTPMalformedResponse) {
      framing = head.status == 204 ? .length(0) : try head.framing()
    } catch {
      throw errors.malformed(error)
    }
    switch framing {
    case .chunked: return try readChunkedBody(limit: limit)
    case .length(let length):
      guard length <= limit else { return .exceeded(limit: limit) }
      var body = Data()
      try readBody(length, into: &body)
      return .complete(body)
    case .untilClose: return try readToEnd(limit: limit)
    }
  }

  /// The head of the final answer, skipping interim (1xx) ones; 101 is final.
  mutating func readFinalHead() throws(ReaderError) -> HTTPResponseHead {
    for _ in 0...Self.maximumInterimAnswers {
      let head = try readHead()
      if !(100..<200).contains(head.status) || head.status == 101 { return head }
    }
    throw errors.malformed(
      HTTPMalformedResponse(
        "more than \(Self.maximumInterimAnswers) interim answers", line: Array("HTTP/1.1 1xx".utf8)))
  }

  // MARK: Heads and lines

  private mutating func readHead() throws(ReaderError) -> HTTPResponseHead {
    // How far past `start` the search has looked already.
    var searched = 0
    while true {
      if let found = find([13, 10, 13, 10], from: start + searched) {
        guard found + 4 - start <= Self.maximumHeaderSize else { throw headTooLarge() }
        let head = take(found - start)
        _ = take(4)
        do throws(HTTPMalformedResponse) {
          return try HTTPResponseHead.parse(head)
        } catch {
          throw errors.malformed(error)
        }
      }
      // A head that ends later is at least one byte longer than what is here.
      guard available < Self.maximumHeaderSize else { throw headTooLarge() }
      searched = max(0, available - 3)
      guard try fill() else {
        if available == 0 { throw errors.unavailable("the connection closed before an answer") }
        throw errors.malformed(
          HTTPMalformedResponse("the connection closed inside the answer's head", line: storage[start..<end]))
      }
    }
  }

  private func headTooLarge() -> ReaderError {
    errors.malformed(
      HTTPMalformedResponse(
        "the answer's head is larger than \(Self.maximumHeaderSize) bytes",
        line: storage[start..<end].prefix(HTTPMalformedResponse.maximumShownLength)))
  }

  /// One CRLF-terminated line of at most `maximum` bytes, without its CRLF.
  private mutating func readLine(maximum: Int, what: String) throws(ReaderError) -> [UInt8] {
    var searched = 0
    while true {
      if let found = find([13, 10], from: start + searched) {
        guard found - start <= maximum else { throw lineTooLong(maximum: maximum, what: what) }
        let line = Array(take(found - start))
        _ = take(2)
        return line
      }
      // A line that ends later is at least `available - 1` bytes long (a CR may be the last byte here).
      guard available - 1 <= maximum else { throw lineTooLong(maximum: maximum, what: what) }
      searched = max(0, available - 1)
      guard try fill() else { throw errors.unavailable("the connection closed before the body was complete") }
    }
  }

  private func lineTooLong(maximum: Int, what: String) -> ReaderError {
    errors.malformed(
      HTTPMalformedResponse(
        "\(what) is longer than \(maximum) bytes",
        line: storage[start..<end].prefix(HTTPMalformedResponse.maximumShownLength)))
  }

  // MARK: Bodies

  /// Appends the next `count` bytes of the stream to `body`, as they come.
  private mutating func readBody(_ count: Int, into body: inout Data) throws(ReaderError) {
    var remaining = count
    while remaining > 0 {
      if available == 0 {
        guard try fill() else { throw errors.unavailable("the connection closed before the body was complete") }
      }
      let part = min(available, remaining)
      take(part).withUnsafeBufferPointer { body.append($0) }
      remaining -= part
    }
  }

  private mutating func readToEnd(limit: Int) throws(ReaderError) -> BoundedBody {
    var body = Data()
    while true {
      guard available <= limit - body.count else { return .exceeded(limit: limit) }
      take(available).withUnsafeBufferPointer { body.append($0) }
      guard try fill() else { return .complete(body) }
    }
  }

  private mutating func readChunkedBody(limit: Int) throws(ReaderError) -> BoundedBody {
    var body = Data()
    while true {
      let line = try readLine(maximum: Self.maximumChunkLineSize, what: "a chunk-size line")
      let size: Int
      do throws(HTTPMalformedResponse) {
        size = try HTTPChunkSyntax.size(of: line)
      } catch {
        throw errors.malformed(error)
      }
      if size == 0 { break }
      guard size <= limit - body.count else { return .exceeded(limit: limit) }
      try readBody(size, into: &body)
      let end = try readLine(maximum: Self.maximumChunkLineSize, what: "a chunk's end")
      guard end.isEmpty else {
        throw errors.malformed(HTTPMalformedResponse("a chunk is longer than its size says", line: end))
      }
    }
    // The trailer section: header fields, then an empty line.
    var trailerBytes = 0
    while true {
      let line = try readLine(maximum: Self.maximumHeaderSize, what: "a trailer line")
      if line.isEmpty { return .complete(body) }
      trailerBytes += line.count + 2
      do throws(HTTPMalformedResponse) {
        guard trailerBytes <= Self.maximumHeaderSize else {
          throw HTTPMalformedResponse(
            "the trailer section is larger than \(Self.maximumHeaderSize) bytes", line: line)
        }
        try HTTPChunkSyntax.checkTrailer(line)
      } catch {
        throw errors.malformed(error)
      }
    }
  }

  // MARK: The buffer

  private var available: Int { end - start }

  /// The next `count` bytes, consumed; `count` is at most `available`. Use the slice before the next
  /// `fill()`, which writes to the buffer.
  private mutating func take(_ count: Int) -> ArraySlice<UInt8> {
    let count = min(max(0, count), available)
    defer { start += count }
    return storage[start..<start + count]
  }

  /// Reads more bytes from the source into the buffer; `false` at the end of the stream.
  private mutating func fill() throws(ReaderError) -> Bool {
    if start == end {
      start = 0
      end = 0
    }
    if storage.count - end < Self.readSize { makeRoom() }
    // The buffer is moved out while the source writes to it, so that no copy is made.
    var bytes = storage
    storage = []
    let offset = end
    let result = bytes.withUnsafeMutableBytes { buffer in
      let room = UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + Self.readSize])
      return Result { () throws(ReaderError) in try source.read(into: room) }
    }
    storage = bytes
    let count = try result.get()
    guard count > 0 else { return false }
    end += min(count, Self.readSize)
    return true
  }

  /// Makes room for a read after `end`: moves the unread bytes to the front when that frees at least as
  /// much as it moves, and otherwise grows the buffer (to twice its size at least), so that the bytes
  /// moved stay proportional to the bytes read.
  private mutating func makeRoom() {
    if start > 0, start >= available {
      storage.withUnsafeMutableBytes { buffer in
        guard let base = buffer.baseAddress else { return }
        base.copyMemory(from: base + start, byteCount: end - start)
      }
      end -= start
      start = 0
    }
    guard storage.count - end < Self.readSize else { return }
    var grown = [UInt8](repeating: 0, count: max(storage.count * 2, available + Self.readSize))
    grown.withUnsafeMutableBytes { buffer in
      storage.withUnsafeBytes { old in
        guard let to = buffer.baseAddress, let from = old.baseAddress else { return }
        to.copyMemory(from: from + start, byteCount: end - start)
      }
    }
    storage = grown
    end -= start
    start = 0
  }

  /// Where `pattern` starts among the unread bytes, searching from `from`.
  private func find(_ pattern: [UInt8], from: Int) -> Int? {
    var index = max(start, from)
    while index + pattern.count <= end {
      if storage[index] == pattern[0], storage[index..<index + pattern.count].elementsEqual(pattern) { return index }
      index += 1
    }
    return nil
  }
}
