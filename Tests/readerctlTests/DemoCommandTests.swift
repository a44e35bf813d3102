import Foundation
import TestSupport
import Testing

/// `readerctl demo`, end to end through the built executable.
@Suite(.workTimeLimit(.seconds(60)))
struct DemoCommandTests {
  @Test func demoTellsTheWholeLifecycleInOrderAndExitsZero() async throws {
    let result = try await ReaderctlProcess.run(["demo", "--seed", "1"])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    // The scenes, in the order the story tells them.
    let milestones = [
      "status: discovering", "is switched on", "in view:", "The merchant taps", "catalog requires 2.03.00.00",
      "status: connecting", "Installing 2.03.00.00 (config+keys; estimate: 1-2 minutes)", "25 % installed, ETA",
      "75 % installed, ETA", "Installed 2.03.00.00 in 1:00.", "status: connected", "(software 2.03.00.00",
      "out of Bluetooth range", "status: reconnecting", "The reader dropped (bluetoothSignalLost)", "Reconnected to",
      "The app reboots the reader", "accepted the reboot", "The reader dropped (rebootRequested)", "Reconnected to",
      "A day passes", "reports an optional update, 2.03.01.00", "The reader dropped (securityReboot)", "Reconnected to",
      "(installAvailableUpdate)", "Installing 2.03.01.00", "Installed 2.03.01.00",
      "runs 2.03.01.00 and stayed connected",
      "swipes the app away", "publishes 2.04.00.00", "launched again", "reports an optional update, 2.04.00.00",
      "Reconnected at launch", "disconnects the reader", "status: notConnected", "3 days and 8 hours pass",
      "2.04.00.00 becomes required", "opens the app in the morning", "status: connecting", "Installing 2.04.00.00",
      "Installed 2.04.00.00", "status: connected", "running 2.04.00.00", "disconnects the reader again",
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

  @Test func simulatedTimesDoNotDependOnPacing() async throws {
    let unpaced = try await ReaderctlProcess.run(["demo", "--json", "--seed", "3"])
    let paced = try await ReaderctlProcess.run(["demo", "--json", "--seed", "3", "--speed", "2000"])
    #expect(unpaced.status == 0 && paced.status == 0)
    #expect(!unpaced.stdout.isEmpty)
    #expect(paced.stdout == unpaced.stdout)
    // The narration too, after the line that states the pacing.
    let told = try await ReaderctlProcess.run(["demo", "--seed", "3"])
    let toldPaced = try await ReaderctlProcess.run(["demo", "--seed", "3", "--speed", "2000"])
    #expect(told.lines.count > 20)
    #expect(Array(toldPaced.lines.dropFirst(2)) == Array(told.lines.dropFirst(2)))
  }

  @Test func sameSeedPrintsTheSameStoryAndAnotherSeedAnotherWorld() async throws {
    let first = try await ReaderctlProcess.run(["demo", "--seed", "7"])
    let second = try await ReaderctlProcess.run(["demo", "--seed", "7"])
    let other = try await ReaderctlProcess.run(["demo", "--seed", "8"])
    #expect(first.status == 0 && second.status == 0 && other.status == 0)
    #expect(first.stdout == second.stdout)
    #expect(first.stdout != other.stdout)
  }

  @Test(arguments: [1, 2, 3, 42, 1234])
  func jsonDemoIsOneOrderedEventPerLineWithTheAPIsFieldNames(seed: Int) async throws {
    let result = try await ReaderctlProcess.run(["demo", "--json", "--seed", "\(seed)"])
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
    for reason in ["bluetoothSignalLost", "rebootRequested", "securityReboot"] {
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

  @Test(arguments: [1, 2, 42])
  func jsonDemoCarriesEveryInstallWithProgressFromZeroToExactlyOne(seed: Int) async throws {
    let result = try await ReaderctlProcess.run(["demo", "--json", "--seed", "\(seed)"])
    #expect(result.status == 0, "seed \(seed): \(result.stderr)")
    let events = try ReaderctlProcess.jsonLines(result.stdout)
    let names = events.map { $0["event"] as? String ?? "" }
    let version = { (event: [String: Any]) in (event["update"] as? [String: Any])?["deviceSoftwareVersion"] as? String }

    // Each install: one start, its progress, one finish; nothing outside them.
    var installs: [(version: String?, progress: [Double])] = []
    var open: (version: String?, progress: [Double])?
    for (index, event) in events.enumerated() {
      switch names[index] {
      case "didStartInstallingUpdate":
        #expect(open == nil, "seed \(seed): a start inside an install at line \(index + 1)")
        open = (version(event), [])
        let update = try #require(event["update"] as? [String: Any])
        for field in ["deviceSoftwareVersion", "durationEstimate", "components", "requiredAt", "isTestUpdate", "image"]
        {
          #expect(update[field] != nil, "seed \(seed): update.\(field)")
        }
        #expect(event["cancelable"] as? Bool == true)
      case "didReportReaderSoftwareUpdateProgress":
        #expect(open != nil, "seed \(seed): progress outside an install at line \(index + 1)")
        open?.progress.append(try #require(event["progress"] as? Double))
      case "didFinishInstallingUpdate":
        let started = try #require(open, "seed \(seed): a finish without a start")
        #expect(version(event) == started.version)
        #expect(event["error"] is NSNull, "seed \(seed): \(event)")
        installs.append(started)
        open = nil
      default: break
      }
    }
    #expect(open == nil)
    #expect(installs.map(\.version) == ["2.03.00.00", "2.03.01.00", "2.04.00.00"], "seed \(seed)")
    for install in installs {
      #expect(install.progress.first == 0, "seed \(seed): \(install)")
      #expect(install.progress.last == 1, "seed \(seed): \(install)")
      #expect(install.progress == install.progress.sorted(), "seed \(seed): monotonic \(install)")
      #expect(install.progress.dropLast().allSatisfy { $0 < 1 })
    }

    // The two optional updates are reported with their requiredAt; the required ones install while connecting.
    let reported = events.filter { $0["event"] as? String == "didReportAvailableUpdate" }
    #expect(reported.map(version) == ["2.03.01.00", "2.04.00.00"], "seed \(seed)")
    #expect(
      reported.map { ($0["update"] as? [String: Any])?["requiredAt"] as? String }
        == ["2026-01-31T00:00:00Z", "2026-01-05T00:00:00Z"])
    let starts = names.indices.filter { names[$0] == "didStartInstallingUpdate" }
    let connects = names.indices.filter { names[$0] == "didConnect" }
    #expect(connects.count == 3)
    #expect(starts.count == 3 && connects.count == 3 && starts[0] < connects[0] && starts[2] < connects[2])
    #expect(starts[2] > connects[1], "the update required at the last connection")
    let morning = try #require(events[connects[2]]["reader"] as? [String: Any])
    #expect(morning["deviceSoftwareVersion"] as? String == "2.04.00.00")
  }

  @Test func demoRejectsBadFlagsWithUsageAndStatus64() async throws {
    for arguments in [["demo", "--nope"], ["demo", "--seed", "-1"], ["demo", "--readers", "1"], ["demo", "extra"]] {
      let result = try await ReaderctlProcess.run(arguments)
      #expect(result.isUsageError(of: "demo"), "\(arguments): \(result.stderr)")
    }
  }
}

/// What the demo says about the time it skips is the time it skips.
@Suite(.workTimeLimit(.seconds(60)))
struct DemoWordingTests {
  /// `[1d 00:02:43.3]` or `[00:01:57.7]` at the start of `line`, in seconds.
  private func stamp(_ line: String) -> Double? {
    guard let match = line.firstMatch(of: /^\[(?:(\d+)d )?(\d\d):(\d\d):(\d\d\.\d)\]/) else { return nil }
    let days = match.1.flatMap { Double($0) } ?? 0
    guard let hours = Double(match.2), let minutes = Double(match.3), let seconds = Double(match.4) else { return nil }
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds
  }

  @Test(arguments: [1, 2, 5] as [UInt64])
  func theDaysThatPassAreTheTimeSkipped(seed: UInt64) async throws {
    let result = try await ReaderctlProcess.run(["demo", "--seed", "\(seed)"])
    #expect(result.status == 0)
    let lines = result.lines
    let index = try #require(lines.firstIndex { $0.contains(" pass (skipped) with the reader on its dock") })
    let words = try #require(lines[index].firstMatch(of: /\] (?:(\d+) days?)?(?: and )?(?:(\d+) hours?)? pass/))
    let said = (words.1.flatMap { Double($0) } ?? 0) * 24 + (words.2.flatMap { Double($0) } ?? 0)
    let skipped = try #require(stamp(lines[index + 1])) - (try #require(stamp(lines[index])))
    #expect(said == (skipped / 3600).rounded(), "\(lines[index]) then \(lines[index + 1])")
    #expect(!lines[index].contains("Four days"))
  }
}
