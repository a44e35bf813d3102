import NFCKit
import ReaderCore
import Testing

@Suite struct ReaderKitErrorTests {
  /// What a generic error handler of an app sees: one shape whatever the part that threw.
  private func shape(_ error: any Error) -> (code: String, message: String, context: [String: String], cause: String?)?
  {
    guard let error = error as? any ReaderKitError else { return nil }
    return (error.codeName, error.message, error.context, error.cause?.description)
  }

  @Test func aCodecErrorIsHandledThroughTheSharedShapeWithItsCodeAndContext() {
    do {
      _ = try NDEFDecoder().decode([0xD1, 0x01, 0x05, 0x54])
      Issue.record("a record whose payload runs past the end decoded")
    } catch {
      let seen = shape(error)
      #expect(seen?.code == "lengthOutOfBounds")
      #expect(seen?.message == error.message)
      #expect(seen?.context == error.context)
      #expect(seen?.cause == nil)
    }
  }

  @Test func aSessionErrorAndATerminalErrorShowTheirCauseAsData() {
    let session = NFCReaderError(
      .readerTransceiveErrorTagResponseError, "the tag answered with an error",
      context: ["step": "read"], cause: .statusWord(0x6A82))
    let terminal = ReaderError(.readerNotFound, "no reader", context: ["serialNumber": "A1"], cause: .errno(110))
    #expect(shape(session)?.code == "readerTransceiveErrorTagResponseError")
    #expect(shape(session)?.cause == "SW 6A82")
    #expect(shape(terminal)?.code == "readerNotFound")
    #expect(shape(terminal)?.context == ["serialNumber": "A1"])
    #expect(shape(terminal)?.cause == "errno 110")
  }

  @Test func everyDescriptionRendersContextSortedAndCauseLast() {
    let session = NFCReaderError(
      .readerErrorRadioDisabled, "off", context: ["b": "2", "a": "1"], cause: .other("rfkill"))
    #expect(session.description == "readerErrorRadioDisabled (6): off (a=1, b=2) [rfkill]")
    let terminal = ReaderError(.readerNotFound, "gone", context: ["z": "9", "y": "8"], cause: .httpStatus(404))
    #expect(terminal.description == "readerNotFound: gone (y=8, z=9) [HTTP 404]")
    let codec = NDEFError(.truncated, "short", offset: 3, expected: "a header", context: ["record": "0"])
    #expect(codec.description == "truncated at byte 3: short; expected a header (record=0)")
    #expect(ReaderError(.readerNotFound, "gone").description == "readerNotFound: gone")
  }

  @Test func anNFCReaderErrorIsAValueEvenThoughCopiesShareTheirFields() {
    let original = NFCReaderError(.readerErrorRadioDisabled, "off", context: ["reason": "radio"])
    var changed = original
    changed.context["operation"] = "readNDEF"
    changed.message = "the radio is off"
    #expect(original.context == ["reason": "radio"], "a change of a copy leaves the original as it was")
    #expect(original.message == "off")
    #expect(changed.context == ["reason": "radio", "operation": "readNDEF"])
    #expect(changed.message == "the radio is off")
    #expect(changed.code == .readerErrorRadioDisabled)

    let twin = NFCReaderError(.readerErrorRadioDisabled, "off", context: ["reason": "radio"])
    #expect(twin == original, "errors built apart with the same fields are equal")
    #expect(twin.hashValue == original.hashValue)
    var other = twin
    other.code = .readerErrorInvalidParameter
    #expect(other != original)
    other = twin
    other.ndefError = NDEFError(.truncated, "short", offset: 3, expected: "a header")
    #expect(other != original)
    #expect(other.ndefError?.offset == 3)
    other = twin
    other.cause = .statusWord(0x6A82)
    #expect(other != original)
    #expect(twin == original, "the copies changed above leave the one they were made from")
  }
}
