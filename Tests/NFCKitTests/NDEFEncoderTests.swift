import NFCKit
import ReaderCore
import Testing

@Suite struct NDEFEncoderTests {
  @Test func encodesTheSpecTextExample() throws {
    #expect(NDEFMessage(try .text("hello", languageCode: "en")).encoded() == hex("D1 01 08 54 02656E 68656C6C6F"))
  }

  @Test func encodesTheSpecURIExampleWithPrefixCode2() throws {
    #expect(
      NDEFMessage(try .uri("https://www.example.com")).encoded() == hex("D1 01 0C 55 02 6578616D706C652E636F6D"))
  }

  @Test func encodesTheEmptyMessageAsD00000() {
    #expect(NDEFMessage.empty.encoded() == [0xD0, 0x00, 0x00])
  }

  @Test func setsMBOnTheFirstRecordAndMEOnTheLast() throws {
    let record = try NDEFRecord.unknown(payload: [])
    let one = NDEFMessage(record).encoded()
    let three = NDEFMessage(record, record, record).encoded()
    #expect(one == hex("D5 00 00"))
    #expect(three == hex("95 00 00  15 00 00  55 00 00"))
  }

  @Test func usesShortRecordsExactlyWhenThePayloadIsUnder256Bytes() throws {
    let short = NDEFMessage(try .unknown(payload: NDEFBytes(Array(repeating: 7, count: 255)))).encoded()
    let long = NDEFMessage(try .unknown(payload: NDEFBytes(Array(repeating: 7, count: 256)))).encoded()
    #expect(Array(short.prefix(3)) == hex("D5 00 FF"))
    #expect(short.count == 3 + 255)
    #expect(Array(long.prefix(6)) == hex("C5 00 00000100"))
    #expect(long.count == 6 + 256)
  }

  @Test func setsILOnlyWhenTheRecordHasAnIdentifier() throws {
    #expect(NDEFMessage(try .unknown(payload: [1])).encoded() == hex("D5 00 01 01"))
    #expect(NDEFMessage(try .unknown(payload: [1], identifier: [9, 8])).encoded() == hex("DD 00 01 02 0908 01"))
  }

  @Test func encodedLengthMatchesTheEncoding() throws {
    var random = SeededRandom(seed: 7)
    for _ in 0..<200 {
      let message = try RandomMessages.message(&random)
      #expect(message.length == message.encoded().count)
    }
  }

  @Test func chunksPayloadsLongerThanTheChunkSize() throws {
    let message = NDEFMessage(
      try .media(type: "text/plain", payload: NDEFBytes(utf8: "Hello, world"), identifier: [0x61]), try .uri("tel:1"))
    let bytes = try NDEFEncoder().encode(message, chunkSize: 5)
    #expect(
      bytes
        == hex(
          "BA 0A 05 01 746578742F706C61696E 61 48656C6C6F  36 00 05 2C20776F72  16 00 02 6C64  51 01 02 55 05 31"))
    #expect(try NDEFDecoder().decode(bytes) == message)
  }

  @Test func chunkingALastRecordPutsMEOnItsTerminatingChunk() throws {
    let bytes = try NDEFEncoder().encode(NDEFMessage(try .unknown(payload: [1, 2, 3])), chunkSize: 2)
    #expect(bytes == hex("B5 00 02 0102  56 00 01 03"))
  }

  @Test func rejectsAChunkSizeBelowOne() throws {
    let error = thrownError { () throws(NDEFError) in try NDEFEncoder().encode(.empty, chunkSize: 0) }
    #expect(error?.code == .invalidArgument)
  }

  @Test func decodingAnEncodedMessageGivesItBack() throws {
    let seed: UInt64 = 0x5EED_0001
    var random = SeededRandom(seed: seed)
    for index in 0..<500 {
      let message = try RandomMessages.message(&random)
      let bytes = message.encoded()
      let decoded = try NDEFDecoder().decode(bytes)
      #expect(decoded == message, "seed \(seed), message \(index)")
      #expect(decoded.encoded() == bytes, "seed \(seed), message \(index)")
      let chunked = try NDEFEncoder().encode(message, chunkSize: Int.random(in: 1...300, using: &random))
      #expect(try NDEFDecoder().decode(chunked) == message, "seed \(seed), message \(index), chunked")
    }
  }
}
