import Foundation

// `reader-bench [all | <benchmark>]`: runs one benchmark, or every one (the default), and prints the results.

/// A benchmark: its name on the command line, one line about it, and the function that runs it and prints.
struct Benchmark {
  let name: String
  let summary: String
  let run: () -> Void
}

/// Every benchmark, in the order `all` runs them.
let benchmarks = [
  Benchmark(name: "ndef", summary: "NDEF decoding: NFCKit against ndeflib and against a plain copy of the bytes") {
    _ = runNDEFBenchmark(iterations: 200)
  },
  Benchmark(name: "terminal", summary: "the engine on the simulator: a 30-day soak and the scheduler against a sort") {
    printTerminalBenchmark(runTerminalBenchmark(days: 30, items: 200_000))
  },
  Benchmark(name: "update", summary: "software updates: what installs cost a soak, and an image through the pipeline") {
    printUpdateBenchmark(runUpdateBenchmark(days: 30, imageMiB: 32))
  },
  Benchmark(name: "discovery", summary: "100 to 10,000 readers at 10 Hz against a scan: cost per advertisement, memory")
  {
    printDiscoveryBenchmark(runDiscoveryBenchmark(sizes: discoveryBenchmarkSizes))
  },
  Benchmark(name: "nfc", summary: "NFC sessions opened and closed, and begun at once, against plain FIFOs") {
    runNFCBenchmarkAndPrint()
  },
  Benchmark(name: "soak", summary: "30 days of faults in every state, checked against the world's ground truth") {
    _ = runSoakCommand([])
  },
]

let usage =
  "usage: reader-bench [all | \(benchmarks.map(\.name).joined(separator: " | "))]\n\n"
  + "  all       run every benchmark (the default)\n"
  + benchmarks.map { "  \($0.name.padding(toLength: 9, withPad: " ", startingAt: 0)) \($0.summary)\n" }.joined()
  + "\nBuild in release mode for meaningful numbers: swift run -c release reader-bench <benchmark>\n"

/// Reports bad usage on standard error and exits 64.
func usageError(_ message: String) -> Never {
  FileHandle.standardError.write(Data("reader-bench: \(message)\n\n\(usage)".utf8))
  exit(64)
}

let arguments = Array(CommandLine.arguments.dropFirst())
// `discovery --size N`: one size of the discovery benchmark, as `key value` lines; the benchmark runs
// each size this way in a process of its own.
if arguments.count == 3, arguments[0] == "discovery", arguments[1] == "--size" {
  guard let size = Int(arguments[2]), (1...1_000_000).contains(size) else {
    usageError("--size takes a number of readers from 1 to 1000000")
  }
  printDiscoveryMeasurement(measureDiscovery(readers: size))
  exit(0)
}
if arguments.first == "soak" { exit(runSoakCommand(Array(arguments.dropFirst()))) }
if arguments.count > 1 { usageError("takes at most one benchmark name") }
switch arguments.first ?? "all" {
case "all":
  for benchmark in benchmarks { benchmark.run() }
case "help", "--help", "-h":
  print(usage, terminator: "")
case let name:
  guard let benchmark = benchmarks.first(where: { $0.name == name }) else { usageError("unknown benchmark '\(name)'") }
  benchmark.run()
}
