import Foundation
import NFCKit
import TestSupport
import Testing

@testable import readerctl

/// `readerctl nfc scan` and `readerctl nfc write`, end to end through the built executable, with tag
/// files written by the tests.
@Suite(.workTimeLimit(.seconds(60)))
struct NFCCommandTests {
  /// Tag files in a fresh directory, removed when the value goes away.
  final class Tags {
    let directory: URL

    init() throws { directory = try ReaderctlProcess.temporaryDirectory() }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Writes `bytes` to a file named `name`; returns its path.
    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
      let url = directory.appendingPathComponent(name)
      try Data(bytes).write(to: url)
      return url.path
    }

    /// A tag file holding `message` as `ndef encode` writes it.
    func file(_ name: String, _ message: NDEFMessage) throws -> String { try file(name, message.encoded()) }
  }

  static var hello: NDEFMessage { fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .text("hello")) } }
  static var poster: NDEFMessage {
    fixture(or: NDEFMessage(.empty)) {
      NDEFMessage(try .uri("https://example.com/poster"), try .text("Poster", languageCode: "de"))
    }
  }
  /// A Text record whose PAYLOAD_LENGTH (8) points past the end: malformed at byte 2.
  static let malformed: [UInt8] = [0xD1, 0x01, 0x08, 0x54, 0x02, 0x65, 0x6E, 0x68, 0x69]

  /// `readerctl ndef decode FILE`'s line for the file.
  static func decoded(_ path: String) async throws -> String {
    let result = try await ReaderctlProcess.run(["ndef", "decode", path])
    #expect(result.status == 0)
    return String(result.stdout.dropLast())
  }

  /// The events of a `--json` run, and its outcome line.
  static func json(_ result: ReaderctlProcess.Result) throws -> (events: [[String: Any]], outcome: [String: Any]) {
    var events = try ReaderctlProcess.jsonLines(result.stdout)
    let last = events.popLast()
    let outcome = try #require(last)
    #expect(outcome["event"] as? String == "result")
    #expect(outcome["exitStatus"] as? Int == Int(result.status))
    return (events, outcome)
  }

  static func named(_ name: String, in events: [[String: Any]]) -> [[String: Any]] {
    events.filter { $0["event"] as? String == name }
  }

  // MARK: scan

  @Test func scanReadsTheFirstTagAndPrintsItAsNDEFDecodeDoes() async throws {
    let tags = try Tags()
    let hello = try tags.file("hello.ndef", Self.hello)
    let poster = try tags.file("poster.ndef", Self.poster)
    let result = try await ReaderctlProcess.run(["nfc", "scan", "--tags", hello, poster])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.isEmpty)
    let read = result.lines.filter { $0.contains(" read ") }
    #expect(read.count == 1, "without --continuous the session ends at the first read: \(read)")
    #expect(read.first?.hasSuffix("Session 1 read \(hello): \(try await Self.decoded(hello))") == true, "\(read)")
    #expect(result.stdout.contains("Session 1 ended: readerSessionInvalidationErrorFirstNDEFTagRead (204)"))
    #expect(!result.stdout.contains(poster))
    #expect(result.lines.last == "Read 1 message from 1 tag in 00:00:00.7 of simulated time, in 1 session.")
  }

  @Test func scanWithContinuousReadsEveryTagInOrderThroughTheReadLoop() async throws {
    let tags = try Tags()
    let files = [
      try tags.file("a.ndef", Self.hello), try tags.file("b.ndef", Self.poster),
      try tags.file("c.ndef", NDEFMessage(try .uri("tel:+41"))),
    ]
    let result = try await ReaderctlProcess.run(["nfc", "scan", "--continuous", "--json", "--tags"] + files)
    #expect(result.status == 0, "\(result.stderr)")
    let (events, outcome) = try Self.json(result)
    let reads = Self.named("didDetectNDEFs", in: events)
    #expect(reads.compactMap { $0["tag"] as? String } == files)
    for (read, file) in zip(reads, files) {
      let messages = try #require(read["messages"] as? [Any])
      let rendered = String(
        decoding: try JSONSerialization.data(withJSONObject: messages[0], options: .sortedKeys), as: UTF8.self)
      let expected = try JSONSerialization.jsonObject(with: Data(try await Self.decoded(file).utf8))
      let expectedText = String(
        decoding: try JSONSerialization.data(withJSONObject: expected, options: .sortedKeys), as: UTF8.self)
      #expect(rendered == expectedText, "\(file)")
    }
    #expect((outcome["messages"] as? [Any])?.count == 3)
    // Reading stops at the time limit after the last tag, without beginning another session.
    let ends = Self.named("didInvalidateWithError", in: events)
    #expect(ends.count == 1)
    #expect((ends.first?["error"] as? [String: Any])?["errorCode"] as? Int == 201)
    #expect(Self.named("didBecomeActive", in: events).count == 1)
  }

  @Test func aLongContinuousScanOutlivesTheSessionTimeLimit() async throws {
    let tags = try Tags()
    let files = try (1...40).map { try tags.file("parcel-\($0).ndef", NDEFMessage(try .text("parcel \($0)"))) }
    let result = try await ReaderctlProcess.run(["nfc", "scan", "--continuous", "--json", "--tags"] + files)
    #expect(result.status == 0, "\(result.stderr)")
    let (events, _) = try Self.json(result)
    let read = Set(Self.named("didDetectNDEFs", in: events).compactMap { $0["tag"] as? String })
    #expect(read == Set(files), "every tag read, \(files.count - read.count) missing")
    let timeouts = Self.named("didInvalidateWithError", in: events).filter {
      ($0["error"] as? [String: Any])?["errorCode"] as? Int == 201
    }
    #expect(timeouts.count >= 2, "more than one session: the read loop began a new one after a time limit")
    #expect(Set(Self.named("didBecomeActive", in: events).compactMap { $0["session"] as? Int }).count == timeouts.count)
  }

  @Test func aMalformedTagIsReportedWithItsByteOffsetAndNothingReadExits65() async throws {
    let tags = try Tags()
    let bad = try tags.file("bad.ndef", Self.malformed)
    let result = try await ReaderctlProcess.run(["nfc", "scan", "--tags", bad])
    #expect(result.status == 65)
    #expect(
      result.stderr.hasPrefix(
        "readerctl: \(bad): readerTransceiveErrorTagResponseError (102): malformed NDEF at byte 2: expected"))
    #expect(result.stderr.contains("no tag gave a message"))
    #expect(result.stderr.contains("offset=2"))

    let json = try await ReaderctlProcess.run(["nfc", "scan", "--json", "--tags", bad])
    #expect(json.status == 65)
    let (events, outcome) = try Self.json(json)
    let failure = try #require(Self.named("didFailToReadNDEF", in: events).first)
    #expect(failure["tag"] as? String == bad)
    let error = try #require(failure["error"] as? [String: Any])
    #expect(error["code"] as? String == "readerTransceiveErrorTagResponseError" && error["errorCode"] as? Int == 102)
    let ndefError = try #require(error["ndefError"] as? [String: Any])
    #expect(ndefError["offset"] as? Int == 2 && ndefError["code"] as? String == "lengthOutOfBounds")
    #expect(((outcome["error"] as? [String: Any])?["ndefError"] as? [String: Any])?["offset"] as? Int == 2)
  }

  @Test func readingGoesOnAfterAMalformedTag() async throws {
    let tags = try Tags()
    let bad = try tags.file("bad.ndef", Self.malformed)
    let blank = try tags.file("blank.ndef", [])
    let hello = try tags.file("hello.ndef", Self.hello)
    let once = try await ReaderctlProcess.run(["nfc", "scan", "--tags", bad, hello])
    #expect(once.status == 0, "a message was read after the malformed tag")
    #expect(once.stderr.contains("\(bad): readerTransceiveErrorTagResponseError (102): malformed NDEF at byte 2"))
    #expect(once.stdout.contains("read \(hello): "))

    // With --continuous every tag counts: one without a message makes the run a data error.
    let continuous = try await ReaderctlProcess.run(["nfc", "scan", "--continuous", "--tags", hello, bad, blank])
    #expect(continuous.status == 65)
    #expect(continuous.stdout.contains("read \(hello): "))
    #expect(continuous.stderr.contains("\(blank): ndefReaderSessionErrorZeroLengthMessage (403)"))
    #expect(continuous.stderr.contains("2 of 3 tags gave no message"))
  }

  @Test func aScanWithoutTagsEndsAtTheSystemsTimeLimitAndExits75() async throws {
    for arguments in [["nfc", "scan", "--json"], ["nfc", "scan", "--continuous", "--json"]] {
      let result = try await ReaderctlProcess.run(arguments)
      #expect(result.status == 75, "\(arguments)")
      #expect(result.stderr.contains("no tag was read: readerSessionInvalidationErrorSessionTimeout (201)"))
      let (events, outcome) = try Self.json(result)
      #expect(events.compactMap { $0["event"] as? String } == ["didBecomeActive", "didInvalidateWithError"])
      #expect(events.last?["t"] as? Double == 60)
      #expect((outcome["error"] as? [String: Any])?["errorCode"] as? Int == 201)
      #expect((outcome["messages"] as? [Any])?.isEmpty == true)
    }
  }

  @Test func aScanIsTheSameForASeedAtAnyPace() async throws {
    let tags = try Tags()
    let files = [try tags.file("a.ndef", Self.hello), try tags.file("b.ndef", Self.malformed)]
    let arguments = ["nfc", "scan", "--continuous", "--tags"] + files
    let first = try await ReaderctlProcess.run(arguments + ["--seed", "9"])
    let again = try await ReaderctlProcess.run(arguments + ["--seed", "9"])
    let paced = try await ReaderctlProcess.run(arguments + ["--seed", "9", "--speed", "500"])
    #expect(first.stdout == again.stdout && first.stderr == again.stderr)
    #expect(Array(paced.lines.dropFirst()) == Array(first.lines.dropFirst()))
    let json = try await ReaderctlProcess.run(arguments + ["--seed", "9", "--json"])
    #expect(
      json.stdout == (try await ReaderctlProcess.run(arguments + ["--seed", "9", "--json", "--speed", "500"])).stdout)
  }

  @Test func scanReadsHexTagFilesWithHex() async throws {
    let tags = try Tags()
    let hex = try tags.file("hello.hex", Array((NDEFBytes(Self.hello.encoded()).hex + "\n").utf8))
    let result = try await ReaderctlProcess.run(["nfc", "scan", "--hex", "--tags", hex])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains(#""text":"hello""#))
    let notHex = try tags.file("x.hex", Array("zz".utf8))
    let bad = try await ReaderctlProcess.run(["nfc", "scan", "--hex", "--tags", notHex])
    #expect(bad.status == 65)
    #expect(
      bad.stderr == "readerctl: \(notHex): input is not hex at byte 0: expected a hex digit or whitespace, found 'z'\n")
  }

  @Test func tagFilesThatCannotBeReadStopTheScanBeforeItBegins() async throws {
    let tags = try Tags()
    let missing = tags.directory.appendingPathComponent("absent.ndef").path
    let result = try await ReaderctlProcess.run(["nfc", "scan", "--json", "--tags", missing])
    #expect(result.status == 66)
    #expect(result.stderr == "readerctl: cannot read \(missing): no such file\n")
    let (events, outcome) = try Self.json(result)
    #expect(events.isEmpty)
    #expect((outcome["error"] as? [String: Any])?["code"] as? String == "noInput")

    let big = try tags.file("big.ndef", Array(repeating: 0x41, count: NFCCommand.tagLimit + 1))
    let tooBig = try await ReaderctlProcess.run(["nfc", "scan", "--tags", big])
    #expect(tooBig.status == 65)
    #expect(tooBig.stderr.contains("is larger than 65536 bytes: 65537 bytes"))
    #expect(tooBig.stdout.isEmpty)
  }

  // MARK: write

  @Test func writeRoundTripsTheMessageNDEFEncodeBuilds() async throws {
    let tags = try Tags()
    let options = ["--text", "hallo", "--lang", "de", "--uri", "https://example.com/a"]
    let encoded = try await ReaderctlProcess.run(
      ["ndef", "encode", "--output", tags.directory.appendingPathComponent("m").path] + options)
    #expect(encoded.status == 0)
    let expected = try await Self.decoded(tags.directory.appendingPathComponent("m").path)
    let size = try Data(contentsOf: tags.directory.appendingPathComponent("m")).count

    let result = try await ReaderctlProcess.run(["nfc", "write"] + options)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.isEmpty)
    #expect(result.lines.last == expected)
    NFCDemoTests.expectInOrder(
      [
        "Writing a \(size)-byte NDEF message", "Session 1 is active", "Session 1 detected blank-tag.",
        "queryNDEFStatus: readWrite, capacity 496 bytes", "writeNDEF: \(size) bytes written",
        "readNDEF: Text “hallo” (de); URI https://example.com/a", "The sheet now says “Tag written.”",
        "Session 1 ended: readerSessionInvalidationErrorUserCanceled (200), the app invalidated it.",
      ], in: result.stdout)

    let json = try await ReaderctlProcess.run(["nfc", "write", "--json", "--capacity", "\(size)"] + options)
    #expect(json.status == 0)
    let (events, outcome) = try Self.json(json)
    #expect(
      events.compactMap { $0["event"] as? String } == ["didBecomeActive", "didDetectTags", "didInvalidateWithError"])
    #expect(outcome["status"] as? String == "readWrite")
    #expect(outcome["capacity"] as? Int == size && outcome["length"] as? Int == size)
    let message = try #require(outcome["message"] as? [String: Any])
    #expect(
      try JSONSerialization.data(withJSONObject: message, options: .sortedKeys)
        == JSONSerialization.data(
          withJSONObject: try JSONSerialization.jsonObject(with: Data(expected.utf8)), options: .sortedKeys))
  }

  @Test func aMessageLargerThanTheTagFailsWithTagSizeTooSmallAndExits74() async throws {
    let result = try await ReaderctlProcess.run(["nfc", "write", "--text", "hello", "--capacity", "11"])
    #expect(result.status == 74)
    #expect(result.stderr.hasPrefix("readerctl: writing the tag failed: ndefReaderSessionErrorTagSizeTooSmall (402): "))
    #expect(result.stdout.contains("writeNDEF failed: ndefReaderSessionErrorTagSizeTooSmall (402)."))
    #expect(result.stdout.contains("The sheet closes showing “This tag is too small for the message.”"))
    #expect(!result.stdout.contains("readNDEF"))

    let json = try await ReaderctlProcess.run(["nfc", "write", "--json", "--text", "hello", "--capacity", "11"])
    let (_, outcome) = try Self.json(json)
    let error = try #require(outcome["error"] as? [String: Any])
    #expect(error["code"] as? String == "ndefReaderSessionErrorTagSizeTooSmall" && error["errorCode"] as? Int == 402)
    #expect(outcome["message"] is NSNull && outcome["length"] as? Int == 12 && outcome["capacity"] as? Int == 11)
    // One byte more and it fits.
    #expect(try await ReaderctlProcess.run(["nfc", "write", "--text", "hello", "--capacity", "12"]).status == 0)
  }

  @Test func aReadOnlyTagFailsWithTagNotWritableAndExits74() async throws {
    let result = try await ReaderctlProcess.run([
      "nfc", "write", "--json", "--read-only", "--uri", "https://example.com",
    ])
    #expect(result.status == 74)
    #expect(result.stderr.contains("ndefReaderSessionErrorTagNotWritable (400)"))
    let (events, outcome) = try Self.json(result)
    #expect(outcome["status"] as? String == "readOnly")
    #expect((outcome["error"] as? [String: Any])?["errorCode"] as? Int == 400)
    let end = try #require(Self.named("didInvalidateWithError", in: events).first)
    #expect(((end["error"] as? [String: Any])?["context"] as? [String: String])?["by"] == "app")
  }

  @Test func writeRefusesWhatEncodeRefusesBeforeAnySession() async throws {
    let tags = try Tags()
    let big = try tags.file("big", Array(repeating: 0x41, count: NFCCommand.tagLimit))
    let result = try await ReaderctlProcess.run(["nfc", "write", "--json", "--mime", "a/b", big])
    #expect(result.status == 65)
    #expect(result.stderr.contains("the encoded message is larger than 65536 bytes"))
    let (events, outcome) = try Self.json(result)
    #expect(events.isEmpty)
    #expect((outcome["error"] as? [String: Any])?["code"] as? String == "invalidInput")
    let invalid = try await ReaderctlProcess.run(["nfc", "write", "--text", "x", "--lang", ""])
    #expect(invalid.status == 64 && invalid.stdout.isEmpty && !invalid.stderr.contains("--help"))
  }

  // MARK: usage

  @Test(arguments: [
    ["nfc"], ["nfc", "read"], ["nfc", "scan", "a.ndef"], ["nfc", "scan", "--tags"], ["nfc", "scan", "--seed", "x"],
    ["nfc", "scan", "--tags=a"], ["nfc", "write"], ["nfc", "write", "--lang", "en"], ["nfc", "write", "--text"],
    ["nfc", "write", "--text", "x", "--capacity", "65537"], ["nfc", "write", "--text", "x", "extra"],
    ["nfc", "write", "--text", "x", "--hex"],
  ])
  func usageErrorsExit64WithTheUsageAndNoJSON(arguments: [String]) async throws {
    // `--json` right after the subcommand, where it cannot be a record flag's value.
    let result = try await ReaderctlProcess.run(Array(arguments.prefix(2)) + ["--json"] + arguments.dropFirst(2))
    let command = arguments.count > 1 && ["scan", "write"].contains(arguments[1]) ? "nfc \(arguments[1])" : "nfc"
    #expect(result.isUsageError(of: command), "\(arguments): \(result.stderr)")
  }

  @Test(arguments: [
    (["nfc", "--help"], "nfc"), (["help", "nfc"], "nfc"), (["nfc", "help"], "nfc"),
    (["nfc", "scan", "--help"], "nfc scan"), (["nfc", "write", "-h"], "nfc write"),
    (["help", "nfc", "scan"], "nfc scan"),
  ])
  func helpPrintsTheCommandsHelpOnStandardOutput(arguments: [String], command: String) async throws {
    let result = try await ReaderctlProcess.run(arguments)
    #expect(result.status == 0)
    let help = try #require(ReaderCtl.allHelp.first { $0.command == command })
    #expect(result.stdout == help.text)
    #expect(result.stderr.isEmpty)
  }

  @Test func theCommandListAndTheREADMEShowTheNFCCommandsWithEveryOption() async throws {
    #expect(try await ReaderctlProcess.run(["help"]).stdout.contains("  nfc "))
    let readme = try String(
      contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
    for (command, help) in [("nfc scan", NFCCommand.scanHelp), ("nfc write", NFCCommand.writeHelp)] {
      let row = try #require(readme.split(separator: "\n").first { $0.hasPrefix("| `readerctl \(command) ") })
      // The record options are the RECORD the row names, spelled out once below the table.
      let records = Set(RecordOptions.options.map { "--" + $0.name })
      let options = Set(help.options.map { "--" + $0.name }).subtracting(records)
      #expect(options.count >= 4, "\(command): \(options)")
      if command == "nfc write" { #expect(row.contains("RECORD…")) }
      for option in records { #expect(readme.contains("`\(option)"), "README lacks \(option)") }
      for option in options { #expect(row.contains(option), "README's row for \(command) lacks \(option)") }
    }
    #expect(readme.contains("| `readerctl demo nfc [--seed N] [--speed X] [--json]` |"))
  }

  // MARK: in process

  @Test func exitStatusesFollowNFCReaderErrorCodes() {
    let cases: [(NFCReaderError.Code, Int32)] = [
      (.readerSessionInvalidationErrorSessionTimeout, 75), (.readerSessionInvalidationErrorSystemIsBusy, 75),
      (.readerTransceiveErrorTagConnectionLost, 75), (.readerTransceiveErrorTagResponseError, 65),
      (.ndefReaderSessionErrorZeroLengthMessage, 65), (.ndefReaderSessionErrorTagSizeTooSmall, 74),
      (.ndefReaderSessionErrorTagNotWritable, 74), (.ndefReaderSessionErrorTagUpdateFailure, 74),
      (.readerSessionInvalidationErrorUserCanceled, 130), (.readerErrorRadioDisabled, 69),
      (.readerErrorUnsupportedFeature, 69), (.readerSessionInvalidationErrorSessionTerminatedUnexpectedly, 1),
      (NFCReaderError.Code(rawValue: 999), 1),
    ]
    for (code, status) in cases {
      #expect(ExitStatus.status(for: NFCReaderError(code, "x")) == status, "\(code)")
    }
  }

  @Test func nfcJSONSplicesRenderedMessagesIntoAnObject() throws {
    let line = NFCJSON.object([("a", .int(1))], raw: [("messages", NFCJSON.messages([Self.hello, Self.hello]))])
    #expect(line == #"{"a":1,"messages":["# + NDEFJSON.render(Self.hello) + "," + NDEFJSON.render(Self.hello) + "]}")
    #expect(NFCJSON.object([], raw: [("m", "[]"), ("n", "null")]) == #"{"m":[],"n":null}"#)
    #expect(NFCJSON.object([("a", .null)], raw: []) == #"{"a":null}"#)
    #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any])
  }
}
