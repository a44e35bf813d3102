import Foundation
import Testing

/// `readerctl demo`, end to end through the built executable.
struct DemoCommandTests {
  @Test func demoTellsTheWholeLifecycleInOrderAndExitsZero() throws {
    let result = try ReaderctlProcess.run(["demo", "--seed", "1"])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    // The scenes, in the order the story tells them.
    let milestones = [
      "status: discovering", "is switched on", "in view:", "The merchant taps", "status: connecting",
      "status: connected", "out of Bluetooth range", "status: reconnecting", "The reader dropped (outOfRange)",
      "Reconnected to", "The app reboots the reader", "accepted the reboot", "The reader dropped (rebootRequested)",
      "Reconnected to", "A day passes", "The reader dropped (securityReboot)", "Reconnected to",
      "swipes the app away", "launched again", "Reconnected at launch", "disconnects the reader",
      "status: notConnected",
    ]
    var cursor = result.stdout.startIndex
    for milestone in milestones {
      let found = result.stdout.range(of: milestone, range: cursor..<result.stdout.endIndex)
      #expect(found != nil, "missing, or out of order: \(milestone)")
      if let found { cursor = found.upperBound }
    }
    #expect(result.stdout.hasPrefix("ReaderKit demo: a simulated Bluetooth world (seed 1)."))
    #expect(result.stdout.contains("Times are simulated"))
    // Piped, a run that worked says nothing on stderr, and nothing about wall time (a terminal shows it).
    #expect(result.stderr.isEmpty)
    #expect(!result.stdout.contains("wall time"))
  }

  @Test func simulatedTimesDoNotDependOnPacing() throws {
    let unpaced = try ReaderctlProcess.run(["demo", "--json", "--seed", "3"])
    let paced = try ReaderctlProcess.run(["demo", "--json", "--seed", "3", "--speed", "2000"])
    #expect(unpaced.status == 0 && paced.status == 0)
    #expect(!unpaced.stdout.isEmpty)
    #expect(paced.stdout == unpaced.stdout)
    // The narration too, after the line that states the pacing.
    let told = try ReaderctlProcess.run(["demo", "--seed", "3"])
    let toldPaced = try ReaderctlProcess.run(["demo", "--seed", "3", "--speed", "2000"])
    #expect(told.lines.count > 20)
    #expect(Array(toldPaced.lines.dropFirst(2)) == Array(told.lines.dropFirst(2)))
  }

  @Test func sameSeedPrintsTheSameStoryAndAnotherSeedAnotherWorld() throws {
    let first = try ReaderctlProcess.run(["demo", "--seed", "7"])
    let second = try ReaderctlProcess.run(["demo", "--seed", "7"])
    let other = try ReaderctlProcess.run(["demo", "--seed", "8"])
    #expect(first.status == 0 && second.status == 0 && other.status == 0)
    #expect(first.stdout == second.stdout)
    #expect(first.stdout != other.stdout)
  }

  @Test(arguments: [1, 2, 3, 42, 1234])
  func jsonDemoIsOneOrderedEventPerLineWithTheAPIsFieldNames(seed: Int) throws {
    let result = try ReaderctlProcess.run(["demo", "--json", "--seed", "\(seed)"])
    #expect(result.status == 0, "seed \(seed): \(result.stderr)")
    #expect(result.stderr.isEmpty)
    let events = try ReaderctlProcess.jsonLines(result.stdout)
    let times = events.compactMap { $0["t"] as? Double }
    #expect(times.count == events.count, "every event has a numeric t")
    #expect(times == times.sorted(), "simulated time never goes back")
    let names = events.compactMap { $0["event"] as? String }
    #expect(names.count == events.count)

    func first(_ name: String, where predicate: ([String: Any]) -> Bool = { _ in true }) -> Int? {
      events.firstIndex { $0["event"] as? String == name && predicate($0) }
    }
    let connected = try #require(first("didConnect"))
    let reader = try #require(events[connected]["reader"] as? [String: Any])
    #expect(reader["locationId"] as? String == "tml_demo_downtown")
    let serial = try #require(events[connected]["serialNumber"] as? String)
    for reason in ["outOfRange", "rebootRequested", "securityReboot"] {
      let start = try #require(first("didStartReconnect") { $0["reason"] as? String == reason }, "\(reason)")
      let success = try #require(
        events[start...].firstIndex { $0["event"] as? String == "readerDidSucceedReconnect" }, "\(reason)")
      #expect(events[success]["serialNumber"] as? String == serial)
    }
    #expect(first("readerDidFailReconnect") == nil)
    #expect(first("didFinishLaunchReconnect") { $0["error"] is NSNull } != nil)
    let last = try #require(events.last { $0["event"] as? String == "didDisconnect" })
    #expect(last["reason"] as? String == "disconnectRequested")
    let lastStatus = events.last { $0["event"] as? String == "didChangeConnectionStatus" }
    #expect(lastStatus?["status"] as? String == "notConnected")
    // The disconnect reason has one name in every event, and the outcome is the last line.
    #expect(!events.contains { $0["disconnectReason"] != nil })
    #expect(events.last?["event"] as? String == "result")
    #expect(events.last?["exitStatus"] as? Int == 0)
    #expect(events.last?["error"] is NSNull)
  }

  @Test func demoRejectsBadFlagsWithUsageAndStatus64() throws {
    for arguments in [["demo", "--nope"], ["demo", "--seed", "-1"], ["demo", "--readers", "1"], ["demo", "extra"]] {
      let result = try ReaderctlProcess.run(arguments)
      #expect(result.status == 64, "\(arguments)")
      #expect(result.stdout.isEmpty, "\(arguments)")
      #expect(result.stderr.contains("usage: readerctl demo"), "\(arguments)")
    }
  }
}
