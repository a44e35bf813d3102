import Foundation
import Testing

@testable import ReaderCore
@testable import ReaderKit

/// Bytes written by earlier releases (the saved record by `FileReaderStore`, a recording by
/// `RecordingTransport`, both through `JSONEncoder`) still read through `JSONReader`.
@Suite struct EarlierWrittenJSONTests {
  static let recording = [
    #"{"header":{"arguments":["connect","STRM2-0001","--bluez","--location","tml_1"],"format":"readerkit-transport-record/1","isPoweredOn":true,"notes":{"store":"/tmp/s.json"},"startedAt":818063533.9049853},"record":"header"}"#,
    #"{"imageSHA256":"cca9e4d0ea196306032122539800ae06458328f63820f73952d016ad975e1300","imageSize":20072,"name":"installUpdate","record":"command","serialNumber":"STRM2-0001","t":"1.0","update":{"components":["firmware"],"deviceSoftwareVersion":"1.1.0","durationEstimate":"estimate1To2Minutes","isTestUpdate":false,"requiredAt":830000000}}"#,
    #"{"name":"updateProgress","progress":0.31,"record":"event","serialNumber":"STRM2-0001","t":"1.5"}"#,
    #"{"name":"updateProgress","progress":"nan","record":"event","serialNumber":"STRM2-0001","t":"1.6"}"#,
    #"{"name":"updateFinished","record":"event","serialNumber":"STRM2-0001","t":"2.8"}"#,
    #"{"error":{"code":"readerSoftwareUpdateFailedReaderError","context":{"step":"confirm"},"message":"refused","cause":{"kind":"smp","value":32,"group":1}},"name":"updateFinished","record":"event","serialNumber":"STRM2-0001","t":"3.0"}"#,
  ]

  @Test func aRecordingWrittenEarlierReadsWhole() throws {
    let (header, records) = try TransportRecord.read(Data(Self.recording.joined(separator: "\n").utf8))
    #expect(header.arguments == ["connect", "STRM2-0001", "--bluez", "--location", "tml_1"])
    #expect(header.startedAt == Date(timeIntervalSinceReferenceDate: 818_063_533.904_985_3))
    #expect(header.notes == ["store": "/tmp/s.json"])
    #expect(records.count == 5)
    guard case .command(_, .installUpdate(_, let update, let size, _)) = records[0] else {
      Issue.record("not an install: \(records[0])")
      return
    }
    #expect(size == 20072 && update.deviceSoftwareVersion == "1.1.0" && update.isTestUpdate == false)
    #expect(update.components == .firmware)
    #expect(update.requiredAt == Date(timeIntervalSinceReferenceDate: 830_000_000))
    guard case .event(_, .link(.updateProgress(_, let progress))) = records[2] else {
      Issue.record("not a progress: \(records[2])")
      return
    }
    #expect(progress.isNaN)
    guard case .event(_, .link(.updateFinished(_, let error))) = records[4] else {
      Issue.record("not a finish: \(records[4])")
      return
    }
    #expect(error?.cause == .smp(rc: 32, group: 1) && error?.context == ["step": "confirm"])
    // Written again, each line reads back the same.
    for record in records { #expect(try TransportRecord(line: record.line) == record || record.line.contains("nan")) }
  }

  @Test func aSavedRecordWrittenEarlierLoads() throws {
    let written = [
      #"{"deviceType":"stripeM2","locationId":"tml_1","serialNumber":"STRM2-0001","version":1}"# + "\n",
      #"{"locationId":"tml_9","serialNumber":"STRM2-9","simulated":true,"version":1}"#,
    ]
    guard case .record(let first) = SavedReaderRecord.classify(Array(written[0].utf8), context: [:]),
      case .record(let second) = SavedReaderRecord.classify(Array(written[1].utf8), context: [:])
    else {
      Issue.record("an earlier record does not load")
      return
    }
    #expect(first == SavedReader(serialNumber: "STRM2-0001", locationId: "tml_1", deviceType: .stripeM2))
    #expect(second.simulated && second.serialNumber == "STRM2-9" && second.deviceType == nil)
    #expect(try SavedReaderRecord.encode(first, path: "x") == Array(written[0].utf8))
  }
}
