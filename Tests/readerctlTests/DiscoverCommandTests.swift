import Foundation
import TestSupport
import Testing

/// `readerctl discover`, end to end through the built executable.
@Suite(.workTimeLimit(.seconds(60)))
struct DiscoverCommandTests {
  @Test func scanListsEveryReaderNearestFirstAndExitsZero() async throws {
    let result = try await ReaderctlProcess.run(["discover", "--seed", "5", "--readers", "4", "--timeout", "8"])
    #expect(result.status == 0, "\(result.stderr)")
    let rows = result.lines.filter { $0.contains(" dBm ") }
    #expect(rows.count == 4)
    let signals = rows.compactMap { row in
      row.split(separator: " ").firstIndex(of: "dBm").flatMap { index in
        index > 0 ? Int(row.split(separator: " ")[index - 1]) : nil
      }
    }
    #expect(signals.count == 4 && signals == signals.sorted(by: >), "nearest first: \(signals)")
    #expect(result.lines.last == "Found 4 readers in 00:00:08.0 of simulated time.")
  }

  @Test func chargingIsExplainedBelowTheTable() async throws {
    let result = try await ReaderctlProcess.run(["discover", "--seed", "1", "--timeout", "3"])
    let charging = result.lines.filter { $0.contains(" dBm ") && $0.contains(" % +") }
    #expect(!charging.isEmpty)
    #expect(result.lines.contains("  + charging"))
  }

  @Test func scanWithNothingAroundTimesOutWithStatus75OnStderr() async throws {
    let result = try await ReaderctlProcess.run(["discover", "--readers", "0", "--timeout", "5"])
    #expect(result.status == 75)
    #expect(
      result.stderr
        == "readerctl: discovery failed: bluetoothScanTimedOut: no reader was found before the scan timed out (timeout=5)\n"
    )
    #expect(!result.stdout.contains("failed"))
  }

  @Test(arguments: ["0.0005", "0.0000001", "0.001"])
  func aTinyPositiveTimeoutStillEnds(timeout: String) async throws {
    let result = try await ReaderctlProcess.run(["discover", "--timeout", timeout, "--json"], timeout: 20)
    #expect(result.status == 75)
    let last = try #require(try ReaderctlProcess.jsonLines(result.stdout).last)
    #expect(last["event"] as? String == "result")
    #expect(last["t"] as? Double == 0.001)
  }

  @Test func aScanWithoutALimitCannotRunUnpaced() async throws {
    let result = try await ReaderctlProcess.run(["discover", "--timeout", "0", "--speed", "0"], timeout: 20)
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix("readerctl: a scan without a limit"))
  }

  @Test func ctrlCStopsAnEndlessScanWithStatus130() async throws {
    let result = try await ReaderctlProcess.run(
      ["discover", "--timeout", "0", "--speed", "50"], timeout: 30, interruptAfter: "3 in view")
    #expect(result.status == 130, "\(result.stdout)")
    #expect(result.lines.last == "Stopped: 3 readers in view.")
    #expect(!result.stdout.contains("Found"))
    #expect(result.lines.filter { $0.contains(" dBm ") }.count == 3, "the table of what was in view")
  }

  @Test func ctrlCEndsAJSONScanWithACanceledOutcome() async throws {
    let result = try await ReaderctlProcess.run(
      ["discover", "--timeout", "0", "--speed", "50", "--json"], timeout: 30,
      interruptAfter: "didUpdateDiscoveredReaders")
    #expect(result.status == 130)
    let events = try ReaderctlProcess.jsonLines(result.stdout)
    #expect(events.dropLast().last?["event"] as? String == "didFinishDiscovery")
    let last = try #require(events.last)
    #expect(last["event"] as? String == "result")
    #expect(last["exitStatus"] as? Int == 130)
    #expect((last["error"] as? [String: Any])?["code"] as? String == "canceled")
  }

  @Test func jsonScanReportsStatusListsAndTheEnd() async throws {
    let result = try await ReaderctlProcess.run(["discover", "--json", "--seed", "3", "--timeout", "4"])
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
    #expect(events.dropLast().last?["event"] as? String == "didFinishDiscovery")
    let statuses = events.compactMap { $0["status"] as? String }
    #expect(statuses == ["discovering", "notConnected"])
    // The outcome comes last: what was found, under the API's names.
    let outcome = try #require(events.last)
    #expect(outcome["event"] as? String == "result" && outcome["t"] as? Double == 4)
    #expect(outcome["exitStatus"] as? Int == 0 && outcome["error"] is NSNull)
    let found = try #require(outcome["readers"] as? [[String: Any]])
    let lastList = try #require(lists.last?["readers"] as? [[String: Any]])
    #expect(found.map { $0["serialNumber"] as? String } == lastList.map { $0["serialNumber"] as? String })
  }

  @Test func proximityReportsTheNearestChipperTwiceThenItsDetails() async throws {
    let result = try await ReaderctlProcess.run(["discover", "--proximity", "--json", "--seed", "9", "--readers", "5"])
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
    // The CLI ends the discovery once it has the details; the outcome says it succeeded.
    let outcome = try #require(events.last)
    #expect(outcome["event"] as? String == "result")
    #expect(outcome["exitStatus"] as? Int == 0 && outcome["error"] is NSNull)
    #expect(
      (outcome["readers"] as? [[String: Any]])?.first?["serialNumber"] as? String == detailed["serialNumber"] as? String
    )
  }

  @Test func proximityWithoutAChipperFindsNothingWithStatus69OnStderr() async throws {
    let result = try await ReaderctlProcess.run(["discover", "--proximity", "--readers", "0", "--timeout", "3"])
    #expect(result.status == 69)
    #expect(result.lines == ["Hold a Chipper 2X close to the device… (simulated world, seed 1)"])
    #expect(
      result.stderr
        == "readerctl: discovery failed: readerNotFound: no Chipper 2X was held close to the device within 3 s\n")

    let json = try await ReaderctlProcess.run(["discover", "--proximity", "--readers", "0", "--timeout", "3", "--json"])
    let outcome = try #require(try ReaderctlProcess.jsonLines(json.stdout).last)
    #expect(outcome["exitStatus"] as? Int == 69)
    #expect((outcome["error"] as? [String: Any])?["code"] as? String == "readerNotFound")
  }

  @Test(arguments: [
    ["discover", "--timeout", "-1"], ["discover", "--timeout", "soon"], ["discover", "--readers", "65"],
    ["discover", "--seed"], ["discover", "--proximity=yes"], ["discover", "--colour"], ["discover", "now"],
    ["discover", "-t"], ["discover", "--", "--json"],
  ])
  func badFlagsPrintUsageAndExit64(arguments: [String]) async throws {
    let result = try await ReaderctlProcess.run(arguments)
    #expect(result.isUsageError(of: "discover"), "\(result.stderr)")
  }
}
