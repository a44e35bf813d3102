import Foundation
import NFCKit
import TestSupport
import Testing

@testable import readerctl

/// `readerctl ndef …` run in-process through `runNDEFCommand`: exit statuses and exact output.
@Suite(.workTimeLimit(.seconds(60))) struct NDEFCommandTests {
  struct Run {
    var status: Int32
    var stdout = ""
    var stdoutBytes: [UInt8] = []
    var stderr = ""
    var readStdin = false
  }

  /// Runs `readerctl ndef <arguments>` with `stdin` as standard input (`nil`: more than the input limit).
  func ndef(_ arguments: [String], stdin: [UInt8]? = [], inputLimit: Int? = nil, stdoutIsTerminal: Bool = false) -> Run
  {
    var run = Run(status: -1)
    let read = { () -> StandardStreams.Input in
      run.readStdin = true
      return stdin.map { .bytes($0) } ?? .tooLarge
    }
    let status =
      if let inputLimit {
        runNDEFCommand(
          arguments, inputLimit: inputLimit, stdin: read, stdout: { run.stdout += $0 },
          stdoutBytes: { run.stdoutBytes += $0 }, stderr: { run.stderr += $0 }, stdoutIsTerminal: stdoutIsTerminal)
      } else {
        runNDEFCommand(
          arguments, stdin: read, stdout: { run.stdout += $0 }, stdoutBytes: { run.stdoutBytes += $0 },
          stderr: { run.stderr += $0 }, stdoutIsTerminal: stdoutIsTerminal)
      }
    run.status = status
    return run
  }

  /// A file holding `bytes` in a fresh temporary directory, removed by `cleanUp`.
  final class TemporaryFiles {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ndef-command-\(UUID().uuidString)")

    init() throws { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
      let url = directory.appendingPathComponent(name)
      try Data(bytes).write(to: url)
      return url.path
    }
  }

  static let helloText = hexBytes("D1 01 08 54 02656E 68656C6C6F")
  static let helloJSON =
    #"{"records":[{"encoding":"UTF-8","id":"","language":"en","payload":"02656e68656c6c6f","text":"hello","tnf":1,"type":"54"}]}"#
    + "\n"

  static func hexBytes(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
    guard let bytes = NDEFBytes(hex: text) else {
      Issue.record("bad hex in test: \(text)", sourceLocation: sourceLocation)
      return []
    }
    return bytes.array
  }

  /// Expects a data error: status 65, nothing on stdout, one line on stderr that contains `fragment`.
  func expectDataError(_ run: Run, containing fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(run.status == 65, "\(run.stderr)", sourceLocation: sourceLocation)
    #expect(run.stdout.isEmpty && run.stdoutBytes.isEmpty, sourceLocation: sourceLocation)
    #expect(run.stderr.hasPrefix("readerctl: "), "\(run.stderr)", sourceLocation: sourceLocation)
    #expect(run.stderr.hasSuffix("\n"), sourceLocation: sourceLocation)
    #expect(run.stderr.filter { $0 == "\n" }.count == 1, "\(run.stderr)", sourceLocation: sourceLocation)
    #expect(run.stderr.contains(fragment), "\(run.stderr)", sourceLocation: sourceLocation)
  }

  // MARK: decode

  @Test func decodesAFileToOneLineOfJSON() throws {
    let files = try TemporaryFiles()
    let run = ndef(["decode", try files.file("hello.ndef", Self.helloText)])
    #expect(run.status == 0)
    #expect(run.stdout == Self.helloJSON)
    #expect(run.stderr.isEmpty)
    #expect(!run.readStdin)
  }

  @Test func decodesStandardInputForADash() {
    let run = ndef(["decode", "-"], stdin: Self.helloText)
    #expect(run.status == 0)
    #expect(run.readStdin)
    #expect(run.stdout == Self.helloJSON)
  }

  @Test func decodesHexTextWithHex() throws {
    let files = try TemporaryFiles()
    let text = Array("D1 01 08 54\n02 65 6e 68656C6C6F\n".utf8)
    #expect(ndef(["decode", "--hex", "-"], stdin: text).stdout == Self.helloJSON)
    #expect(ndef(["decode", try files.file("hello.hex", text), "--hex"]).stdout == Self.helloJSON)
  }

  @Test func printsURIAndSmartPosterFields() throws {
    let uri = ndef(["decode", "--hex", "-"], stdin: Array("D1 01 0C 55 02 6578616D706C652E636F6D".utf8))
    #expect(
      uri.stdout
        == #"{"records":[{"id":"","payload":"026578616d706c652e636f6d","tnf":1,"type":"55","uri":"https://www.example.com","uriPrefix":2}]}"#
        + "\n")

    let poster = SmartPosterRecord(
      uri: URIRecord(uri: "tel:+41"), titles: [TextRecord(text: "Call", languageCode: "en")], action: .save,
      size: 42, resourceType: "text/html")
    let run = ndef(["decode", "-"], stdin: NDEFMessage(try poster.record()).encoded())
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: [[String: Any]]])
    let record = try #require(json["records"]?.first)
    #expect(record["tnf"] as? Int == 1)
    #expect(record["type"] as? String == "5370")
    #expect(record["id"] as? String == "")
    #expect(record["uri"] as? String == "tel:+41")
    #expect(record["titles"] as? [[String: String]] == [["language": "en", "text": "Call"]])
    #expect(record["action"] as? String == "save")
    #expect(record["size"] as? Int == 42)
    #expect(record["resourceType"] as? String == "text/html")
    #expect((record["records"] as? [Any])?.count == 5)
  }

  @Test func malformedInputIsOneLineWithTheByteOffsetAndStatus65() {
    let run = ndef(["decode", "-"], stdin: Self.hexBytes("D1 01 08 54 02656E"))
    expectDataError(run, containing: "malformed NDEF at byte 2: expected at most 3 bytes")
    #expect(run.stderr.contains("lengthOutOfBounds"))
  }

  @Test func malformedHexInputNamesTheOffendingByteOfTheText() {
    expectDataError(
      ndef(["decode", "--hex", "-"], stdin: Array("D1 01 0x".utf8)),
      containing: "input is not hex at byte 7: expected the second hex digit of a byte, found 'x'")
    expectDataError(
      ndef(["decode", "--hex", "-"], stdin: Array("D1 0 1".utf8)),
      containing: "input is not hex at byte 4: expected the second hex digit of a byte, found whitespace")
    expectDataError(
      ndef(["decode", "--hex", "-"], stdin: Array("D1 010".utf8)),
      containing: "input is not hex at byte 6: expected the second hex digit of a byte, found the end")
  }

  @Test func emptyInputIsAZeroLengthMessage() {
    expectDataError(ndef(["decode", "-"], stdin: []), containing: "malformed NDEF at byte 0")
  }

  @Test func standardInputOverTheLimitIsADataErrorNamingTheLimit() {
    expectDataError(
      ndef(["decode", "-"], stdin: nil), containing: "standard input is larger than 16 MiB (16777216 bytes)")
  }

  @Test func aFileOverTheLimitIsRefusedFromItsSizeBeforeReading() throws {
    let files = try TemporaryFiles()
    expectDataError(
      ndef(["decode", try files.file("big.ndef", Self.helloText)], inputLimit: 8),
      containing: "big.ndef is larger than 8 bytes: 12 bytes")
    #expect(ndef(["decode", try files.file("fits.ndef", Self.helloText)], inputLimit: 12).status == 0)

    // A sparse 1 GiB file: refused at once from its size (reading it would take a while and 1 GiB).
    let sparse = files.directory.appendingPathComponent("sparse.ndef").path
    #expect(FileManager.default.createFile(atPath: sparse, contents: nil))
    let handle = try #require(FileHandle(forWritingAtPath: sparse))
    try handle.truncate(atOffset: 1 << 30)
    try handle.close()
    expectDataError(ndef(["decode", sparse]), containing: "larger than 16 MiB (16777216 bytes): 1073741824 bytes")
  }

  @Test func aMissingFileOrADirectoryIsStatus66() throws {
    let files = try TemporaryFiles()
    let missing = ndef(["decode", files.directory.appendingPathComponent("absent").path])
    #expect(missing.status == 66)
    #expect(missing.stderr.hasSuffix(": no such file\n"))
    #expect(missing.stdout.isEmpty)
    #expect(ndef(["decode", files.directory.path]).status == 66)
  }

  @Test func aFileNameWithANewlineStillGivesOneLine() {
    let run = ndef(["decode", "/nonexistent/a\nb"])
    #expect(run.status == 66)
    #expect(run.stderr == "readerctl: cannot read /nonexistent/a\\nb: no such file\n")
  }

  @Test(arguments: [
    ([], "ndef"), (["decode"], "ndef decode"), (["decode", "a", "b"], "ndef decode"),
    (["decode", "--json", "-"], "ndef decode"), (["frobnicate"], "ndef"),
  ])
  func usageErrorsAreStatus64PointingToTheHelp(arguments: [String], command: String) {
    let run = ndef(arguments)
    #expect(run.status == 64)
    #expect(run.stdout.isEmpty)
    #expect(run.stderr.hasPrefix("readerctl: "))
    #expect(run.stderr.hasSuffix("\nsee 'readerctl \(command) --help'\n"), "\(run.stderr)")
    #expect(!run.readStdin)
  }

  @Test(arguments: [
    (["ndef", "help"], "ndef"), (["ndef", "--help"], "ndef"), (["ndef", "decode", "--help"], "ndef decode"),
    (["ndef", "encode", "--text", "x", "-h"], "ndef encode"),
  ])
  func helpPrintsTheHelpOnStandardOutput(arguments: [String], command: String) async throws {
    let run = try await ReaderctlProcess.run(arguments)
    #expect(run.status == 0)
    #expect(run.stdout == ReaderCtl.allHelp.first { $0.command == command }?.text)
    #expect(run.stderr.isEmpty)
  }

  // MARK: encode

  @Test func encodesATextRecordAsHex() {
    let run = ndef(["encode", "--text", "hi", "--lang", "en", "--hex"])
    #expect(run.status == 0)
    #expect(run.stdout == "d101055402656e6869\n")
    #expect(run.stdoutBytes.isEmpty)
  }

  @Test func encodesAURIRecordAsRawBytes() {
    let run = ndef(["encode", "--uri", "https://www.example.com"])
    #expect(run.status == 0)
    #expect(run.stdoutBytes == Self.hexBytes("D1 01 0C 55 02 6578616D706C652E636F6D"))
    #expect(run.stdout.isEmpty)
  }

  @Test func encodesSeveralRecordsInTheOrderOfTheirFlags() throws {
    let files = try TemporaryFiles()
    let json = try files.file("data.json", Array(#"{"a":1}"#.utf8))
    let run = ndef([
      "encode", "--uri", "tel:1", "--text", "hallo", "--lang", "de", "--mime", "application/json", json, "--text", "hi",
    ])
    #expect(run.status == 0)
    let message = try NDEFDecoder().decode(run.stdoutBytes)
    #expect(
      message
        == NDEFMessage(
          try .uri("tel:1"), try .text("hallo", languageCode: "de"),
          try .media(type: "application/json", payload: NDEFBytes(utf8: #"{"a":1}"#)), try .text("hi")))
    #expect(run.stdoutBytes.first == 0x91)  // MB on the first record only, ME on the last
    #expect(run.stdoutBytes[run.stdoutBytes.count - 9] == 0x51)
  }

  @Test func whatEncodeWritesDecodesBack() {
    let encoded = ndef(["encode", "--text", "hello"])
    #expect(ndef(["decode", "-"], stdin: encoded.stdoutBytes).stdout == Self.helloJSON)
  }

  @Test(arguments: [
    ["encode"], ["encode", "--lang", "en"], ["encode", "--uri", "tel:1", "--lang", "en"], ["encode", "--text"],
    ["encode", "--mime", "text/plain"], ["encode", "--bogus"],
  ])
  func encodeUsageErrorsAreStatus64(arguments: [String]) {
    let run = ndef(arguments)
    #expect(run.status == 64)
    #expect(run.stdout.isEmpty && run.stdoutBytes.isEmpty)
    #expect(run.stderr.hasSuffix("\nsee 'readerctl ndef encode --help'\n"), "\(run.stderr)")
  }

  @Test func invalidValuesAreStatus64OnOneLine() throws {
    let files = try TemporaryFiles()
    let payload = try files.file("p", [1])
    for arguments in [
      ["encode", "--text", "x", "--lang", ""], ["encode", "--mime", "text\nplain", payload],
      ["encode", "--uri", "https://a\nb"],
    ] {
      let run = ndef(arguments)
      #expect(run.status == 64, "\(arguments)")
      #expect(run.stderr.hasPrefix("readerctl: ") && run.stderr.filter { $0 == "\n" }.count == 1, "\(run.stderr)")
      #expect(!run.stderr.contains("--help"), "\(run.stderr)")
    }
  }

  @Test func aMissingMimeFileIsStatus66AndAnOversizedOneADataError() throws {
    let files = try TemporaryFiles()
    #expect(ndef(["encode", "--mime", "text/plain", files.directory.appendingPathComponent("x").path]).status == 66)
    let big = try files.file("big", Array(repeating: 0x41, count: 9))
    expectDataError(ndef(["encode", "--mime", "text/plain", big], inputLimit: 8), containing: "larger than 8 bytes")
  }

  // MARK: encode and decode agree on limits

  @Test func encodeRefusesAMessageOverTheLimitThatDecodeWouldRefuseAndAcceptsOneAtIt() throws {
    let files = try TemporaryFiles()
    // A media record of type "a/b" with a payload of 256 bytes or more: header, type length, 4-byte
    // payload length, type.
    let overhead = 1 + 1 + 4 + 3
    let limit = 300
    let fits = try files.file("fits", Array(repeating: 0x41, count: limit - overhead))
    let atLimit = ndef(["encode", "--mime", "a/b", fits], inputLimit: limit)
    #expect(atLimit.status == 0, "\(atLimit.stderr)")
    #expect(ndef(["decode", "-"], stdin: atLimit.stdoutBytes, inputLimit: limit).status == 0)
    let over = try files.file("over", Array(repeating: 0x41, count: limit))
    expectDataError(
      ndef(["encode", "--mime", "a/b", over], inputLimit: limit),
      containing: "the encoded message is larger than \(limit) bytes: ")
    let decodeOver = ndef(["decode", over], inputLimit: limit - 1)
    expectDataError(decodeOver, containing: "is larger than \(limit - 1) bytes: \(limit) bytes")
  }

  @Test func encodeWithHexRefusesHexTextOverTheLimit() throws {
    let files = try TemporaryFiles()
    let limit = 100
    let payload = try files.file("p", Array(repeating: 0x41, count: 60))
    expectDataError(
      ndef(["encode", "--hex", "--mime", "a/b", payload], inputLimit: limit),
      containing: "the hex text of the encoded message is larger than \(limit) bytes: ")
    let small = try files.file("s", Array(repeating: 0x41, count: 30))
    let hex = ndef(["encode", "--hex", "--mime", "a/b", small], inputLimit: limit)
    #expect(hex.status == 0)
    #expect(ndef(["decode", "--hex", "-"], stdin: Array(hex.stdout.utf8), inputLimit: limit).status == 0)
  }

  @Test func encodeRefusesWhatTheDecoderRejectsWithDecodesWords() {
    let arguments = ["encode", "--hex"] + Array(repeating: ["--text", "a"], count: 4097).flatMap { $0 }
    expectDataError(ndef(arguments), containing: "malformed NDEF at byte ")
    #expect(ndef(arguments).stderr.contains("tooManyRecords"))
    #expect(ndef(["encode", "--hex"] + Array(repeating: ["--text", "a"], count: 4096).flatMap { $0 }).status == 0)
  }

  @Test func encodeRefusesToWriteRawBytesToATerminal() throws {
    let run = ndef(["encode", "--text", "hi"], stdoutIsTerminal: true)
    #expect(run.status == 64)
    #expect(run.stdoutBytes.isEmpty && run.stdout.isEmpty)
    #expect(run.stderr.hasPrefix("readerctl: refusing to write binary NDEF to a terminal"))
    #expect(ndef(["encode", "--text", "hi", "--hex"], stdoutIsTerminal: true).stdout == "d101055402656e6869\n")

    let files = try TemporaryFiles()
    let output = files.directory.appendingPathComponent("hi.ndef").path
    let toFile = ndef(["encode", "--text", "hi", "--output", output], stdoutIsTerminal: true)
    #expect(toFile.status == 0, "\(toFile.stderr)")
    #expect(toFile.stdout.isEmpty && toFile.stdoutBytes.isEmpty)
    #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data(Self.hexBytes("d101055402656e6869")))
  }

  @Test func anOutputFileThatCannotBeWrittenIsStatus74() throws {
    let files = try TemporaryFiles()
    let run = ndef(["encode", "--text", "hi", "--output", files.directory.appendingPathComponent("no/such/dir").path])
    #expect(run.status == 74)
    #expect(run.stderr.hasPrefix("readerctl: cannot write "))
    #expect(run.stderr.filter { $0 == "\n" }.count == 1)
  }

  @Test func everyOptionTakesItsValueAfterAnEqualsSignToo() throws {
    let files = try TemporaryFiles()
    let output = files.directory.appendingPathComponent("hi.ndef").path
    let inline = ndef(["encode", "--text=hi", "--lang=en", "--output=\(output)"])
    #expect(inline.status == 0, "\(inline.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data(Self.hexBytes("d101055402656e6869")))
    let payload = try files.file("p.txt", Array("x".utf8))
    let mime = ndef(["encode", "--hex", "--mime=text/plain", payload])
    #expect(mime.status == 0, "\(mime.stderr)")
    #expect(mime.stdout == "d20a01746578742f706c61696e78\n")
    // A value that looks like an option is given with `=`.
    #expect(ndef(["encode", "--hex", "--text=--hex"]).stdout == "d101085402656e2d2d686578\n")
  }

  @Test func aRecordOptionMissingAValueDoesNotTakeTheNextOptionAsOne() {
    let run = ndef(["encode", "--mime", "text/plain", "--hex"])
    #expect(run.status == 64)
    #expect(run.stderr == "readerctl: --mime needs 2 values\nsee 'readerctl ndef encode --help'\n")
    let text = ndef(["encode", "--text", "--uri", "tel:1"])
    #expect(text.stderr.hasPrefix("readerctl: --text needs a value\n"), "\(text.stderr)")
  }

  @Test func anOutputFileThatIsADirectoryIsNamedWithTheSystemsReason() throws {
    let files = try TemporaryFiles()
    let run = ndef(["encode", "--text", "hi", "--output", files.directory.path])
    #expect(run.status == 74)
    #expect(run.stderr == "readerctl: cannot write \(files.directory.path): is a directory\n")
  }

  @Test func encodeBuildsASmartPosterThatDecodePrintsBack() throws {
    let encoded = ndef([
      "encode", "--poster", "https://example.com/menu", "--title", "Menu", "--title", "Carte", "--lang", "fr",
      "--action", "save", "--resource-size", "2048", "--resource-type", "text/html", "--text", "after",
    ])
    #expect(encoded.status == 0, "\(encoded.stderr)")
    let decoded = ndef(["decode", "-"], stdin: encoded.stdoutBytes)
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(decoded.stdout.utf8)) as? [String: [[String: Any]]])
    let records = try #require(json["records"])
    #expect(records.count == 2)
    #expect(records[0]["uri"] as? String == "https://example.com/menu")
    #expect(
      records[0]["titles"] as? [[String: String]] == [
        ["language": "en", "text": "Menu"], ["language": "fr", "text": "Carte"],
      ])
    #expect(records[0]["action"] as? String == "save")
    #expect(records[0]["size"] as? Int == 2048)
    #expect(records[0]["resourceType"] as? String == "text/html")
    #expect(records[1]["text"] as? String == "after")
  }

  @Test(arguments: [
    (["encode", "--title", "x"], "--title must follow a --poster"),
    (["encode", "--poster", "tel:1", "--action", "jump"], "--action must be exec, save or edit, not 'jump'"),
    (["encode", "--poster", "tel:1", "--resource-size", "-1"], "--resource-size must be a whole number"),
  ])
  func smartPosterOptionsOutOfPlaceAreUsageErrors(arguments: [String], message: String) {
    let run = ndef(arguments)
    #expect(run.status == 64)
    #expect(run.stderr.hasPrefix("readerctl: \(message)"), "\(run.stderr)")
  }

  @Test func anInvalidValueIsDescribedOnceNotTwice() throws {
    let files = try TemporaryFiles()
    let run = ndef(["encode", "--mime", "textplain", try files.file("p", [1])])
    #expect(run.status == 64)
    #expect(run.stderr.components(separatedBy: "a media type such as text/plain").count == 2, "\(run.stderr)")
  }

  @Test func decodeReadsStandardInputForADashAfterDoubleDash() {
    #expect(ndef(["decode", "--", "-"], stdin: Self.helloText).stdout == Self.helloJSON)
    #expect(ndef(["decode", "--", "--hex"]).status == 66, "after --, --hex is a file name")
  }
}

/// The real limits, through the built `readerctl`: what `encode` writes, `decode` reads.
@Suite(.workTimeLimit(.seconds(60)))
struct NDEFLimitProcessTests {
  @Test(arguments: [false, true])
  func encodeRefusesAtTheRealLimitWhatDecodeWouldRefuse(hex: Bool) async throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    // 16 MiB of payload, or 8 MiB with --hex: the message (or its hex text) is just over 16 MiB.
    let payload = directory.appendingPathComponent("payload")
    try Data(count: hex ? 8 * 1024 * 1024 : 16 * 1024 * 1024).write(to: payload)
    let result = try await ReaderctlProcess.run(
      ["ndef", "encode"] + (hex ? ["--hex"] : []) + ["--mime", "a/b", payload.path], timeout: 120)
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("is larger than 16 MiB (16777216 bytes)"))
  }
}

/// File permissions, through the built `readerctl` run as a user who meets them.
@Suite(
  .workTimeLimit(.seconds(60)),
  .enabled(
    if: ReaderctlProcess.canMeetFilePermissions,
    "running as root without setpriv: every file is readable, so permissions cannot be tested"))
struct NDEFPermissionTests {
  @Test func aFileInAnUnreadableDirectoryIsPermissionDeniedNotMissing() async throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    let locked = directory.appendingPathComponent("locked")
    try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
    try Data([0xD1, 0x01, 0x01, 0x54, 0x00]).write(to: locked.appendingPathComponent("tag.ndef"))
    try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
    try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: locked.path)
    defer {
      try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: locked.path)
      try? FileManager.default.removeItem(at: directory)
    }
    let path = locked.appendingPathComponent("tag.ndef").path
    let result = try await ReaderctlProcess.run(["ndef", "decode", path], asNobody: true)
    #expect(result.status == 66)
    #expect(result.stderr == "readerctl: cannot read \(path): permission denied\n")
    let missing = try await ReaderctlProcess.run(["ndef", "decode", directory.appendingPathComponent("absent").path])
    #expect(missing.stderr.hasSuffix(": no such file\n"))
  }
}
