import Foundation
import TestSupport
import Testing

/// `readerctl connect` then `readerctl reconnect`, each its own process, sharing a store file.
@Suite(.workTimeLimit(.seconds(60)))
struct LinkCommandsTests {
  /// The serial numbers of the simulated world for `seed`, as `discover` lists them.
  private func serials(seed: Int) async throws -> [String] {
    let result = try await ReaderctlProcess.run(["discover", "--json", "--seed", "\(seed)", "--timeout", "3"])
    let lists = try ReaderctlProcess.jsonLines(result.stdout).compactMap { $0["readers"] as? [[String: Any]] }
    return try #require(lists.last).compactMap { $0["serialNumber"] as? String }
  }

  @Test func reconnectInANewProcessFindsTheReaderThatConnectSaved() async throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("nested/last-reader.json").path
    let serial = try #require(try await serials(seed: 11).last)

    let connect = try await ReaderctlProcess.run([
      "connect", serial, "--location", "tml_42", "--store", store, "--seed", "11",
    ])
    #expect(connect.status == 0, "\(connect.stderr)")
    #expect(connect.lines.last?.contains("Connected to") == true)
    let saved = try String(contentsOfFile: store, encoding: .utf8)
    #expect(saved.contains("\"serialNumber\":\"\(serial)\"") && saved.contains("\"locationId\":\"tml_42\""))

    let reconnect = try await ReaderctlProcess.run(["reconnect", "--store", store, "--seed", "11", "--json"])
    #expect(reconnect.status == 0, "\(reconnect.stderr)")
    let events = try ReaderctlProcess.jsonLines(reconnect.stdout)
    let names = events.compactMap { $0["event"] as? String }
    let order = ["didStartLaunchReconnect", "didFindSavedReader", "didConnect", "didFinishLaunchReconnect"]
    #expect(order.compactMap { names.firstIndex(of: $0) } == order.compactMap { names.firstIndex(of: $0) }.sorted())
    #expect(order.allSatisfy(names.contains))
    let connected = try #require(events.first { $0["event"] as? String == "didConnect" })
    #expect(connected["serialNumber"] as? String == serial)
    #expect((connected["reader"] as? [String: Any])?["locationId"] as? String == "tml_42")
    let outcome = try #require(events.last)
    #expect(outcome["event"] as? String == "result" && outcome["exitStatus"] as? Int == 0)
    #expect((outcome["reader"] as? [String: Any])?["serialNumber"] as? String == serial)
  }

  @Test func reconnectInAWorldWithoutTheReaderGivesUpWithStatus69() async throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("last-reader.json").path
    let serial = try #require(try await serials(seed: 11).first)
    #expect(
      try await ReaderctlProcess.run(["connect", serial, "--location", "tml_1", "--store", store, "--seed", "11"])
        .status == 0
    )
    let result = try await ReaderctlProcess.run(["reconnect", "--store", store, "--seed", "12", "--timeout", "5"])
    #expect(result.status == 69)
    #expect(result.stderr.contains("readerNotFound"))
    #expect(try String(contentsOfFile: store, encoding: .utf8).contains(serial), "the record is kept")
  }

  @Test func reconnectWithNothingSavedExits66() async throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let result = try await ReaderctlProcess.run([
      "reconnect", "--store", directory.appendingPathComponent("none.json").path,
    ])
    #expect(result.status == 66)
    #expect(result.stderr.contains("no reader saved"))
  }

  @Test func aCorruptStoreIsReportedWithStatus65AndLeftUntouched() async throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("last-reader.json")
    let garbage = Data("{\"serialNumber\": 12".utf8)
    try garbage.write(to: store)
    let result = try await ReaderctlProcess.run(["reconnect", "--store", store.path])
    #expect(result.status == 65)
    #expect(result.stderr.contains("storeCorrupt"))
    #expect(try Data(contentsOf: store) == garbage)
  }

  @Test func connectToAReaderThatIsNotThereExits69AndSavesNothing() async throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("last-reader.json").path
    let result = try await ReaderctlProcess.run([
      "connect", "CHB20-00000", "--location", "tml_1", "--store", store, "--timeout", "4",
    ])
    #expect(result.status == 69)
    #expect(result.stderr.contains("CHB20-00000 not found"))
    #expect(!FileManager.default.fileExists(atPath: store))
  }

  @Test func aFailedConnectEndsItsJSONWithTheFailure() async throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("last-reader.json").path
    let result = try await ReaderctlProcess.run(["connect", "NOPE", "--location", "x", "--store", store, "--json"])
    #expect(result.status == 69)
    let outcome = try #require(try ReaderctlProcess.jsonLines(result.stdout).last)
    #expect(outcome["event"] as? String == "result")
    #expect(outcome["exitStatus"] as? Int == 69)
    let error = try #require(outcome["error"] as? [String: Any])
    #expect(error["code"] as? String == "readerNotFound")
    #expect((error["context"] as? [String: Any])?["serialNumber"] as? String == "NOPE")
  }

  @Test func aStoreThatCannotBeWrittenFailsBeforeTheScan() async throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let plain = directory.appendingPathComponent("plain-file")
    try Data("x".utf8).write(to: plain)
    var stores = [plain.appendingPathComponent("last-reader.json").path, directory.path]
    #if os(Linux)
      stores.append("/proc/version")
    #endif
    let serial = try #require(try await serials(seed: 1).first)
    for store in stores {
      let result = try await ReaderctlProcess.run(["connect", serial, "--location", "x", "--store", store, "--json"])
      #expect(result.status == 74, "\(store)")
      #expect(result.stderr.hasPrefix("readerctl: the store cannot be written: storeUnavailable"), "\(result.stderr)")
      let events = try ReaderctlProcess.jsonLines(result.stdout)
      #expect(events.map { $0["event"] as? String } == ["result"], "no scan, no connection: \(store)")
    }
    #expect(try Data(contentsOf: plain) == Data("x".utf8))
  }

  @Test(arguments: [
    (#"{"version":1,"serialNumber":"CHB20-1","locationId":""}"#, "the field locationId is empty"),
    ("null", "the record is not a JSON object"),
    (#"{"version":1,"serialNumber":"CHB20-1","locationId":"x","deviceType":"toaster"}"#, "names no known reader model"),
  ])
  func anInvalidStoreRecordIsCorruptWithStatus65AndOneClearReason(record: String, reason: String) async throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("last-reader.json")
    try Data(record.utf8).write(to: store)
    let result = try await ReaderctlProcess.run(["reconnect", "--store", store.path])
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stderr.hasPrefix("readerctl: reconnecting failed: storeCorrupt: the saved reader is corrupt: "))
    #expect(result.stderr.components(separatedBy: reason).count == 2, "said once: \(result.stderr)")
    #expect(!result.stderr.contains("Dictionary") && !result.stderr.contains("field  "))
    #expect(result.stderr.filter { $0 == "\n" }.count == 1)
  }

  @Test(arguments: [
    ["connect"], ["connect", "CHB20-1"], ["connect", "CHB20-1", "--location", ""], ["connect", "", "--location", "x"],
    ["connect", " ", "--location", "x"], ["connect", "-t", "--location", "x"],
    ["connect", "CHB20-1", "--location", "  "],
    ["connect", "A", "B", "--location", "x"], ["reconnect", "extra"], ["reconnect", "--store", ""],
    ["reconnect", "--timeout", "0"],
  ])
  func badArgumentsExit64(arguments: [String]) async throws {
    let result = try await ReaderctlProcess.run(arguments)
    #expect(result.isUsageError(of: arguments[0]), "nothing was looked for: \(result.stderr)")
  }

  @Test func aSavedRecordOfARealReaderIsNotLookedForAmongTheSimulatedOnes() async throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("last-reader.json")
    // A record an app wrote for real hardware, for a serial number the simulated world also has.
    try Data(
      #"{"deviceType":"chipper2X","locationId":"tml_1","serialNumber":"CHB20-30262","simulated":false,"version":1}"#
        .utf8
    ).write(to: store)
    let result = try await ReaderctlProcess.run(["reconnect", "--store", store.path, "--json"])
    #expect(result.status == 69, "\(result.stderr)")
    let outcome = try #require(try ReaderctlProcess.jsonLines(result.stdout).last)
    #expect((outcome["error"] as? [String: Any])?["code"] as? String == "bluetoothUnsupported")
    #expect(!result.stdout.contains("didConnect"))
  }
}
