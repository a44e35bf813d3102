import ReaderCore
import Testing

@testable import ReaderKit

/// The HTTP answer syntax, without a server: the head, the framing and the chunked body's lines.
struct HTTPResponseHeadTests {
  private func head(_ text: String) throws(HTTPMalformedResponse) -> HTTPResponseHead {
    try HTTPResponseHead.parse(Array(text.utf8))
  }

  @Test func parsesTheStatusAndTheFieldsNamesInLowerCase() throws {
    let parsed = try head("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-A:  1 \r\nx-a: 2")
    #expect(parsed.status == 200)
    #expect(parsed.value(of: "content-type") == "application/json")
    #expect(parsed.value(of: "x-a") == "1, 2")
    #expect(try head("HTTP/1.0 404").status == 404)
  }

  @Test(arguments: [
    "SSH-2.0-OpenSSH_9.2", "HTTP/1.1 +200 OK", "HTTP/1.1 -200 OK", "HTTP/1.1 20 OK", "HTTP/1.1 2000 OK",
    "HTTP/2 200 OK", "HTTP/1.1  200 OK", "HTTP/1.1 099 Low", "HTTP/1.1 600 High", "http/1.1 200 OK", "",
    "HTTP/1.1 200OK",
  ])
  func aStatusLineThatIsNotHTTP1AndThreeDigitsIsMalformed(line: String) {
    let error = #expect(throws: HTTPMalformedResponse.self) { try head(line + "\r\nContent-Length: 0") }
    if !line.isEmpty { #expect(error?.line == line) }
  }

  @Test(arguments: [
    "no colon here", "Bad Name: x", ": no name", " folded: x", "\tfolded: x", "X-Bell: a\u{7}b", "Ümlaut: x",
  ])
  func aFieldLineThatBreaksTheSyntaxIsMalformedWithTheLine(line: String) {
    let error = #expect(throws: HTTPMalformedResponse.self) { try head("HTTP/1.1 200 OK\r\n" + line) }
    #expect(error?.line == HTTPMalformedResponse.shown(Array(line.utf8)))
  }

  @Test func theFramingComesFromTransferEncodingFirstThenContentLength() throws {
    #expect(try head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5").framing() == .chunked)
    #expect(try head("HTTP/1.1 200 OK\r\nTransfer-Encoding: identity, Chunked").framing() == .chunked)
    #expect(try head("HTTP/1.1 200 OK\r\nContent-Length: 42").framing() == .length(42))
    #expect(try head("HTTP/1.1 200 OK\r\nContent-Length: 7\r\nContent-Length: 7").framing() == .length(7))
    #expect(try head("HTTP/1.1 200 OK\r\nContent-Length: 007").framing() == .length(7))
    #expect(try head("HTTP/1.1 200 OK").framing() == .untilClose)
  }

  @Test(arguments: [
    "Transfer-Encoding: gzip, chunked", "Transfer-Encoding: chunked, gzip", "Content-Length: -5",
    "Content-Length: +5", "Content-Length: 5 5", "Content-Length: 0x10", "Content-Length: ",
    "Content-Length: 99999999999999999999", "Content-Length: 2\r\nContent-Length: 3",
  ])
  func aFramingThisReaderCannotTrustIsMalformed(fields: String) throws {
    let parsed = try head("HTTP/1.1 200 OK\r\n" + fields)
    #expect(throws: HTTPMalformedResponse.self) { try parsed.framing() }
  }

  @Test func aChunkSizeIsHexDigitsWithOptionalExtensions() throws {
    #expect(try HTTPChunkSyntax.size(of: Array("1a".utf8)) == 26)
    #expect(try HTTPChunkSyntax.size(of: Array("1A;name=value".utf8)) == 26)
    #expect(try HTTPChunkSyntax.size(of: Array("0".utf8)) == 0)
    #expect(try HTTPChunkSyntax.size(of: Array("10 ;x".utf8)) == 16)
    #expect(try HTTPChunkSyntax.size(of: Array("0000000000000000000001".utf8)) == 1)
    #expect(try HTTPChunkSyntax.size(of: Array("FFFFFFFFFFFFFFF".utf8)) == 0xFFF_FFFF_FFFF_FFFF)
  }

  @Test(arguments: ["-1", "+1", " 1", "", ";x", "g", "1 2", "FFFFFFFFFFFFFFFF", "FFFFFFFFFFFFFFFFFFFF", "0x10"])
  func aChunkSizeWithASignASpaceOrTooManyDigitsIsMalformed(line: String) {
    let error = #expect(throws: HTTPMalformedResponse.self) { try HTTPChunkSyntax.size(of: Array(line.utf8)) }
    #expect(error?.line == line)
  }

  @Test func trailerLinesAreFields() throws {
    try HTTPChunkSyntax.checkTrailer(Array("X-Checksum: abc".utf8))
    #expect(throws: HTTPMalformedResponse.self) { try HTTPChunkSyntax.checkTrailer(Array("not a field".utf8)) }
    #expect(throws: HTTPMalformedResponse.self) { try HTTPChunkSyntax.checkTrailer(Array(" folded".utf8)) }
  }

  @Test func anOffendingLineIsShownSafelyAndShort() {
    #expect(HTTPMalformedResponse.shown([0x41, 0x0D, 0x1B, 0x5C, 0xFF]) == "A\\x0D\\x1B\\x5C\\xFF")
    let long = HTTPMalformedResponse.shown(Array(repeating: UInt8(ascii: "a"), count: 1000))
    #expect(long == String(repeating: "a", count: HTTPMalformedResponse.maximumShownLength) + "…")
  }
}

/// Random and mutated answers never crash the parsers: each is a value or an `HTTPMalformedResponse`.
struct HTTPResponseParsingRandomTests {
  @Test func randomAndMutatedAnswersAreParsedOrRefusedNeverCrash() {
    let seed = UInt64.random(in: 0...UInt64.max)
    print("HTTPResponseParsingRandomTests seed \(seed)")
    var random = SeededRandom(seed: seed)
    let samples = [
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5", "HTTP/1.0 404 Not Found\r\nX: y",
      "HTTP/1.1 200 OK\r\nContent-Length: 12, 12",
    ].map { Array($0.utf8) }
    let alphabet = Array("0123456789abcdefABCDEF+-; :\r\n\t,HTTP/1.chunked\u{7F}".utf8) + [0x00, 0xFF]
    for _ in 0..<5_000 {
      var bytes = samples[Int(random.next() % UInt64(samples.count))]
      for _ in 0..<Int(random.next() % 6) {
        let position = Int(random.next() % UInt64(bytes.count + 1))
        let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
        switch random.next() % 3 {
        case 0: bytes.insert(byte, at: position)
        case 1 where position < bytes.count: bytes.remove(at: position)
        default: if position < bytes.count { bytes[position] = byte }
        }
      }
      if let head = try? HTTPResponseHead.parse(bytes) {
        #expect((100...599).contains(head.status), "seed \(seed)")
        if case .length(let length)? = try? head.framing() { #expect(length >= 0, "seed \(seed)") }
      }
      let line = bytes.suffix(Int(random.next() % 24))
      if let size = try? HTTPChunkSyntax.size(of: line) { #expect(size >= 0, "seed \(seed)") }
    }
  }
}
