import BlueZ
import DBus
import Foundation
import ReaderKit
import Testing

/// The Device Information Service of a reader connected through `BlueZCentral`, against the D-Bus peer:
/// every string is read over GATT and reported on the reader, and none of them ever fails the connect.
@Suite(.timeLimit(.minutes(1)), .enabled(if: BlueZPeer.enabled, BlueZPeer.skipNote))
struct BlueZDeviceInformationPeerTests {
  static let address = "C0:00:00:00:00:01"

  @Test func theReadersDeviceInformationIsReadOverGATTAndItsAdvertisedNameStaysItsSerialNumber() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    try peer.addReader(
      address: Self.address, name: "STRM2-0001",
      options: [
        "serial": .string("A1B2C3D4"), "model": .string("ACME-R1"), "firmware": .string("1.4.2"),
        "hardware": .string("rev B"), "manufacturer": .string("Acme Inc."),
      ])
    _ = try await run.connect("STRM2-0001")
    let reader = try #require(run.terminal.connectedReader)
    #expect(reader.serialNumber == "STRM2-0001", "discovery's identity, for reconnection and the saved reader")
    #expect(
      reader.deviceInformation
        == DeviceInformation(
          serialNumber: "A1B2C3D4", modelNumber: "ACME-R1", firmwareRevision: "1.4.2", hardwareRevision: "rev B",
          manufacturerName: "Acme Inc."))
    #expect(reader.deviceSoftwareVersion == "1.4.2")
  }

  @Test func junkAndRefusedReadsLeaveThoseStringsUnknownAndTheReaderConnects() async throws {
    let peer = try await BlueZPeer.start()
    let run = try TerminalRun(peer: peer)
    defer { run.stop() }
    let junk: [(String, [UInt8])] = [
      ("serial", [0xFF, 0xFE, 0x41]), ("hardware", Array(String(repeating: "x", count: 65).utf8)),
    ]
    try peer.addReader(
      address: Self.address, name: "STRM2-0001",
      options: [
        "manufacturer": .string("Acme Inc."),
        "dis_raw": .array(
          .dictEntry(key: .string, value: .array(.byte)), junk.map { .dictEntry(.string($0.0), .bytes($0.1)) }),
        "dis_fail": .stringArray(["model", "firmware"]),
      ])
    _ = try await run.connect("STRM2-0001")
    let reader = try #require(run.terminal.connectedReader)
    #expect(reader.deviceInformation == DeviceInformation(manufacturerName: "Acme Inc."))
    #expect(reader.deviceSoftwareVersion == nil)
    #expect(reader.deviceType == .stripeM2)
  }
}
