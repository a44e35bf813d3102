import NFCKit
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

  @Test func refusesToWriteAURIWithAControlCharacter() {
    #expect(thrownError { () throws(NDEFError) in try NDEFRecord.uri("https://a\nb") }?.code == .invalidArgument)
  }
}
