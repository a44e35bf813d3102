import Foundation
import TestSupport
import Testing

import ReaderKit
@testable import readerctl

/// The command dispatch, help and argument parsing.
@Suite(.workTimeLimit(.seconds(60)))
struct ReaderCtlTests {
  @Test func noCommandOrAnUnknownOneIsAUsageErrorPointingToTheHelp() async throws {
    for arguments in [[], ["frobnicate"], ["help", "frobnicate"]] {
      let result = try await ReaderctlProcess.run(arguments)
      #expect(result.isUsageError(of: ""), "\(arguments): \(result.stderr)")
    }
    #expect(
      try await ReaderctlProcess.run(["frobnicate"]).stderr
        == "readerctl: unknown command 'frobnicate'\nsee 'readerctl --help'\n")
  }

  @Test func helpPrintsEveryCommandOnStdout() async throws {
    let result = try await ReaderctlProcess.run(["help"])
    #expect(result.status == 0)
    for command in ["demo", "discover", "connect", "reconnect", "update", "ndef", "nfc"] {
      #expect(result.stdout.contains("  \(command) "), "\(command)")
    }
    let discover = try await ReaderctlProcess.run(["discover", "--help"])
    #expect(discover.status == 0 && discover.stdout == DiscoverCommand.help.text)
    #expect(discover.stdout.contains("\nUSAGE: readerctl discover "))
  }

  /// The one line a usage error prints, and the help it points to, for a command and a subcommand.
  @Test(arguments: [
    (["nfc", "scan", "--tag", "x"], "nfc scan", "unknown option '--tag'"),
    (["ndef", "encode", "--txt", "x"], "ndef encode", "unknown option '--txt'"),
    (["ndef", "decode"], "ndef decode", "decode needs a FILE (or - for stdin)"),
    (["update", "--catalog"], "update", "--catalog needs a value"),
    (["connect", "X"], "connect", "--location is required"),
  ])
  func aUsageErrorIsTheErrorAndOneLinePointingToTheHelp(arguments: [String], command: String, message: String)
    async throws
  {
    let result = try await ReaderctlProcess.run(arguments)
    #expect(result.stderr == "readerctl: \(message)\nsee 'readerctl \(command) --help'\n")
    #expect(result.isUsageError(of: command))
  }

  @Test func everyHelpFits80ColumnsInTheSectionsSwiftToolsUse() throws {
    for help in ReaderCtl.allHelp {
      let text = help.text
      let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
      for line in lines { #expect(line.count <= 80, "\(help.command): \(line)") }
      #expect(text.hasPrefix("OVERVIEW: "), "\(help.command)")
      #expect(text.contains("\nUSAGE: readerctl"), "\(help.command)")
      #expect(text.contains("\nOPTIONS:\n"), "\(help.command)")
      #expect(text.contains("\n  -h, --help "), "\(help.command)")
      #expect(text.contains("\n  --version "), "\(help.command)")
      if !help.arguments.isEmpty { #expect(text.contains("\nARGUMENTS:\n"), "\(help.command)") }
      // Every option the command parses is listed, each under OPTIONS once.
      for option in help.options {
        #expect(
          lines.filter { $0.hasPrefix("  " + option.display + " ") || $0 == "  " + option.display }.count == 1,
          "\(help.command) --\(option.name)")
      }
    }
  }

  @Test(arguments: [
    ["demo"], ["discover"], ["connect"], ["reconnect"], ["update"], ["ndef"], ["ndef", "decode"], ["ndef", "encode"],
    ["nfc"], ["nfc", "scan"], ["nfc", "write"], ["help"],
  ])
  func everyCommandAcceptsVersion(command: [String]) async throws {
    let result = try await ReaderctlProcess.run(command + ["--version"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "readerctl \(ReaderCtl.version)\n")
    #expect(result.stderr.isEmpty)
  }

  @Test(arguments: ["--version", "-V"])
  func versionPrintsTheVersionOnStdout(flag: String) async throws {
    let result = try await ReaderctlProcess.run([flag])
    #expect(result.status == 0)
    #expect(result.stdout == "readerctl \(ReaderCtl.version)\n")
    #expect(result.stderr.isEmpty)
    #expect(try await ReaderctlProcess.run(["help"]).stdout.contains("readerctl --version"))
  }

  @Test func aSingleDashOptionIsAnUnknownOptionNotAnArgument() async throws {
    let result = try await ReaderctlProcess.run(["discover", "-t"])
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix("readerctl: unknown option '-t'\n"))
  }

  @Test func doubleDashEndsTheOptions() async throws {
    let hello: [UInt8] = [0xD1, 0x01, 0x05, 0x54, 0x02, 0x65, 0x6E, 0x68, 0x69]
    let stdin = try await ReaderctlProcess.run(["ndef", "decode", "--", "-"], input: hello)
    #expect(stdin.status == 0, "\(stdin.stderr)")
    #expect(stdin.stdout.contains(#""text":"hi""#))
    // After `--`, `-h` is a file name, not a request for help.
    let file = try await ReaderctlProcess.run(["ndef", "decode", "--", "-h"])
    #expect(file.status == 66)
    #expect(file.stderr == "readerctl: cannot read -h: no such file\n")
  }

  @Test func theREADMEsCommandTableListsEveryOptionOfEveryCommand() throws {
    let readme = try String(
      contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
    let records = Set(RecordOptions.options.map(\.name))
    for help in ReaderCtl.allHelp where !help.command.isEmpty && help.command != "ndef" && help.command != "nfc" {
      let row = try #require(readme.split(separator: "\n").first { $0.hasPrefix("| `readerctl \(help.command) ") })
      for option in help.options where !records.contains(option.name) {
        #expect(row.contains("--" + option.name), "README's row for \(help.command) lacks --\(option.name)")
      }
    }
    for option in records { #expect(readme.contains("`--\(option)"), "README lacks --\(option)") }
    #expect(readme.contains("readerctl --version"))
    #expect(readme.contains("A `+` after a battery level means the reader is charging."))
  }

  /// A duration in an error's context is a number of seconds in the JSON, from a state machine (the
  /// scan's timeout) as from a command (connect's search).
  @Test func durationsInJSONErrorContextsAreNumbersOfSeconds() async throws {
    let directory = try ReaderctlProcess.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let runs = [
      (["discover", "--readers", "0", "--timeout", "0.5", "--json"], 0.5),
      (["connect", "NOPE", "--location", "x", "--timeout", "2", "--store", directory.path + "/s.json", "--json"], 2.0),
    ]
    for (arguments, seconds) in runs {
      let result = try await ReaderctlProcess.run(arguments)
      let outcome = try #require(try ReaderctlProcess.jsonLines(result.stdout).last)
      let context = try #require((outcome["error"] as? [String: Any])?["context"] as? [String: Any])
      #expect(context["timeout"] as? Double == seconds, "\(arguments): \(context)")
    }
  }

  @Test func argumentListTakesSpacedAndInlineValuesAndFlags() throws {
    let list = try ArgumentList(
      ["a", "--seed=7", "--json", "--timeout", "2.5", "-", "b"], flags: ["json"], options: ["seed", "timeout"])
    #expect(list.positionals == ["a", "-", "b"])
    #expect(list.has("json") && !list.has("missing"))
    #expect(try list.integer("seed", default: UInt64(0), in: 0...UInt64.max) == 7)
    #expect(try list.number("timeout", default: 0, in: 0...10) == 2.5)
    #expect(try list.number("absent", default: 3, in: 0...10) == 3)
    let ended = try ArgumentList(["--json", "--", "--seed", "-x", "-"], flags: ["json"], options: ["seed"])
    #expect(ended.has("json") && !ended.has("seed"))
    #expect(ended.positionals == ["--seed", "-x", "-"])
  }

  @Test func argumentListRejectsWhatItCannotUse() {
    #expect(throws: UsageError.self) { try ArgumentList(["--x"]) }
    #expect(throws: UsageError.self) { try ArgumentList(["--seed"], options: ["seed"]) }
    #expect(throws: UsageError.self) { try ArgumentList(["--json=1"], flags: ["json"]) }
    #expect(throws: UsageError.self) {
      try ArgumentList(["--seed", "1e3"], options: ["seed"]).integer("seed", default: 0, in: 0...Int.max)
    }
    #expect(throws: UsageError.self) {
      try ArgumentList(["--t", "nan"], options: ["t"]).number("t", default: 0, in: 0...1)
    }
    #expect(throws: UsageError.self) { try ArgumentList(["a"]).positionals(named: []) }
    #expect(throws: UsageError.self) { try ArgumentList(["-t"]) }
    #expect(throws: UsageError.self) { try ArgumentList(["-json"], flags: ["json"]) }
    #expect(throws: UsageError.self) { try ArgumentList([]).positionals(named: ["SERIAL"]) }
  }

  @Test func exitStatusesFollowTheErrorCodes() {
    let cases: [(ReaderError.Code, Int32)] = [
      (.invalidConfiguration, 64), (.storeCorrupt, 65), (.readerNotFound, 69), (.bluetoothDisabled, 69),
      (.storeUnavailable, 74), (.bluetoothScanTimedOut, 75), (.bluetoothConnectTimedOut, 75), (.canceled, 130),
      (.alreadyConnected, 1),
    ]
    for (code, status) in cases {
      #expect(ExitStatus.status(for: ReaderError(code, "x")) == status, "\(code)")
    }
  }
}

/// The benchmarks' executable answers `--version` as the tool does.
@Suite(.workTimeLimit(.seconds(60)))
struct ReaderBenchVersionTests {
  @Test(arguments: ["--version", "-V"])
  func readerBenchPrintsReaderKitsVersion(flag: String) async throws {
    let result = try await ReaderctlProcess.run([flag], program: "reader-bench")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "reader-bench \(ReaderCtl.version)\n")
    #expect(try await ReaderctlProcess.run(["--version"]).stdout == "readerctl \(UpdatePolicy.readerKitVersion)\n")
  }
}
