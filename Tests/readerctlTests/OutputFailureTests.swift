import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Every write `readerctl` makes can fail — a full disk, a pipe whose reader left, a descriptor the
/// shell closed — and none of them may crash it: the command stops with exit status 74 and one line
/// on standard error, or with 74 alone when standard error is what failed.
@Suite(.workTimeLimit(.seconds(60)))
struct OutputFailureTests {
  private static let noSpace = "readerctl: cannot write to standard output: No space left on device (errno 28)\n"

  private static func devFull() throws -> FileHandle {
    try #require(FileHandle(forWritingAtPath: "/dev/full"), "no /dev/full here")
  }

  @Test(arguments: [
    ["demo"], ["demo", "nfc"], ["--version"], ["help"], ["update", "--help"], ["ndef", "encode", "--text", "hi"],
    ["ndef", "encode", "--text", "hi", "--hex"], ["discover", "--json"],
  ])
  func aFullStandardOutputEndsTheCommandWith74AndOneLine(arguments: [String]) async throws {
    let result = try await ReaderctlProcess.run(arguments, standardOutput: try Self.devFull())
    #expect(result.status == 74, "\(arguments): \(result.stderr)")
    #expect(result.stderr == Self.noSpace, "\(arguments)")
  }

  @Test(arguments: [["--version"], ["demo", "--seed", "3"], ["ndef", "decode", "--help"]])
  func aClosedStandardOutputEndsTheCommandWith74AndOneLine(arguments: [String]) async throws {
    let result = try await ReaderctlProcess.run(arguments, closing: [1])
    #expect(result.status == 74, "\(arguments): \(result.stderr)")
    #expect(result.stderr == "readerctl: cannot write to standard output: Bad file descriptor (errno 9)\n")
  }

  @Test func aPipeWhoseReaderLeftEndsTheCommandWith74AndOneLine() async throws {
    let pipe = Pipe()
    try pipe.fileHandleForReading.close()
    let result = try await ReaderctlProcess.run(["demo"], standardOutput: pipe.fileHandleForWriting)
    #expect(result.status == 74, "\(result.stderr)")
    #expect(result.stderr == "readerctl: cannot write to standard output: Broken pipe (errno 32)\n")
  }

  @Test(arguments: [["nosuch"], ["ndef", "decode", "/nonexistent"], ["update"], ["demo", "--seed", "x"]])
  func aFullStandardErrorEndsTheCommandWith74Silently(arguments: [String]) async throws {
    let result = try await ReaderctlProcess.run(arguments, standardError: try Self.devFull())
    #expect(result.status == 74, "\(arguments)")
    #expect(result.stdout.isEmpty)
  }

  @Test func noStandardStreamsAtAllStillEndsWith74() async throws {
    let result = try await ReaderctlProcess.run(["demo", "nfc"], closing: [1, 2])
    #expect(result.status == 74)
    #expect(result.stdout.isEmpty && result.stderr.isEmpty)
  }

  @Test func aClosedStandardInputIsAReadErrorNotACrash() async throws {
    let result = try await ReaderctlProcess.run(["ndef", "decode", "-"], closing: [0])
    #expect(result.status == 74, "\(result.stderr)")
    #expect(result.stderr == "readerctl: cannot read standard input: bad file descriptor\n")
  }

  @Test func theToolHasNoTryBangAndNoForcedUnwrapOfItsIO() throws {
    let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Sources/readerctl")
    for file in try FileManager.default.contentsOfDirectory(atPath: sources.path) where file.hasSuffix(".swift") {
      let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
      #expect(!text.contains("try!"), "\(file) uses try!")
      #expect(!text.contains("FileHandle.standard"), "\(file) writes through FileHandle, which crashes on failure")
      #expect(!text.contains("print("), "\(file) prints through the standard library's buffered output")
    }
  }
}
