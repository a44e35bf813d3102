@testable import NFCKit
import Testing

@Suite struct URIRecordTests {
  /// The NFC Forum URI RTD abbreviation table, codes 0x00 to 0x23, written out independently.
  static let specTable = [
    "", "http://www.", "https://www.", "http://", "https://", "tel:", "mailto:", "ftp://anonymous:anonymous@",
    "ftp://ftp.", "ftps://", "sftp://", "smb://", "nfs://", "ftp://", "dav://", "news:", "telnet://", "imap:",
    "rtsp://", "urn:", "pop:", "sip:", "sips:", "tftp:", "btspp://", "btl2cap://", "btgoep://", "tcpobex://",
    "irdaobex://", "file://", "urn:epc:id:", "urn:epc:tag:", "urn:epc:pat:", "urn:epc:raw:", "urn:epc:", "urn:nfc:",
  ]

  @Test func theTableHasThe36SpecEntriesInCodeOrder() {
    #expect(URIPrefix.all.count == 36)
    #expect(URIPrefix.all.map(\.string) == Self.specTable)
    #expect(URIPrefix.all.map(\.code) == Array(0...0x23))
    #expect(URIPrefix(code: 0x23)?.string == "urn:nfc:")
    #expect(URIPrefix(code: 0x24) == nil, "a reserved code cannot be built")
    #expect(URIPrefix(code: 0xFF) == nil)
    #expect(URIPrefix(readingCode: 0x24).isReserved && URIPrefix(readingCode: 0x24).string == "")
    #expect(!URIPrefix(readingCode: 0x23).isReserved && URIPrefix(readingCode: 0x23).string == "urn:nfc:")
  }

  @Test func encodesTheSpecExampleWithCode2() throws {
    let value = URIRecord(uri: "https://www.example.com")
    #expect(value.prefix.code == 0x02)
    #expect(value.remainder == "example.com")
    #expect(try value.record().payload.hex == "02" + NDEFBytes(utf8: "example.com").hex)
  }

  @Test(arguments: [
    ("https://www.x", 0x02), ("https://x", 0x04), ("http://www.x", 0x01), ("http://x", 0x03),
    ("ftp://anonymous:anonymous@host", 0x07), ("ftp://ftp.host", 0x08), ("ftp://host", 0x0D),
    ("urn:epc:id:sgtin", 0x1E), ("urn:epc:tag:x", 0x1F), ("urn:epc:x", 0x22), ("urn:nfc:wkt", 0x23), ("urn:x", 0x13),
    ("sips:a", 0x16), ("sip:a", 0x15), ("geo:1,2", 0x00), ("HTTPS://www.x", 0x00), ("", 0x00),
  ])
  func picksTheLongestMatchingPrefix(uri: String, code: UInt8) throws {
    let value = URIRecord(uri: uri)
    #expect(value.prefix.code == code)
    #expect(value.uri == uri)
    #expect(try URIRecord(value.record()) == value)
  }

  @Test func everyPrefixRoundTrips() throws {
    for prefix in URIPrefix.all {
      let uri = prefix.string + "example/ü"
      let record = try NDEFRecord.uri(uri)
      #expect(record.payload[0] == prefix.code, "\(prefix)")
      #expect(try URIRecord(record).uri == uri)
    }
  }

  @Test func expandsAnExplicitNonLongestPrefix() throws {
    let value = URIRecord(prefix: URIPrefix(code: 0x04)!, remainder: "www.example.com")
    #expect(try URIRecord(value.record()).uri == "https://www.example.com")
    #expect(try value.record().payload[0] == 0x04)
  }

  private func uriError(_ payloadHex: String) -> NDEFError? {
    thrownError { () throws(NDEFError) in
      try URIRecord(NDEFRecord(typeNameFormat: .nfcWellKnown, type: [0x55], payload: NDEFBytes(hex(payloadHex))))
    }
  }

  /// URI RTD 1.0, 3.2.2: values marked RFU are treated as 0x00 (no prepending); ndeflib rejects them.
  @Test func readsReservedIdentifierCodesAsNoAbbreviationThoughNdeflibRejectsThem() throws {
    for code: UInt8 in [0x24, 0x7F, 0xFF] {
      let record = try NDEFRecord(typeNameFormat: .nfcWellKnown, type: [0x55], payload: NDEFBytes([code, 0x61, 0x3A]))
      let value = try URIRecord(record)
      #expect(value.uri == "a:")
      #expect(value.prefix.code == code)
      #expect(value.prefix.isReserved)
      // A generator must not write one.
      #expect(thrownError { () throws(NDEFError) in try value.payload() }?.code == .invalidURIPrefix)
    }
    // The message keeps the bytes as read, so it re-encodes exactly.
    let bytes = hex("D1 01 03 55 30 61 3A")
    #expect(try NDEFEncoder().encode(NDEFDecoder().decode(bytes)) == bytes)
  }

  @Test func rejectsAnEmptyPayload() {
    #expect(uriError("")?.code == .invalidURI)
  }

  @Test func rejectsControlCharactersAtTheirOffset() {
    let error = uriError("03 61 0A 62")
    #expect(error?.code == .invalidURI)
    #expect(error?.offset == 2)
  }

  @Test func rejectsInvalidUTF8AtTheOffendingByte() {
    let error = uriError("03 61 C3")
    #expect(error?.code == .invalidUTF8)
    #expect(error?.offset == 2)
  }

  /// URI fields around the eight-byte steps of the quick US-ASCII look: a byte of interest (a control
  /// character, DEL, a lone continuation byte, a cut-short or whole multi-byte sequence) at every position of
  /// fields of 0 to 19 bytes, and a control character before invalid UTF-8.
  static var fieldsAroundTheASCIILook: [[UInt8]] {
    let filler = Array("abcdefghijklmnopqrstu".utf8)
    let inserts: [[UInt8]] = [
      [], [0x00], [0x1F], [0x20], [0x7E], [0x7F], [0x80], [0xC3], [0xC3, 0xA9], [0xE6, 0x97, 0xA5],
      [0xF0, 0x9F, 0x8E, 0x89], [0xFF], [0x1F, 0xC3], [0xC3, 0x28],
    ]
    var fields: [[UInt8]] = []
    for length in 0..<20 {
      for position in 0...length {
        for insert in inserts {
          fields.append(Array(filler[0..<position]) + insert + Array(filler[position..<length]))
        }
      }
    }
    return fields
  }

  /// What a URI field must give, worked out byte by byte: invalid UTF-8 first (at its first bad byte), then a
  /// control character, otherwise the string of the field.
  private static func expectedRead(of field: [UInt8]) -> (String?, failure: (NDEFError.Code, at: Int)?) {
    let invalid = UnicodeValidation.firstInvalidUTF8(NDEFBytes(field))
    guard invalid == field.count else { return (nil, (.invalidUTF8, invalid)) }
    if let control = field.firstIndex(where: { $0 < 0x20 }) { return (nil, (.invalidURI, control)) }
    return (String(validating: field, as: UTF8.self)!, nil)
  }

  @Test func theQuickUSASCIILookReadsFieldsAsTheByteByByteChecksDo() throws {
    for prefix in [URIPrefix.none, URIPrefix(code: 0x04)!, URIPrefix(readingCode: 0x80)] {
      for field in Self.fieldsAroundTheASCIILook {
        let payload = [prefix.code] + field
        let bytes = wireRecord(tnf: 0x01, type: [0x55], payload: payload)
        let read = Result { () throws(NDEFError) in try NDEFDecoder().decodeTyped(bytes) }
        switch Self.expectedRead(of: field) {
        case (let rest?, _):
          guard case .success(let typed) = read, case .uri(let value) = typed.values.first else {
            Issue.record("field \(field) after \(prefix): \(read)")
            continue
          }
          let uri = prefix.string + rest
          #expect(value.uri == uri, "field \(field)")
          // The string compares, counts and walks as one built from checked bytes.
          #expect(value.uri.count == uri.count && Array(value.uri.unicodeScalars) == Array(uri.unicodeScalars))
          #expect(Array(value.uri.utf8) == Array(prefix.string.utf8) + field)
          #expect(value.prefix == prefix && value.remainder == rest)
          #expect(value == (try URIRecord(typed.records[0])))
          #expect(decodeError(bytes) == nil, "field \(field)")
        case (nil, let failure):
          guard case .failure(let error) = read, let failure else {
            Issue.record("field \(field) after \(prefix): decoded, expected \(String(describing: failure))")
            continue
          }
          // The payload starts after the 3-byte header and the type U, the field after the code.
          #expect(error.code == failure.0 && error.offset == 5 + failure.at, "field \(field)")
          #expect(error == decodeError(bytes), "field \(field)")
        }
      }
    }
  }

  @Test func refusesToWriteAURIWithAControlCharacter() {
    #expect(thrownError { () throws(NDEFError) in try NDEFRecord.uri("https://a\nb") }?.code == .invalidArgument)
  }
}
