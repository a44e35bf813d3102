import Foundation
import ReaderCore
import ReaderKit

// `reader-bench [--rounds N] [--only TEXT] [all | <benchmark>...]`: runs benchmarks (every one by default) and
// prints their ratios; `reader-bench --version` prints the version.

/// A benchmark: its name on the command line, one line about it, and the function that runs it, prints what
/// it measured and returns its ratios.
struct Benchmark {
  let name: String
  let summary: String
  let run: () -> [Ratio]
}

/// The version `reader-bench --version` prints: ReaderKit's, as `readerctl --version` prints it.
let version = UpdatePolicy.readerKitVersion.description

/// Every benchmark, in the order `all` runs them.
let benchmarks =
  [
    Benchmark(name: "ndef", summary: "NDEF decoding: NFCKit against ndeflib and against a plain copy of the bytes") {
      runNDEFBenchmark(iterations: 200)
    },
    Benchmark(name: "scheduler", summary: "VirtualClock against a bare binary heap: fire, half cancelled, steady 10k") {
      runSchedulerBenchmark(items: 200_000, steadySize: 10_000)
    },
    Benchmark(name: "terminal", summary: "the engine on the simulator: a 30-day soak, simulated time over wall time") {
      runTerminalBenchmark(days: 30)
    },
    Benchmark(name: "update", summary: "software updates: what installs cost a soak, and an image through the pipeline")
    {
      runUpdateBenchmark(days: 30, imageMiB: 32)
    },
    Benchmark(name: "discovery", summary: "100 to 10,000 readers at 10 and 1 Hz: cost per advertisement, memory") {
      runDiscoveryBenchmark(sizes: discoveryBenchmarkSizes, rates: discoveryBenchmarkRates)
    },
    Benchmark(name: "nfc", summary: "NFC sessions opened and closed, and begun at once, against plain FIFOs") {
      runNFCBenchmarkAndPrint()
    },
    Benchmark(name: "pcsc", summary: "a 4 KiB NDEF read through pcscd against bare SCardTransmit of the same APDUs") {
      runPCSCBenchmarkAndPrint()
      return []
    },
    Benchmark(name: "lock", summary: "Locked (a POSIX mutex) against Locked: alone, contended, made") {
      runLockBenchmark(operations: 2_000_000, objects: 200_000)
    },
    Benchmark(name: "json", summary: "JSONReader against JSONSerialization on a manifest, a record, a recorded line") {
      runJSONBenchmark(releases: 1_000, repeats: 20_000)
    },
    Benchmark(name: "soak", summary: "30 days of faults in every state, checked against the world's ground truth") {
      _ = runSoakCommand([])
      return []
    },
  ]
  + blueZBenchmarks

let usage =
  "usage: reader-bench [--rounds N] [--only TEXT] [all | <benchmark>...]\n"
  + "       reader-bench --version\n\n"
  + "  all       run every benchmark (the default) and print a table of every ratio\n"
  + benchmarks.map { "  \($0.name.padding(toLength: 9, withPad: " ", startingAt: 0)) \($0.summary)\n" }.joined()
  + "\n  --rounds N   measured rounds per comparison, after a warm-up round (default 7); each ratio is taken"
  + " within a round\n               and printed as min / median / max over the rounds\n"
  + "  --only TEXT  run only the cases whose names contain TEXT (to count their instructions with callgrind:\n"
  + "               valgrind --tool=callgrind --collect-atstart=no --toggle-collect=reader_bench_timed_body ...)\n"
  + "\nBuild in release mode for meaningful numbers: swift run -c release reader-bench <benchmark>\n"

/// Reports bad usage on standard error and exits 64.
func usageError(_ message: String) -> Never {
  FileHandle.standardError.write(Data("reader-bench: \(message)\n\n\(usage)".utf8))
  exit(64)
}

let arguments: [String]
switch BenchOptions.commandLine {
case .success(let (_, rest)): arguments = rest
case .failure(let failure): usageError(failure.message)
}

if arguments == ["--version"] || arguments == ["-V"] {
  print("reader-bench \(version)")
  exit(0)
}
if arguments.contains(where: { ["help", "--help", "-h"].contains($0) }) {
  print(usage, terminator: "")
  exit(0)
}
// `discovery --size N --rate R`: one size and rate of the discovery benchmark, as `key values…` lines; the
// benchmark runs each this way in a process of its own.
if arguments.count == 5, arguments[0] == "discovery", arguments[1] == "--size", arguments[3] == "--rate" {
  guard let size = Int(arguments[2]), (1...1_000_000).contains(size) else {
    usageError("--size takes a number of readers from 1 to 1000000")
  }
  guard let rate = Int(arguments[4]), (1...100).contains(rate) else {
    usageError("--rate takes advertisements per second from 1 to 100")
  }
  printDiscoveryMeasurement(measureDiscovery(readers: size, rate: rate))
  exit(0)
}
if arguments.first == "soak" { exit(runSoakCommand(Array(arguments.dropFirst()))) }

#if DEBUG
  print("reader-bench: a debug build; its figures mean little (swift run -c release reader-bench)\n")
#endif
let chosen: [Benchmark]
if arguments.isEmpty || arguments == ["all"] {
  chosen = benchmarks
} else {
  chosen = arguments.map { name in
    guard let benchmark = benchmarks.first(where: { $0.name == name }) else {
      usageError("unknown benchmark '\(name)'")
    }
    return benchmark
  }
}
var ratios: [Ratio] = []
for benchmark in chosen {
  ratios += benchmark.run()
  print("")
}
let command = (["reader-bench"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
print(
  """
  Every ratio of this run (\(BenchOptions.current.rounds) rounds each; \(command)):

  | ratio | min | median | max | goal | median meets goal |
  |---|---|---|---|---|---|
  """)
print(ratios.map(\.markdownRow).joined(separator: "\n"))
if ratios.contains(where: { $0.met == false }) { print("\nSome goals are not met.") }
