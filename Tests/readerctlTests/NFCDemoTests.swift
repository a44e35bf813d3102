import Foundation
import NFCKit
import TestSupport
import Testing

/// `readerctl demo nfc` and the NFC story of plain `readerctl demo`, end to end through the built executable.
@Suite(.workTimeLimit(.seconds(60)))
struct NFCDemoTests {
  /// The names `NFCReaderEvent` gives its events.
  static let eventNames: Set<String> = [
    "didQueue", "didBecomeActive", "didDetectNDEFs", "didDetectTags", "didFailToReadNDEF", "didInvalidateWithError",
  ]

  /// Expects `milestones` in `text`, in that order.
  static func expectInOrder(
    _ milestones: [String], in text: String, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    var cursor = text.startIndex
    for milestone in milestones {
      let found = text.range(of: milestone, range: cursor..<text.endIndex)
      #expect(found != nil, "missing, or out of order: \(milestone)", sourceLocation: sourceLocation)
      if let found { cursor = found.upperBound }
    }
  }

  @Test func demoNFCTellsTheNFCStoryInOrderAndExitsZero() async throws {
    let result = try await ReaderctlProcess.run(["demo", "nfc", "--seed", "1"])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.stderr.isEmpty)
    #expect(result.stdout.hasPrefix("ReaderKit demo: a simulated NFC device (seed 1).\nTimes are simulated"))
    #expect(!result.stdout.contains("Bluetooth"))
    Self.expectInOrder(
      [
        // A session reads a tag, and shows what it read.
        "readingAvailable (true)", "The sheet shows “Hold your badge near the top of the phone.”",
        "Session 1 is active", "Ada holds her badge",
        "Session 1 read badge: Text “Ada Lovelace, Engines” (en); URI https://example.com/staff/ada",
        "The sheet closes.", "Session 1 ended: readerSessionInvalidationErrorFirstNDEFTagRead (204)",
        // A second session waits in line and becomes active when the first ends.
        "Session 2 is active", "Session 3 waits in line (position 1)", "Session 2 read badge",
        "Session 2 ended: readerSessionInvalidationErrorFirstNDEFTagRead (204)",
        "The sheet shows “Hold the phone near the room's tag.”", "Session 3 is active", "Session 3 read room-4-tag",
        // A busy system is retried once.
        "A wallet app holds the NFC radio", "Session 4 ended: readerSessionInvalidationErrorSystemIsBusy (203)",
        "The wallet app lets go", "Session 5 is active", "Session 5 read parcel-1",
        "Session 5 ended: readerSessionInvalidationErrorFirstNDEFTagRead (204)", "read on the retry",
        // A long round survives two time limits through the read loop.
        "every session 60 s after its begin()", "Session 6 is active", "Session 6 read parcel-2",
        "no tag comes near", "Session 6 ended: readerSessionInvalidationErrorSessionTimeout (201)",
        "Session 7 is active", "Session 7 read parcel-5",
        "Session 7 ended: readerSessionInvalidationErrorSessionTimeout (201)", "Session 8 is active",
        "Session 8 read parcel-10", "Session 8 ended: readerSessionInvalidationErrorUserCanceled (200), the app",
        "9 parcels read in 3 sessions: the round outlived 2 time limits.",
        // The sheet: alertMessage while the session runs, then invalidate(errorMessage:).
        "Session 9 is active", "Session 9 detected shelf-label.",
        "readNDEF failed: readerTransceiveErrorTagResponseError (102): malformed NDEF at byte 2",
        "The sheet now says “That label could not be read. Hold the phone flat against it.”",
        "Session 9 detected shelf-label.", "invalidate(errorMessage:)",
        "The sheet closes showing “This label is damaged. Please replace it.”",
        "Session 9 ended: readerSessionInvalidationErrorUserCanceled (200), the app invalidated it.",
        // A user cancel ends quietly.
        "Session 10 is active", "The user taps Cancel",
        "Session 10 ended: readerSessionInvalidationErrorUserCanceled (200), the user tapped Cancel.",
        "stops quietly", "That is a reader session's whole life",
      ], in: result.stdout)
    #expect(!result.stdout.contains("Session 11"))
  }

  @Test func plainDemoTellsTheBluetoothStoryThenTheNFCStoryOnOneClock() async throws {
    let result = try await ReaderctlProcess.run(["demo", "--seed", "2"])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.stdout.hasPrefix("ReaderKit demo: a simulated Bluetooth world (seed 2)."))
    Self.expectInOrder(
      [
        "status: connected", "Reconnected at launch", "status: notConnected", "That is the whole life of a reader",
        "Now NFC: reader sessions on a simulated NFC device, on the same virtual clock.", "Session 1 read badge",
        "Session 3 waits in line", "SystemIsBusy (203)", "SessionTimeout (201)", "SessionTimeout (201)",
        "This label is damaged", "the user tapped Cancel", "That is a reader session's whole life",
      ], in: result.stdout)
    // The NFC story goes on from the Bluetooth story's simulated time, a day and more in, instead of
    // starting again from zero.
    let lastBluetoothLine = try #require(result.lines.first { $0.contains("That is the whole life of a reader") })
    let firstNFCLine = try #require(result.lines.first { $0.contains("The app checks readingAvailable") })
    #expect(lastBluetoothLine.hasPrefix("[") && !lastBluetoothLine.hasPrefix("[00:"))
    #expect(firstNFCLine.prefix { $0 != "]" } == lastBluetoothLine.prefix { $0 != "]" }, "\(firstNFCLine)")

    let json = try await ReaderctlProcess.run(["demo", "--json", "--seed", "2"])
    #expect(json.status == 0)
    let events = try ReaderctlProcess.jsonLines(json.stdout)
    let lastBluetooth = try #require(events.lastIndex { $0["event"] as? String == "didDisconnect" })
    let firstNFC = try #require(events.firstIndex { $0["session"] != nil })
    #expect(lastBluetooth < firstNFC)
    #expect(events[firstNFC...].dropLast().allSatisfy { $0["session"] is Int }, "no Bluetooth event among NFC's")
    let times = events.compactMap { $0["t"] as? Double }
    #expect(times.count == events.count && times == times.sorted())
    #expect(events.last?["event"] as? String == "result" && events.last?["exitStatus"] as? Int == 0)
  }

  @Test(arguments: [1, 2, 7, 42])
  func jsonNFCDemoUsesTheAPIsEventNamesAndFields(seed: Int) async throws {
    let result = try await ReaderctlProcess.run(["demo", "nfc", "--json", "--seed", "\(seed)"])
    #expect(result.status == 0, "seed \(seed): \(result.stderr)")
    #expect(result.stderr.isEmpty)
    var events = try ReaderctlProcess.jsonLines(result.stdout)
    let last = events.popLast()
    let outcome = try #require(last)
    #expect(outcome["event"] as? String == "result" && outcome["exitStatus"] as? Int == 0 && outcome["error"] is NSNull)

    let names = events.compactMap { $0["event"] as? String }
    #expect(names.count == events.count && Set(names).isSubset(of: Self.eventNames), "\(Set(names))")
    #expect(Set(names) == Self.eventNames.subtracting(["didFailToReadNDEF"]), "every kind of event the story has")
    #expect(events.allSatisfy { $0["session"] is Int && $0["t"] is Double }, "seed \(seed)")
    let times = events.compactMap { $0["t"] as? Double }
    #expect(times == times.sorted())

    let queued = try #require(events.first { $0["event"] as? String == "didQueue" })
    #expect(queued["position"] as? Int == 1 && queued["session"] as? Int == 3)

    let read = try #require(events.first { $0["event"] as? String == "didDetectNDEFs" })
    #expect(read["tag"] as? String == "badge")
    let messages = try #require(read["messages"] as? [[String: Any]])
    let records = try #require(messages.first?["records"] as? [[String: Any]])
    #expect(records.first?["text"] as? String == "Ada Lovelace, Engines")
    #expect(records.last?["uri"] as? String == "https://example.com/staff/ada")

    let detected = try #require(events.first { $0["event"] as? String == "didDetectTags" })
    #expect((detected["tags"] as? [String])?.count == 1 && detected["tag"] as? String == "shelf-label")

    // Every end, with Core NFC's name for its code and the raw value beside it.
    let ends = events.filter { $0["event"] as? String == "didInvalidateWithError" }
    let errors = try ends.map { try #require($0["error"] as? [String: Any]) }
    let codes = errors.compactMap { $0["errorCode"] as? Int }
    #expect(codes == [204, 204, 204, 203, 204, 201, 201, 200, 200, 200], "seed \(seed)")
    let named = Dictionary(
      errors.map { ($0["errorCode"] as? Int ?? 0, $0["code"] as? String ?? "") },
      uniquingKeysWith: { first, _ in first })
    #expect(named[201] == "readerSessionInvalidationErrorSessionTimeout")
    #expect(named[203] == "readerSessionInvalidationErrorSystemIsBusy")
    #expect(named[204] == "readerSessionInvalidationErrorFirstNDEFTagRead")
    let closers = errors.filter { $0["errorCode"] as? Int == 200 }.map { ($0["context"] as? [String: String])?["by"] }
    #expect(closers == ["app", "app", "user"])
    #expect(errors.allSatisfy { $0["message"] is String && $0["ndefError"] is NSNull })
    // The two time limits are a time limit apart, after the session's begin.
    let timeouts = ends.filter { ($0["error"] as? [String: Any])?["errorCode"] as? Int == 201 }
    let timeoutTimes = timeouts.compactMap { $0["t"] as? Double }
    #expect(timeoutTimes.count == 2 && abs(timeoutTimes[1] - timeoutTimes[0] - 60) < 0.5, "\(timeoutTimes)")
  }

  @Test func theNFCStoryIsTheSameForASeedAtAnyPaceAndDiffersBetweenSeeds() async throws {
    let unpaced = try await ReaderctlProcess.run(["demo", "nfc", "--json", "--seed", "5"])
    let paced = try await ReaderctlProcess.run(["demo", "nfc", "--json", "--seed", "5", "--speed", "1000"])
    let other = try await ReaderctlProcess.run(["demo", "nfc", "--json", "--seed", "6"])
    #expect(unpaced.status == 0 && paced.status == 0 && other.status == 0)
    #expect(!unpaced.stdout.isEmpty)
    #expect(paced.stdout == unpaced.stdout)
    #expect(other.stdout != unpaced.stdout, "another seed draws other detection times")
    let told = try await ReaderctlProcess.run(["demo", "nfc", "--seed", "5"])
    let toldPaced = try await ReaderctlProcess.run(["demo", "nfc", "--seed", "5", "--speed", "1000"])
    #expect(told.lines.count > 40)
    #expect(Array(toldPaced.lines.dropFirst(2)) == Array(told.lines.dropFirst(2)))
  }

  @Test func demoTakesOnlyNFCAsAStory() async throws {
    for arguments in [["demo", "bluetooth"], ["demo", "nfc", "nfc"], ["demo", "nfc", "--bogus"]] {
      let result = try await ReaderctlProcess.run(arguments)
      #expect(result.isUsageError(of: "demo"), "\(arguments): \(result.stderr)")
    }
    let help = try await ReaderctlProcess.run(["demo", "nfc", "--help"])
    #expect(help.status == 0 && help.stdout.contains("  nfc                     tell the NFC story alone"))
  }
}

/// The NFC commands on a (pseudo-)terminal: paced, plain lines, Ctrl-C.
@Suite(
  .workTimeLimit(.seconds(60)),
  .enabled(if: PseudoTerminal.enabled, "python3 is not on the PATH: the pseudo-terminal tests cannot run"))
struct NFCTerminalTests {
  @Test func theNFCDemoOnADumbTerminalWritesNoCursorCodesAndSaysHowLongItTook() async throws {
    let run = try await PseudoTerminal.run(
      ["demo", "nfc", "--speed", "200"], size: PseudoTerminal.Size(rows: 24, columns: 100),
      environment: ["TERM": "dumb"], timeout: 60)
    #expect(run.status == 0)
    #expect(!run.output.contains(0x1B), "\(run.text.debugDescription)")
    let screen = try run.screen()
    #expect(screen.history.contains { $0.contains("Session 10 ended") })
    #expect(screen.history.contains { $0.contains("of simulated time took") && $0.contains("s of wall time") })
  }

  @Test func ctrlCStopsAContinuousScanAndExits130() async throws {
    let tags = try NFCCommandTests.Tags()
    let files = try (1...20).map { try tags.file("t\($0).ndef", NDEFMessage(try .text("tag \($0)"))) }
    let run = try await PseudoTerminal.run(
      ["nfc", "scan", "--continuous", "--speed", "1", "--tags"] + files,
      size: PseudoTerminal.Size(rows: 24, columns: 200), steps: [.wait("Session 1 read "), .send("\u{3}")])
    #expect(run.status == 130)
    let screen = try run.screen()
    #expect(screen.history.contains { $0.contains("ended: readerSessionInvalidationErrorUserCanceled (200)") })
    #expect(screen.history.contains { $0.hasPrefix("readerctl: interrupted: ") }, "\(screen.history)")
    #expect(!screen.history.contains { $0.contains("t20.ndef") }, "it stopped before the last tag")
  }
}
