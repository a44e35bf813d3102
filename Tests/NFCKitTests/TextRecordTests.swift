@testable import NFCKit
import Testing

@Suite struct TextRecordTests {
  private func text(_ payloadHex: String) throws(NDEFError) -> TextRecord {
    try TextRecord(NDEFRecord(typeNameFormat: .nfcWellKnown, type: [0x54], payload: NDEFBytes(hex(payloadHex))))
  }

  private func textError(_ payloadHex: String) -> NDEFError? {
    thrownError { () throws(NDEFError) in try text(payloadHex) }
  }

  @Test func readsTheSpecHelloExample() throws {
    let value = try text("02 656E 68656C6C6F")
    #expect(value == TextRecord(text: "hello", languageCode: "en", encoding: .utf8))
  }

  @Test func readsUTF16BigEndianWithoutABOM() throws {
    let value = try text("82 6465 0048 00E9")
    #expect(value.text == "Hé")
    #expect(value.languageCode == "de")
    #expect(value.encoding == .utf16BigEndian)
  }

  @Test func readsUTF16WithABigEndianBOM() throws {
    let value = try text("82 656E FEFF 0048 0069")
    #expect(value.text == "Hi")
    #expect(value.encoding == .utf16BigEndianWithBOM)
  }

  @Test func readsUTF16WithALittleEndianBOM() throws {
    let value = try text("82 656E FFFE 4800 6900 3CD8 89DF")
    #expect(value.text == "Hi🎉")
    #expect(value.encoding == .utf16LittleEndianWithBOM)
  }

  @Test func keepsAUTF8ByteOrderMarkAsPartOfTheText() throws {
    #expect(try text("02 656E EFBBBF 41").text == "\u{FEFF}A")
  }

  @Test func ignoresTheReservedStatusBit() throws {
    #expect(try text("42 656E 41").text == "A")
  }

  @Test(arguments: TextRecord.Encoding.allCases)
  func writesAndReadsBackEveryEncoding(encoding: TextRecord.Encoding) throws {
    let value = TextRecord(text: "Grüße 🎉 日本", languageCode: "de-CH", encoding: encoding)
    let record = try value.record()
    #expect(try TextRecord(record) == value)
    #expect(record.payload[0] == (encoding.isUTF16 ? 0x85 : 0x05))
  }

  @Test(arguments: ["\u{FEFF}hi", "\u{FFFE}A"], TextRecord.Encoding.allCases)
  func textStartingWithAByteOrderMarkCharacterRoundTripsOrIsRefused(text: String, encoding: TextRecord.Encoding) {
    let value = TextRecord(text: text, languageCode: "en", encoding: encoding)
    do {
      #expect(try TextRecord(value.record()) == value)
      #expect(encoding != .utf16BigEndian, "UTF-16BE without a BOM cannot carry a leading U+FEFF or U+FFFE")
    } catch {
      #expect(encoding == .utf16BigEndian)
      #expect(error.code == .invalidArgument && error.context["field"] == "text")
    }
  }

  @Test func writesTheBOMsItsEncodingNames() throws {
    #expect(try TextRecord(text: "A", encoding: .utf16BigEndian).payload().hex == "82656e0041")
    #expect(try TextRecord(text: "A", encoding: .utf16BigEndianWithBOM).payload().hex == "82656efeff0041")
    #expect(try TextRecord(text: "A", encoding: .utf16LittleEndianWithBOM).payload().hex == "82656efffe4100")
  }

  @Test func rejectsAnEmptyPayload() {
    #expect(textError("")?.code == .invalidTextRecord)
  }

  @Test func rejectsALanguageCodeLengthOfZero() {
    let error = textError("00 41")
    #expect(error?.code == .invalidTextRecord)
    #expect(error?.offset == 0)
  }

  @Test func rejectsALanguageCodeLengthPastThePayload() {
    let error = textError("05 656E")
    #expect(error?.code == .lengthOutOfBounds)
    #expect(error?.expected == "a language code length of at most 2")
  }

  @Test func rejectsALanguageCodeThatIsNotPrintableASCII() {
    let error = textError("02 65C3 41")
    #expect(error?.code == .invalidTextRecord)
    #expect(error?.offset == 2)
  }

  @Test(arguments: [
    ("02 656E 41 C0 80", 4),  // overlong encoding of U+0000
    ("02 656E ED A0 80", 4),  // UTF-16 surrogate encoded in UTF-8: ED must be followed by 80–9F
    ("02 656E 41 E6 97", 4),  // sequence cut short by the end of the payload
    ("02 656E FF", 3),  // never valid
    ("02 656E F4 90 80 80", 4),  // past U+10FFFF
  ])
  func rejectsInvalidUTF8AtTheOffendingByte(payload: String, offset: Int) {
    let error = textError(payload)
    #expect(error?.code == .invalidUTF8)
    #expect(error?.offset == offset)
    #expect(error?.context["relativeTo"] == "payload")
  }

  @Test(arguments: [
    ("82 656E 0041 00", 5),  // odd number of bytes
    ("82 656E 0041 D83D", 5),  // high surrogate at the end
    ("82 656E DF89 0041", 3),  // low surrogate first
    ("82 656E FFFE 3DD8 4100", 5),  // little-endian high surrogate followed by "A"
    ("82 656E D83D D83D DE00", 3),  // high surrogate followed by another high one (then a low one)
    ("82 656E 0041 0042 0043 0044 D83D 0045", 11),  // after four US-ASCII units read at once, a high surrogate and "E"
  ])
  func rejectsInvalidUTF16AtTheOffendingUnit(payload: String, offset: Int) {
    let error = textError(payload)
    #expect(error?.code == .invalidUTF16)
    #expect(error?.offset == offset)
  }

  /// UTF-16 text read four units at a time: a surrogate, a non-ASCII unit or an ASCII one at every position
  /// of texts up to 20 units long, both byte orders, decoded as the standard library decodes the units, and
  /// a lone surrogate reported at its own offset.
  @Test(arguments: [true, false])
  func readsUTF16TextsAtEveryPositionAsTheStandardLibraryDoes(bigEndian: Bool) throws {
    let specials: [[UInt16]] = [[0xD83D, 0xDE00], [0xD83D], [0xDE00], [0x00E9], [0x20AC], [0x0100], [0x0041]]
    for length in 0...20 {
      for position in 0...length {
        for special in specials {
          var units = (0..<length).map { UInt16(0x61 + $0 % 26) }
          units.insert(contentsOf: special, at: position)
          let body = units.flatMap {
            bigEndian ? [UInt8($0 >> 8), UInt8($0 & 0xFF)] : [UInt8($0 & 0xFF), UInt8($0 >> 8)]
          }
          // A byte-order mark for little-endian text; none for big-endian (the default order).
          let payload: [UInt8] = [0x82, 0x65, 0x6E] + (bigEndian ? [] : [0xFF, 0xFE]) + body
          let record = try NDEFRecord(typeNameFormat: .nfcWellKnown, type: [0x54], payload: NDEFBytes(payload))
          let textStart = bigEndian ? 3 : 5
          if special.count == 1, (0xD800...0xDFFF).contains(special[0]) {
            let error = thrownError { () throws(NDEFError) in try TextRecord(record) }
            #expect(error?.code == .invalidUTF16, "units \(units)")
            #expect(error?.offset == textStart + 2 * position, "units \(units)")
          } else {
            let text = try TextRecord(record).text
            let expected = String(decoding: units, as: UTF16.self)
            #expect(text == expected, "units \(units)")
            // The string counts and walks as the standard library's does (US-ASCII only when it is).
            #expect(text.count == expected.count, "units \(units)")
            #expect(Array(text.unicodeScalars) == Array(expected.unicodeScalars), "units \(units)")
            #expect(try NDEFDecoder().decodeTyped(NDEFMessage(record).encoded()).values == [.text(TextRecord(record))])
          }
        }
      }
    }
  }

  /// Reads the Text record of `payload` both ways the decoder does (`decodeTyped`, and `TextRecord` of the
  /// decoded record), expecting the same value from both, or the same error from both and from `decode`.
  private func readTwice(_ payload: [UInt8]) -> Result<TextRecord, NDEFError> {
    let bytes = wireRecord(tnf: 0x01, type: [0x54], payload: payload)
    let typed = Result { () throws(NDEFError) in try NDEFDecoder().decodeTyped(bytes) }
    switch typed {
    case .success(let message):
      guard case .text(let value) = message.values.first else {
        Issue.record("\(payload): no Text value")
        return typed.map { _ in TextRecord(text: "") }
      }
      #expect((try? TextRecord(message.records[0])) == value)
      #expect(decodeError(bytes) == nil)
      return .success(value)
    case .failure(let error):
      #expect(decodeError(bytes) == error)
      return .failure(error)
    }
  }

  /// Language codes of every length from 0 to 63 (every code of two lower-case letters among them), in upper
  /// case, with digits and hyphens, and with a byte that is not printable US-ASCII at each position: read as
  /// the strings of their bytes, or refused at the offending byte.
  @Test func readsLanguageCodesOfEveryLengthAsTheirBytes() throws {
    let letters = Array("abcdefghijklmnopqrstuvwxyz".utf8)
    var codes: [[UInt8]] = letters.flatMap { first in letters.map { [first, $0] } }
    for length in 0...63 {
      let lower = (0..<length).map { letters[$0 % 26] }
      codes += [lower, lower.map { $0 - 0x20 }, (0..<length).map { Array("de-CH1_".utf8)[$0 % 7] }]
    }
    codes += [[0x21, 0x7E], [0x60, 0x61], [0x61, 0x7B], [0x41, 0x5A], [0x40, 0x61], [0x61, 0x5B], [0x7A, 0x7A]]
    for code in codes {
      let read = readTwice([UInt8(code.count)] + code + Array("hi".utf8))
      guard !code.isEmpty else {
        #expect((try? read.get()) == nil)
        continue
      }
      #expect((try? read.get())?.languageCode == String(decoding: code, as: UTF8.self), "code \(code)")
      #expect((try? read.get())?.languageCode.utf8.elementsEqual(code) == true, "code \(code)")
    }
    for length in 1...63 {
      for position in 0..<length {
        for bad: UInt8 in [0x20, 0x7F, 0x80, 0xC3, 0xFF, 0x00] {
          var code = (0..<length).map { letters[$0 % 26] }
          code[position] = bad
          guard case .failure(let error) = readTwice([UInt8(length)] + code + Array("hi".utf8)) else {
            Issue.record("code \(code) read")
            continue
          }
          // The payload starts after the 3-byte header and the type T, the code after the status byte.
          #expect(error.code == .invalidTextRecord && error.offset == 5 + position, "code \(code)")
        }
      }
    }
  }

  /// UTF-8 texts around the eight-byte steps of the US-ASCII look: a byte of interest (DEL, a lone
  /// continuation byte, a cut-short or whole multi-byte sequence, a byte never in UTF-8) at every position of
  /// texts of 0 to 19 bytes, read as the standard library reads them or refused at the first bad byte.
  @Test func readsUTF8TextsAroundTheASCIILookAsTheStandardLibraryDoes() throws {
    let filler = Array("abcdefghijklmnopqrstu".utf8)
    let inserts: [[UInt8]] = [
      [], [0x00], [0x7F], [0x80], [0xC3], [0xC3, 0xA9], [0xE6, 0x97, 0xA5], [0xF0, 0x9F, 0x8E, 0x89], [0xFF],
      [0xC3, 0x28], [0xED, 0xA0, 0x80],
    ]
    for length in 0..<20 {
      for position in 0...length {
        for insert in inserts {
          let body = Array(filler[0..<position]) + insert + Array(filler[position..<length])
          let read = readTwice([0x02, 0x65, 0x6E] + body)
          if let expected = String(validating: body, as: UTF8.self) {
            let value = try read.get()
            #expect(value.text == expected, "body \(body)")
            #expect(value.text.count == expected.count, "body \(body)")
            #expect(Array(value.text.unicodeScalars) == Array(expected.unicodeScalars), "body \(body)")
            #expect(value.languageCode == "en" && value.encoding == .utf8)
          } else {
            let invalid = UnicodeValidation.firstInvalidUTF8(NDEFBytes(body))
            guard case .failure(let error) = read else {
              Issue.record("body \(body) read")
              continue
            }
            // The text starts after the 3-byte header, the type T, the status byte and "en".
            #expect(error.code == .invalidUTF8 && error.offset == 7 + invalid, "body \(body)")
          }
        }
      }
    }
  }

  @Test func rejectsRecordsOfAnotherType() throws {
    let error = thrownError { () throws(NDEFError) in try TextRecord(NDEFRecord.uri("tel:1")) }
    #expect(error?.code == .typeMismatch)
  }

  @Test(arguments: ["", String(repeating: "a", count: 64), "é", "e n"])
  func refusesToWriteALanguageCodeTheFormatCannotHold(language: String) {
    let error = thrownError { () throws(NDEFError) in try NDEFRecord.text("x", languageCode: language) }
    #expect(error?.code == .invalidArgument)
    #expect(error?.context["field"] == "languageCode")
  }

  @Test func writesALanguageCodeOf63Bytes() throws {
    let language = String(repeating: "a", count: 63)
    #expect(try TextRecord(NDEFRecord.text("x", languageCode: language)).languageCode == language)
  }
}
