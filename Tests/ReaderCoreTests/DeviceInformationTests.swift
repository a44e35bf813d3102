import Foundation
import Testing

@testable import ReaderCore

@Suite struct DeviceInformationTests {
  @Test func aDISStringIsValidUTF8WithPaddingAndSurroundingSpacesDropped() {
    #expect(DeviceInformation.text(Array(" ACME-R1\0\0".utf8)) == "ACME-R1")
    #expect(DeviceInformation.text(Array("Zürich Ⅱ".utf8)) == "Zürich Ⅱ")
    #expect(DeviceInformation.text([0, 0]) == nil)
    #expect(DeviceInformation.text([]) == nil)
  }

  @Test func junkIsLeftOutRatherThanRepairedOrCut() {
    #expect(DeviceInformation.text([0xFF, 0x41]) == nil, "not UTF-8")
    #expect(DeviceInformation.text([0xE2, 0x82]) == nil, "a truncated sequence")
    #expect(DeviceInformation.text(Array("A\u{7}B".utf8)) == nil, "a control character")
    #expect(DeviceInformation.text(Array("A\tB".utf8)) == nil, "a tab")
    #expect(DeviceInformation.text(Array(String(repeating: "x", count: 64).utf8))?.count == 64)
    #expect(DeviceInformation.text(Array(String(repeating: "x", count: 65).utf8)) == nil, "longer than the bound")
    #expect(DeviceInformation.text(Array(repeating: 0x41, count: 600)) == nil)
  }

  @Test func aReaderTakesTheInformationItsLinkReportedAndKeepsItWhenALaterLinkReportsNone() {
    var reader = Reader(serialNumber: "STRM2-0001", deviceType: .stripeM2)
    let information = DeviceInformation(serialNumber: "A1B2C3", modelNumber: "ACME-R1")
    reader.apply(ReaderInfo(deviceInformation: information))
    #expect(reader.deviceInformation == information)
    reader.apply(ReaderInfo(batteryLevel: 0.5))
    #expect(reader.deviceInformation == information)
    #expect(reader.serialNumber == "STRM2-0001")
    #expect(!information.isEmpty && DeviceInformation().isEmpty)
  }

  @Test func aReaderEncodedBeforeTheFieldExistedStillDecodes() throws {
    let json = #"{"serialNumber":"STRM2-0001","deviceType":"stripeM2","simulated":false}"#
    let reader = try JSONDecoder().decode(Reader.self, from: Data(json.utf8))
    #expect(reader.deviceInformation == nil)
    var connected = reader
    connected.deviceInformation = DeviceInformation(firmwareRevision: "1.4.2")
    #expect(try JSONDecoder().decode(Reader.self, from: JSONEncoder().encode(connected)) == connected)
  }

  @Test func readerInfosCompareAndHashTheirDeviceInformationByValueThoughEachHoldsItsOwnBox() {
    let info = DeviceInformation(serialNumber: "STRM2-1", modelNumber: "M2", firmwareRevision: "1.4.2")
    let a = ReaderInfo(deviceSoftwareVersion: "2.01.00.17", deviceInformation: info)
    var b = ReaderInfo(deviceSoftwareVersion: "2.01.00.17")
    #expect(a != b)
    b.deviceInformation = DeviceInformation(serialNumber: "STRM2-1", modelNumber: "M2", firmwareRevision: "1.4.2")
    #expect(a == b && a.hashValue == b.hashValue)
    #expect(!a.sharesDeviceInformation(with: b), "built apart, held apart")
    let copy = a
    #expect(copy.sharesDeviceInformation(with: a) && copy.deviceInformation == info)
    b.deviceInformation?.hardwareRevision = "B"
    #expect(a != b && a.deviceInformation == info && b.deviceInformation?.hardwareRevision == "B")
    b.deviceInformation = nil
    #expect(b == ReaderInfo(deviceSoftwareVersion: "2.01.00.17") && b.sharesDeviceInformation(with: ReaderInfo()))
  }
}
