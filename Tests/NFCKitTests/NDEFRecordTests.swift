import NFCKit
import Testing

@Suite struct NDEFRecordTests {
  /// The long type names the decoder holds once, and names one byte away from each, of every length.
  @Test func longCommonTypeNamesAndEveryNameOneByteAwayReadAsTheyAreSpelt() throws {
    let common = [
      "application/json", "application/octet-stream", "application/vnd.wfa.wsc", "application/vnd.wfa.p2p",
      "application/vnd.bluetooth.ep.oob", "application/vnd.bluetooth.le.oob",
    ]
    var names = common + ["application/jso", "application/jsonx", "text/x-example-type"]
    for name in common {
      let bytes = Array(name.utf8)
      for index in bytes.indices where bytes[index] != UInt8(ascii: "/") {
        var changed = bytes
        changed[index] = changed[index] == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
        names.append(String(decoding: changed, as: UTF8.self))
      }
    }
    for name in names {
      let media = try NDEFRecord.media(type: name, payload: [1])
      #expect(media.mediaType == name)
      let decoded = try NDEFDecoder().decode(NDEFMessage(media).encoded())
      #expect(decoded.records.first?.mediaType == name)
      #expect(decoded.records.first?.externalType == nil)
    }
  }

  @Test func rejectsAnEmptyRecordWithFields() {
    for (type, id, payload) in [([1], [], []), ([], [1], []), ([], [], [1])] as [(NDEFBytes, NDEFBytes, NDEFBytes)] {
      let error = thrownError { () throws(NDEFError) in
        try NDEFRecord(typeNameFormat: .empty, type: type, identifier: id, payload: payload)
      }
      #expect(error?.code == .invalidRecord)
    }
  }

  @Test(arguments: [TypeNameFormat.nfcWellKnown, .media, .absoluteURI, .nfcExternal])
  func rejectsATypedFormatWithoutAType(format: TypeNameFormat) {
    let error = thrownError { () throws(NDEFError) in try NDEFRecord(typeNameFormat: format, payload: [1]) }
    #expect(error?.code == .invalidRecord)
    #expect(error?.context["field"] == "type")
  }

  @Test func rejectsAnUnknownRecordWithAType() {
    let error = thrownError { () throws(NDEFError) in try NDEFRecord(typeNameFormat: .unknown, type: [1]) }
    #expect(error?.code == .invalidRecord)
  }

  @Test func rejectsUnchangedAsTheFormatOfARecord() {
    let error = thrownError { () throws(NDEFError) in try NDEFRecord(typeNameFormat: .unchanged, payload: [1]) }
    #expect(error?.context["field"] == "typeNameFormat")
  }

  @Test func rejectsTypesAndIdentifiersLongerThan255Bytes() {
    let long = NDEFBytes(Array(repeating: 0x61, count: 256))
    #expect(thrownError { () throws(NDEFError) in try NDEFRecord(typeNameFormat: .media, type: long) } != nil)
    #expect(
      thrownError { () throws(NDEFError) in try NDEFRecord(typeNameFormat: .unknown, identifier: long) }?.context[
        "field"] == "identifier")
    let fits = NDEFBytes(Array(repeating: 0x61, count: 255))
    #expect(thrownError { () throws(NDEFError) in try NDEFRecord(typeNameFormat: .media, type: fits) } == nil)
  }

  @Test func refusesToCreateAReservedRecordAsTheSpecForbidsGeneratorsToUseTNF7() {
    let error = thrownError { () throws(NDEFError) in try NDEFRecord(typeNameFormat: .reserved, payload: [3]) }
    #expect(error?.code == .invalidRecord)
    #expect(error?.context["field"] == "typeNameFormat")
  }

  @Test func aDecodedReservedRecordKeepsItsFieldsAndReencodesAsItWas() throws {
    let bytes = hex("DF 01 01 01 AA BB CC")  // MB ME SR IL, TNF 7: type AA, id BB, payload CC
    let message = try NDEFDecoder().decode(bytes)
    #expect(message.records[0] == reservedRecord(type: [0xAA], identifier: [0xBB], payload: [0xCC]))
    #expect(message.records[0].typeNameFormat == .reserved)
    #expect(message.encoded() == bytes)
  }

  @Test func buildsMediaRecordsWithARawPayload() throws {
    let vcard = NDEFBytes(utf8: "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada\r\nEND:VCARD\r\n")
    let record = try NDEFRecord.media(type: "text/vcard", payload: vcard)
    #expect(record.typeNameFormat == .media)
    #expect(record.mediaType == "text/vcard")
    #expect(record.payload == vcard)
    #expect(
      try NDEFRecord.media(type: "application/json", payload: NDEFBytes(utf8: "{}")).type.asciiString
        == "application/json")
  }

  @Test(arguments: ["", "textplain", "/plain", "text/", "text /plain", "tëxt/plain"])
  func rejectsMediaTypesThatAreNotTypeSlashSubtype(type: String) {
    let error = thrownError { () throws(NDEFError) in try NDEFRecord.media(type: type, payload: []) }
    #expect(error?.code == .invalidArgument)
  }

  @Test func buildsExternalRecordsNamedDomainColonType() throws {
    let record = try NDEFRecord.external("android.com:pkg", payload: NDEFBytes(utf8: "com.example"))
    #expect(record.typeNameFormat == .nfcExternal)
    #expect(record.externalType == "android.com:pkg")
    #expect(thrownError { () throws(NDEFError) in try NDEFRecord.external("nocolon") }?.code == .invalidArgument)
    #expect(thrownError { () throws(NDEFError) in try NDEFRecord.external(":type") }?.code == .invalidArgument)
  }

  @Test func buildsAbsoluteURIRecords() throws {
    let record = try NDEFRecord.absoluteURI("https://example.com/schema", payload: [1])
    #expect(record.typeNameFormat == .absoluteURI)
    #expect(record.absoluteURI == "https://example.com/schema")
    #expect(record.mediaType == nil)
  }

  @Test func accessorsAnswerOnlyForTheirFormat() throws {
    let text = try NDEFRecord.text("x")
    #expect(text.wellKnownTypeName == "T")
    #expect(text.isWellKnown("T"))
    #expect(!text.isWellKnown("U"))
    #expect(text.mediaType == nil)
    #expect(text.externalType == nil)
    #expect(text.absoluteURI == nil)
  }

  @Test func describesItselfInHex() throws {
    #expect(
      try NDEFRecord.uri("tel:1").description == "NDEFRecord(tnf: nfcWellKnown, type: 55, id: , payload: 0531)")
  }

  /// Long type names that tags often carry (handed out as strings made once), written out independently.
  static let knownLongTypeNames = [
    "application/json", "application/vnd.wfa.wsc", "application/vnd.wfa.p2p", "application/octet-stream",
    "application/vnd.bluetooth.ep.oob", "application/vnd.bluetooth.le.oob",
  ]

  /// Each known name, each name with one byte changed (to a neighbour, to upper case, to a non-ASCII byte) at
  /// every position, and names of every length from 0 to 40: the type accessors give the string of the type's
  /// bytes exactly when they are US-ASCII, as `type.asciiString` reads them, whatever the format.
  @Test func typeNamesReadAsTheirBytesWhetherKnownOrNot() throws {
    var types: [[UInt8]] = Self.knownLongTypeNames.map { Array($0.utf8) }
    for name in types {
      for position in name.indices {
        for change: (UInt8) -> UInt8 in [{ $0 &+ 1 }, { $0 &- 1 }, { $0 & 0xDF }, { $0 | 0x80 }] {
          var changed = name
          changed[position] = change(changed[position])
          types.append(changed)
        }
      }
      types += [name + [0x61], Array(name.dropLast()), Array(name.dropFirst())]
    }
    types += (0...40).map { length in (0..<length).map { UInt8(0x61 + $0 % 26) } }
    for type in types {
      let expected = type.allSatisfy { $0 < 0x80 } ? String(decoding: type, as: UTF8.self) : nil
      for format in [TypeNameFormat.media, .absoluteURI, .nfcExternal, .nfcWellKnown] where !type.isEmpty {
        let record = try decodedRecord(format: format, type: type)
        #expect(record.type.asciiString == expected)
        let read = [record.mediaType, record.absoluteURI, record.externalType, record.wellKnownTypeName]
        #expect(read.compactMap { $0 } == (expected.map { [$0] } ?? []), "type \(type)")
        #expect(read.compactMap { $0 }.allSatisfy { Array($0.utf8) == type }, "type \(type)")
      }
    }
  }

  /// A record of `format` and `type`, decoded from the wire (so that its fields are a view of the input).
  private func decodedRecord(format: TypeNameFormat, type: [UInt8]) throws -> NDEFRecord {
    let bytes = wireRecord(tnf: format.rawValue, type: type, payload: [1, 2])
    return try NDEFDecoder(options: NDEFDecodingOptions(validatesWellKnownPayloads: false)).decode(bytes).records[0]
  }

}
