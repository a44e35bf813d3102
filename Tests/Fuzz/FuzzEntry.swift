// A libFuzzer entry point for every `FuzzHarness`, chosen with READERKIT_FUZZ=<name>.
//
// Built with `-sanitize=fuzzer,address -parse-as-library -DFUZZING` (see .ci/fuzz.sh) it is a libFuzzer
// binary: SwiftPM links executables with `main` renamed to `readerkit_fuzz_main`, so that symbol forwards
// to libFuzzer's driver. A normal build replays files through the same harness instead:
// `readerkit-fuzz <harness> FILE…`.
import Foundation
import FuzzHarnesses

#if FUZZING
  nonisolated(unsafe) private var selected: FuzzHarness?

  @_silgen_name("LLVMFuzzerRunDriver")
  private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
  ) -> Int32

  @_cdecl("readerkit_fuzz_main")
  func fuzzMain(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
  ) -> Int32 {
    guard let harness = FuzzHarness.named(ProcessInfo.processInfo.environment["READERKIT_FUZZ"]) else {
      let names = FuzzHarness.allCases.map(\.rawValue).joined(separator: ", ")
      FileHandle.standardError.write(Data("readerkit-fuzz: set READERKIT_FUZZ to one of: \(names)\n".utf8))
      return 64
    }
    selected = harness
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in fuzzOneInput(data, size) }
  }

  /// libFuzzer's own `main` is linked in too and needs this symbol, although the driver above is what runs.
  @_cdecl("LLVMFuzzerTestOneInput")
  func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selected?.run(bytes)
    return 0
  }
#else
  @main
  enum FuzzReplay {
    static func main() {
      let arguments = CommandLine.arguments.dropFirst()
      guard let name = arguments.first, let harness = FuzzHarness.named(name) else {
        let names = FuzzHarness.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("usage: readerkit-fuzz <\(names)> FILE…\n".utf8))
        exit(64)
      }
      for path in arguments.dropFirst() {
        guard let data = FileManager.default.contents(atPath: path) else {
          FileHandle.standardError.write(Data("readerkit-fuzz: cannot read \(path)\n".utf8))
          exit(66)
        }
        harness.run(Array(data))
      }
    }
  }
#endif
