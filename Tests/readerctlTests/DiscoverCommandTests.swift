import Foundation
import Testing

/// `readerctl discover`, end to end through the built executable.
struct DiscoverCommandTests {
  @Test func scanListsEveryReaderNearestFirstAndExitsZero() throws {
    let result = try ReaderctlProcess.run(["discover", "--seed", "5", "--readers", "4", "--timeout", "8"])
    #expect(result.status == 0, "\(result.stderr)")
    let rows = result.lines.filter { $0.hasPrefix("  ") && !$0.contains("Serial") }
    #expect(rows.count == 4)
    let signals = rows.compactMap { row in
      row.split(separator: " ").firstIndex(of: "dBm").map { index in
        Int(row.split(separator: " ")[index - 1])!
      }
    }
    #expect(signals.count == 4 && signals == signals.sorted(by: >), "nearest first: \(signals)")
    #expect(result.lines.last == "Found 4 readers in 00:00:08.0 of simulated time.")
  }

  @Test func scanWithNothingAroundTimesOutWithStatus75() throws {
    let result = try ReaderctlProcess.run(["discover", "--readers", "0", "--timeout", "5"])
    #expect(result.status == 75)
    #expect(result.lines.last?.hasPrefix("Discovery failed: bluetoothScanTimedOut") == true)
  }

  @Test func jsonScanReportsStatusListsAndTheEnd() throws {
    let result = try ReaderctlProcess.run(["discover", "--json", "--seed", "3", "--timeout", "4"])
    #expect(result.status == 0)
    let events = try ReaderctlProcess.jsonLines(result.stdout)
    #expect(events.first?["event"] as? String == "didChangeConnectionStatus")
    #expect(events.first?["status"] as? String == "discovering")
    let lists = events.filter { $0["event"] as? String == "didUpdateDiscoveredReaders" }
    #expect(!lists.isEmpty)
    for list in lists {
      let readers = try #require(list["readers"] as? [[String: Any]])
      let strengths = readers.compactMap { $0["signalStrength"] as? Int }
      #expect(strengths == strengths.sorted(by: >))
      #expect(readers.allSatisfy { $0["simulated"] as? Bool == true && $0["serialNumber"] is String })
    }
    let finish = try #require(events.first { $0["event"] as? String == "didFinishDiscovery" })
    #expect(finish["error"] is NSNull)
    #expect(finish["t"] as? Double == 4)
    #expect(events.last?["event"] as? String == "didFinishDiscovery")
    let statuses = events.compactMap { $0["status"] as? String }
    #expect(statuses == ["discovering", "notConnected"])
  }

  @Test func proximityReportsTheNearestChipperTwiceThenItsDetails() throws {
    let result = try ReaderctlProcess.run(["discover", "--proximity", "--json", "--seed", "9", "--readers", "5"])
    #expect(result.status == 0)
    let events = try ReaderctlProcess.jsonLines(result.stdout)
    let lists = events.filter { $0["event"] as? String == "didUpdateDiscoveredReaders" }
      .compactMap { $0["readers"] as? [[String: Any]] }
    #expect(lists.count == 2)
    #expect(lists.allSatisfy { $0.count == 1 })
    let (bare, detailed) = (lists[0][0], lists[1][0])
    #expect(bare["serialNumber"] as? String == detailed["serialNumber"] as? String)
    #expect(bare["deviceType"] as? String == "chipper2X")
    #expect(bare["batteryLevel"] is NSNull && bare["deviceSoftwareVersion"] is NSNull)
    #expect(detailed["batteryLevel"] is Double && detailed["deviceSoftwareVersion"] is String)
    #expect(events.contains { $0["event"] as? String == "didRequestLEDFlash" })
  }

  @Test func proximityWithoutAChipperFindsNothingWithStatus69() throws {
    let result = try ReaderctlProcess.run(["discover", "--proximity", "--readers", "0", "--timeout", "3"])
    #expect(result.status == 69)
    #expect(result.lines.last == "No Chipper 2X was held close to the device.")
  }

  @Test(arguments: [
    ["discover", "--timeout", "-1"], ["discover", "--timeout", "soon"], ["discover", "--readers", "65"],
    ["discover", "--seed"], ["discover", "--proximity=yes"], ["discover", "--colour"], ["discover", "now"],
  ])
  func badFlagsPrintUsageAndExit64(arguments: [String]) throws {
    let result = try ReaderctlProcess.run(arguments)
    #expect(result.status == 64)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.hasPrefix("readerctl: "))
    #expect(result.stderr.contains("usage: readerctl discover"))
  }
}
