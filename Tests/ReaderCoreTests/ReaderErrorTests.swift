import Testing

@testable import ReaderCore

@Suite struct ReaderErrorTests {
  @Test func descriptionNamesTheCodeAndMessage() {
    let error = ReaderError(.bluetoothDisabled, "Bluetooth is off")
    #expect(error.description == "bluetoothDisabled: Bluetooth is off")
  }

  @Test func descriptionListsContextKeysInSortedOrder() {
    let error = ReaderError(
      .invalidConfiguration, "bad value", context: ["value": "", "field": "locationId", "attempt": "2"])
    #expect(error.description == "invalidConfiguration: bad value (attempt=2, field=locationId, value=)")
  }

  @Test func everyCodeHasADistinctStableName() {
    let codes: [ReaderError.Code] = [
      .canceled, .invalidConfiguration, .bluetoothScanTimedOut, .bluetoothConnectTimedOut, .bluetoothDisabled,
      .alreadyConnected, .notConnected, .readerNotFound, .connectionFailed, .unsupportedReader, .readerBusy,
      .rebootFailed, .storeCorrupt, .storeUnavailable, .commandRejected,
    ]
    let names = codes.map(\.description)
    #expect(Set(codes).count == codes.count)
    #expect(Set(names).count == names.count)
    #expect(ReaderError.Code.bluetoothScanTimedOut.description == "bluetoothScanTimedOut")
    #expect(ReaderError.Code.canceled.description == "canceled")
  }

  @Test func codesCompareByValue() {
    let error = ReaderError(.readerBusy, "installing an update")
    #expect(error.code == .readerBusy)
    #expect(error.code != .commandRejected)
  }

  @Test func canceledNamesTheOperation() {
    let error = ReaderError.canceled("discoverReaders")
    #expect(error.code == .canceled)
    #expect(error.message == "discoverReaders was canceled")
    #expect(error.context == ["operation": "discoverReaders"])
    #expect(error == .canceled("discoverReaders"))
    #expect(error != .canceled("connectReader"))
  }

  @Test func errorsWithDifferentContextAreDifferent() {
    let a = ReaderError(.readerNotFound, "gone", context: ["serialNumber": "A"])
    let b = ReaderError(.readerNotFound, "gone", context: ["serialNumber": "B"])
    #expect(a != b)
    #expect(a == ReaderError(.readerNotFound, "gone", context: ["serialNumber": "A"]))
  }

  @Test func isThrowableAndCatchableAsItsOwnType() {
    func fail() throws(ReaderError) { throw ReaderError(.notConnected, "no reader") }
    #expect(throws: ReaderError(.notConnected, "no reader")) { try fail() }
  }
}
