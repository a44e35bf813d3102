/// The head of an HTTP/1.1 answer — status line and header fields — parsed strictly (RFC 9112), and
/// how its body is delimited. Pure: bytes in, a value or an `HTTPMalformedResponse` out.
struct HTTPResponseHead: Equatable {
  /// How the body that follows is delimited.
  enum Framing: Equatable {
    /// `Transfer-Encoding: chunked`.
    case chunked
    /// `Content-Length: n`.
    case length(Int)
    /// Neither: the body runs until the server closes the connection.
    case untilClose
  }

  /// The status code, 100 to 599.
  var status: Int
  /// The header fields in order, names in lower case, values without surrounding white space.
  var fields: [(name: String, value: String)]

  static func == (left: Self, right: Self) -> Bool {
    left.status == right.status && left.fields.map(\.name) == right.fields.map(\.name)
      && left.fields.map(\.value) == right.fields.map(\.value)
  }

  /// The value of the field `name` (lower case); several are joined with `, ` as RFC 9110 allows.
  func value(of name: String) -> String? {
    let values = fields.filter { $0.name == name }.map(\.value)
    return values.isEmpty ? nil : values.joined(separator: ", ")
  }

  /// Parses `bytes`: the status line and the field lines, each ending in CRLF, without the empty line
  /// that ends the head.
  /// - Throws: `HTTPMalformedResponse` naming the first line that breaks the syntax: a status line
  ///   that is not `HTTP/1.x NNN reason` (three digits, no sign), a field line without a colon, with
  ///   white space or a character outside a token in its name, a folded line (starting with white
  ///   space), or a control character in a value.
  static func parse(_ bytes: some Collection<UInt8>) throws(HTTPMalformedResponse) -> HTTPResponseHead {
    var lines = split(Array(bytes))
    guard !lines.isEmpty else { throw HTTPMalformedResponse("the answer is empty", line: []) }
    let statusLine = lines.removeFirst()
    let status = try parseStatusLine(Array(statusLine))
    var fields: [(name: String, value: String)] = []
    for line in lines {
      guard let first = line.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t") else {
        throw HTTPMalformedResponse("a header line is empty or folded onto the one before", line: line)
      }
      guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
        throw HTTPMalformedResponse("a header line has no colon", line: line)
      }
      let name = line[..<colon]
      guard !name.isEmpty, name.allSatisfy(isTokenCharacter) else {
        throw HTTPMalformedResponse("a header name is not a token", line: line)
      }
      let value = line[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 }
      let trimmed = value.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
      guard trimmed.allSatisfy({ $0 == 0x09 || $0 >= 0x20 && $0 != 0x7F }) else {
        throw HTTPMalformedResponse("a header value holds a control character", line: line)
      }
      fields.append((String(decoding: name, as: UTF8.self).lowercased(), String(decoding: trimmed, as: UTF8.self)))
    }
    return HTTPResponseHead(status: status, fields: fields)
  }

  /// How the body is delimited, from `Transfer-Encoding` (which wins) and `Content-Length`.
  /// - Throws: `HTTPMalformedResponse` for a transfer coding other than `chunked` last (this reader asks
  ///   for `identity` and decodes nothing else), or a `Content-Length` that is not one decimal number
  ///   (several fields, or a list, must all say the same number).
  func framing() throws(HTTPMalformedResponse) -> Framing {
    if let codings = value(of: "transfer-encoding") {
      let list = codings.split(separator: ",").map { $0.trimmingWhiteSpace().lowercased() }
      guard list.last == "chunked", list.dropLast().allSatisfy({ $0 == "identity" }) else {
        throw HTTPMalformedResponse(
          "the transfer coding is not chunked", line: Array("Transfer-Encoding: \(codings)".utf8))
      }
      return .chunked
    }
    guard let lengths = value(of: "content-length") else { return .untilClose }
    let numbers = lengths.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingWhiteSpace() }
    let line = Array("Content-Length: \(lengths)".utf8)
    guard let first = numbers.first, numbers.allSatisfy({ $0 == first }) else {
      throw HTTPMalformedResponse("the Content-Length fields disagree", line: line)
    }
    // Decimal digits only (no sign, no space): at most 18, so the number fits an Int.
    guard !first.isEmpty, first.utf8.count <= 18, first.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
      let length = Int(first)
    else {
      throw HTTPMalformedResponse("the Content-Length is not a number of bytes", line: line)
    }
    return .length(length)
  }

  /// `HTTP/1.x NNN reason`: the status.
  private static func parseStatusLine(_ line: [UInt8]) throws(HTTPMalformedResponse) -> Int {
    let prefix = Array("HTTP/1.".utf8)
    guard line.count >= 12, Array(line.prefix(7)) == prefix, (0x30...0x39).contains(line[7]),
      line[8] == UInt8(ascii: " "), line[9...11].allSatisfy({ (0x30...0x39).contains($0) }),
      line.count == 12 || line[12] == UInt8(ascii: " ")
    else {
      throw HTTPMalformedResponse("the status line is not HTTP/1.x followed by a three-digit status", line: line)
    }
    let status = line[9...11].reduce(0) { $0 * 10 + Int($1 - 0x30) }
    guard (100...599).contains(status) else {
      throw HTTPMalformedResponse("the status \(status) is not between 100 and 599", line: line)
    }
    return status
  }

  /// The CRLF-separated lines of `bytes` (a bare LF also ends a line, as RFC 9112 lets a reader accept).
  private static func split(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    var lines: [ArraySlice<UInt8>] = []
    var start = 0
    for (index, byte) in bytes.enumerated() where byte == 0x0A {
      let end = index > start && bytes[index - 1] == 0x0D ? index - 1 : index
      lines.append(bytes[start..<end])
      start = index + 1
    }
    if start < bytes.count { lines.append(bytes[start...]) }
    return lines
  }

  /// RFC 9110 `tchar`.
  private static func isTokenCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
      UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
      UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
      true
    default: false
    }
  }
}

/// The syntax of a chunked body's own lines (RFC 9112 §7.1): the chunk-size line and trailer fields.
enum HTTPChunkSyntax {
  /// The most significant hex digits a chunk size may have: 15 fit an Int with room to add.
  static let maximumSizeDigits = 15

  /// The size a chunk-size line announces: hexadecimal digits (leading zeros allowed, no sign, no
  /// space inside), optionally followed by `;` extensions, which are ignored.
  /// - Throws: `HTTPMalformedResponse` with the line.
  static func size(of line: some Collection<UInt8>) throws(HTTPMalformedResponse) -> Int {
    let digits = line.prefix { $0 != UInt8(ascii: ";") }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
    guard !digits.isEmpty, digits.allSatisfy(isHexDigit) else {
      throw HTTPMalformedResponse("the chunk size is not hexadecimal digits", line: line)
    }
    let significant = digits.drop { $0 == UInt8(ascii: "0") }
    guard significant.count <= maximumSizeDigits else {
      throw HTTPMalformedResponse("the chunk size is larger than any body this reader accepts", line: line)
    }
    return significant.reduce(0) { $0 * 16 + hexValue($1) }
  }

  /// Checks one trailer field line (after the last chunk): `name: value`, as a header field.
  /// - Throws: `HTTPMalformedResponse` with the line.
  static func checkTrailer(_ line: some Collection<UInt8>) throws(HTTPMalformedResponse) {
    let head = Array("HTTP/1.1 200 OK\r\n".utf8) + Array(line)
    do throws(HTTPMalformedResponse) {
      _ = try HTTPResponseHead.parse(head)
    } catch {
      throw HTTPMalformedResponse("a trailer line is not a header field", line: line)
    }
  }

  private static func isHexDigit(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
  }

  private static func hexValue(_ byte: UInt8) -> Int {
    switch byte {
    case 0x30...0x39: Int(byte - 0x30)
    case 0x41...0x46: Int(byte - 0x41 + 10)
    default: Int(byte - 0x61 + 10)
    }
  }
}

extension Substring {
  /// The text without spaces and tabs at either end.
  fileprivate func trimmingWhiteSpace() -> String {
    String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
  }
}
