import Foundation
import Testing

/// `readerctl connect` then `readerctl reconnect`, each its own process, sharing a store file.
struct LinkCommandsTests {
  /// The serial numbers of the simulated world for `seed`, as `discover` lists them.
  private func serials(seed: Int) throws -> [String] {
    let result = try ReaderctlProcess.run(["discover", "--json", "--seed", "\(seed)", "--timeout", "3"])
    let lists = try ReaderctlProcess.jsonLines(result.stdout).compactMap { $0["readers"] as? [[String: Any]] }
    return try #require(lists.last).compactMap { $0["serialNumber"] as? String }
  }

  @Test func reconnectInANewProcessFindsTheReaderThatConnectSaved() throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("nested/last-reader.json").path
    let serial = try #require(try serials(seed: 11).last)

    let connect = try ReaderctlProcess.run([
      "connect", serial, "--location", "tml_42", "--store", store, "--seed", "11",
    ])
    #expect(connect.status == 0, "\(connect.stderr)")
    #expect(connect.lines.last?.contains("Connected to") == true)
    let saved = try String(contentsOfFile: store, encoding: .utf8)
    #expect(saved.contains("\"serialNumber\":\"\(serial)\"") && saved.contains("\"locationId\":\"tml_42\""))

    let reconnect = try ReaderctlProcess.run(["reconnect", "--store", store, "--seed", "11", "--json"])
    #expect(reconnect.status == 0, "\(reconnect.stderr)")
    let events = try ReaderctlProcess.jsonLines(reconnect.stdout)
    let names = events.compactMap { $0["event"] as? String }
    let order = ["didStartLaunchReconnect", "didFindSavedReader", "didConnect", "didFinishLaunchReconnect"]
    #expect(order.compactMap { names.firstIndex(of: $0) } == order.compactMap { names.firstIndex(of: $0) }.sorted())
    #expect(order.allSatisfy(names.contains))
    let connected = try #require(events.first { $0["event"] as? String == "didConnect" })
    #expect(connected["serialNumber"] as? String == serial)
    #expect((connected["reader"] as? [String: Any])?["locationId"] as? String == "tml_42")
  }

  @Test func reconnectInAWorldWithoutTheReaderGivesUpWithStatus69() throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("last-reader.json").path
    let serial = try #require(try serials(seed: 11).first)
    #expect(
      try ReaderctlProcess.run(["connect", serial, "--location", "tml_1", "--store", store, "--seed", "11"]).status == 0
    )
    let result = try ReaderctlProcess.run(["reconnect", "--store", store, "--seed", "12", "--timeout", "5"])
    #expect(result.status == 69)
    #expect(result.stderr.contains("readerNotFound"))
    #expect(try String(contentsOfFile: store, encoding: .utf8).contains(serial), "the record is kept")
  }

  @Test func reconnectWithNothingSavedExits66() throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let result = try ReaderctlProcess.run(["reconnect", "--store", directory.appendingPathComponent("none.json").path])
    #expect(result.status == 66)
    #expect(result.stderr.contains("no reader saved"))
  }

  @Test func aCorruptStoreIsReportedWithStatus65AndLeftUntouched() throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("last-reader.json")
    let garbage = Data("{\"serialNumber\": 12".utf8)
    try garbage.write(to: store)
    let result = try ReaderctlProcess.run(["reconnect", "--store", store.path])
    #expect(result.status == 65)
    #expect(result.stderr.contains("storeCorrupt"))
    #expect(try Data(contentsOf: store) == garbage)
  }

  @Test func connectToAReaderThatIsNotThereExits69AndSavesNothing() throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("last-reader.json").path
    let result = try ReaderctlProcess.run([
      "connect", "CHB20-00000", "--location", "tml_1", "--store", store, "--timeout", "4",
    ])
    #expect(result.status == 69)
    #expect(result.stderr.contains("CHB20-00000 not found"))
    #expect(!FileManager.default.fileExists(atPath: store))
  }

  @Test(arguments: [
    ["connect"], ["connect", "CHB20-1"], ["connect", "CHB20-1", "--location", ""],
    ["connect", "CHB20-1", "--location", "  "],
    ["connect", "A", "B", "--location", "x"], ["reconnect", "extra"], ["reconnect", "--store", ""],
    ["reconnect", "--timeout", "0"],
  ])
  func badArgumentsExit64(arguments: [String]) throws {
    let result = try ReaderctlProcess.run(arguments)
    #expect(result.status == 64)
    #expect(result.stderr.contains("usage: readerctl \(arguments[0])"))
  }
}
