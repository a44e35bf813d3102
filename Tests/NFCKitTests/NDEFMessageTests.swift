import NFCKit
import Testing

@Suite struct NDEFMessageTests {
  @Test func aMessageCannotHaveZeroRecords() {
    let error = thrownError { () throws(NDEFError) in try NDEFMessage(records: []) }
    #expect(error?.code == .zeroLengthMessage)
  }

  @Test func theEmptyMessageIsOneEmptyRecord() {
    #expect(NDEFMessage.empty.records == [.empty])
    #expect(NDEFMessage.empty.isEmpty)
    #expect(NDEFMessage.empty.length == 3)
  }

  @Test func aMessageWithContentIsNotEmpty() throws {
    #expect(!NDEFMessage(.empty, try .text("x")).isEmpty)
    #expect(NDEFMessage(.empty, .empty).isEmpty)
  }

  @Test func decodesThroughTheConvenienceInitializer() throws {
    let message = try NDEFMessage(decoding: hex("D1 01 0C 55 02 6578616D706C652E636F6D"))
    #expect(try URIRecord(message.records[0]).uri == "https://www.example.com")
  }

  @Test func equalityComparesBytesNotBuffers() throws {
    let bytes = hex("91 01 01 55 00  51 01 01 55 00")
    let message = try NDEFDecoder().decode(bytes)
    #expect(message.records[0] == message.records[1])
    #expect(message.records[0].hashValue == message.records[1].hashValue)
    #expect(message == NDEFMessage(try .uri(""), try .uri("")))
  }
}
