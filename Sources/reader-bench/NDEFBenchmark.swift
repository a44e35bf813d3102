import Foundation
import NFCKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Benchmarks the NFCKit NDEF decoder and prints a summary; returns the measured numbers.
///
/// On one corpus built here (400 mixed messages of every record kind ndeflib also decodes, and one message
/// with a 512 KiB payload) it measures, over `iterations` passes (best of five runs): NFCKit decoding as
/// `readerctl` does it (structure and well-known payloads checked, no strings built), decoding plus the
/// typed views (Text, URI and Smart Poster values with their strings, which is what ndeflib's decoder
/// produces), decoding the structure only, and a plain copy of the same bytes (an `Array` made from the
/// bytes' buffer: `Array(bytes)` itself would only share the buffer). When the ndeflib oracle is installed
/// (`.ci/ndef-oracle.sh`), it writes the corpus as hex lines to a temporary file and times ndeflib decoding
/// it in one Python process (`Tests/NFCKitTests/Oracle/ndef_bench.py`, decode loop only).
///
/// Keys of the result (throughputs in MB/s of NDEF input, times in microseconds per message, ratios of
/// throughputs): `mixed.decode.MBps`, `mixed.decodeTyped.MBps`, `mixed.decodeStructure.MBps`,
/// `mixed.copy.MBps`, `mixed.decodeToCopy`, `large.decode.microseconds`, `large.copy.microseconds`,
/// `large.decodeToCopy`, and with ndeflib `ndeflib.mixed.MBps`, `ndeflib.large.microseconds`,
/// `mixed.decodeToNdeflib`, `mixed.decodeTypedToNdeflib`, `large.decodeToNdeflib`.
func runNDEFBenchmark(iterations: Int) -> [String: Double] {
  let iterations = max(1, iterations)
  let mixed = NDEFBenchmarkCorpus.mixed()
  let large = [NDEFBenchmarkCorpus.largePayload()]
  var results: [String: Double] = [:]

  let mixedBytes = Double(mixed.reduce(0) { $0 + $1.count } * iterations)
  func mixedMBps(_ work: NDEFBenchmarkTimer.Work) -> Double {
    mixedBytes / BenchTimer.seconds { NDEFBenchmarkTimer.run(work, on: mixed, iterations: iterations) } / 1e6
  }
  results["mixed.decode.MBps"] = mixedMBps(.decode)
  results["mixed.decodeTyped.MBps"] = mixedMBps(.decodeTyped)
  results["mixed.decodeStructure.MBps"] = mixedMBps(.decodeStructure)
  results["mixed.copy.MBps"] = mixedMBps(.copy)
  results["mixed.decodeToCopy"] = results["mixed.decode.MBps"]! / results["mixed.copy.MBps"]!

  func largeMicroseconds(_ work: NDEFBenchmarkTimer.Work) -> Double {
    BenchTimer.seconds { NDEFBenchmarkTimer.run(work, on: large, iterations: iterations) } * 1e6
      / Double(iterations)
  }
  results["large.decode.microseconds"] = largeMicroseconds(.decode)
  results["large.copy.microseconds"] = largeMicroseconds(.copy)
  results["large.decodeToCopy"] = results["large.copy.microseconds"]! / results["large.decode.microseconds"]!

  var ndeflibLines: [String]
  do {
    if let mixedPython = try NDEFBenchmarkPython.measure(mixed, iterations: iterations),
      let largePython = try NDEFBenchmarkPython.measure(large, iterations: iterations)
    {
      results["ndeflib.mixed.MBps"] = mixedPython.bytesPerSecond / 1e6
      results["ndeflib.large.microseconds"] = largePython.seconds * 1e6 / Double(largePython.messages)
      results["mixed.decodeToNdeflib"] = results["mixed.decode.MBps"]! / results["ndeflib.mixed.MBps"]!
      results["mixed.decodeTypedToNdeflib"] = results["mixed.decodeTyped.MBps"]! / results["ndeflib.mixed.MBps"]!
      results["large.decodeToNdeflib"] =
        results["ndeflib.large.microseconds"]! / results["large.decode.microseconds"]!
      ndeflibLines = [
        String(
          format: "  ndeflib 0.3.3     mixed %8.1f MB/s     large %10.2f µs/message",
          results["ndeflib.mixed.MBps"]!, results["ndeflib.large.microseconds"]!),
        String(
          format: "  NFCKit / ndeflib  mixed %8.1fx (decode), %.1fx (decode + typed views)   large %.0fx",
          results["mixed.decodeToNdeflib"]!, results["mixed.decodeTypedToNdeflib"]!, results["large.decodeToNdeflib"]!),
      ]
      if mixedPython.errors + largePython.errors > 0 {
        ndeflibLines.append("  (ndeflib rejected \(mixedPython.errors + largePython.errors) of its decodes)")
      }
    } else {
      ndeflibLines = ["  ndeflib: not measured (run .ci/ndef-oracle.sh to install the oracle)"]
    }
  } catch {
    ndeflibLines = ["  ndeflib: failed (\(error))"]
  }

  let lines = [
    String(
      format:
        "NDEF decode benchmark: %d passes, best of %d runs, over %d mixed messages (%d bytes) and 1 message of %d bytes",
      iterations, BenchTimer.runs, mixed.count, mixed.reduce(0) { $0 + $1.count }, large[0].count),
    String(
      format: "  NFCKit decode     mixed %8.1f MB/s     large %10.2f µs/message   (structure only: %.1f MB/s)",
      results["mixed.decode.MBps"]!, results["large.decode.microseconds"]!, results["mixed.decodeStructure.MBps"]!),
    String(format: "  NFCKit + typed    mixed %8.1f MB/s", results["mixed.decodeTyped.MBps"]!),
    String(
      format: "  plain copy        mixed %8.1f MB/s     large %10.2f µs/message",
      results["mixed.copy.MBps"]!, results["large.copy.microseconds"]!),
    String(
      format:
        "  NFCKit / copy     mixed %8.3fx                   large %.0fx (payloads are views of the input, not copies)",
      results["mixed.decodeToCopy"]!, results["large.decodeToCopy"]!),
  ]
  print((lines + ndeflibLines).joined(separator: "\n"))
  return results
}

/// The benchmark corpus, deterministic: every record kind ndeflib can also decode, no chunks.
private enum NDEFBenchmarkCorpus {
  static func mixed() -> [[UInt8]] {
    var state: UInt64 = 0x00BE_EF00
    func next(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(bound))
    }
    func bytes(_ count: Int) -> NDEFBytes { NDEFBytes((0..<count).map { _ in UInt8(next(256)) }) }
    let texts = ["hello", "Grüße aus Zürich", "日本語のテキスト", "emoji 🎉", String(repeating: "lorem ipsum ", count: 20)]
    var corpus: [[UInt8]] = []
    // Building from valid values cannot fail.
    for index in 0..<400 {
      var records: [NDEFRecord] = []
      for _ in 0...next(4) {
        let record: NDEFRecord
        switch (index + next(8)) % 8 {
        case 0:
          record = try! .text(
            texts[next(texts.count)], languageCode: ["en", "de", "ja"][next(3)],
            encoding: next(4) == 0 ? .utf16LittleEndianWithBOM : .utf8)
        case 1: record = try! .uri(URIPrefix.all[next(36)].string + "example.com/path/\(next(1000))")
        case 2:
          record = try! SmartPosterRecord(
            uri: URIRecord(uri: "https://www.example.com/\(next(100))"),
            titles: [
              TextRecord(text: "Example", languageCode: "en"), TextRecord(text: "Beispiel", languageCode: "de"),
            ],
            action: .execute, size: UInt32(next(1 << 20)), resourceType: "text/html"
          ).record()
        case 3: record = try! .media(type: "application/json", payload: NDEFBytes(utf8: #"{"id":\#(next(1_000_000))}"#))
        case 4: record = try! .media(type: "application/octet-stream", payload: bytes([16, 200, 300, 1000][next(4)]))
        case 5: record = try! .external("example.com:widget", payload: bytes(next(64)))
        case 6: record = try! .absoluteURI("https://example.com/schema", payload: bytes(next(64)))
        default: record = try! .unknown(payload: bytes(next(100)), identifier: bytes(1 + next(4)))
        }
        records.append(record)
      }
      corpus.append(try! NDEFMessage(records: records).encoded())
    }
    return corpus
  }

  /// One media record with a 512 KiB payload (ndeflib refuses payloads over 1 MiB).
  static func largePayload() -> [UInt8] {
    let payload = NDEFBytes((0..<(512 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    return NDEFMessage(try! .media(type: "application/octet-stream", payload: payload)).encoded()
  }
}

private enum NDEFBenchmarkTimer {
  /// What one timed pass does with each message.
  enum Work {
    /// `NDEFDecoder().decode`, well-known payloads checked (the default options).
    case decode
    /// `decode`, then the Text, URI and Smart Poster values of the records, strings included.
    case decodeTyped
    /// `decode` without the well-known payload checks.
    case decodeStructure
    /// A copy of the bytes into a new array.
    case copy
  }

  static func run(_ work: Work, on corpus: [[UInt8]], iterations: Int) {
    let decoder = NDEFDecoder(options: NDEFDecodingOptions(validatesWellKnownPayloads: work != .decodeStructure))
    var sink = 0
    for _ in 0..<iterations {
      for bytes in corpus {
        if work == .copy {
          // `Array(bytes)` of an array only shares its buffer (copy on write); copy the bytes for real.
          let copy = bytes.withUnsafeBufferPointer { Array($0) }
          sink &+= copy.count &+ Int(copy[copy.count / 2])
          continue
        }
        guard let message = try? decoder.decode(bytes) else { preconditionFailure("benchmark corpus must decode") }
        sink &+= message.records.count &+ Int(message.records[0].payload.first ?? 0)
        if work == .decodeTyped { sink &+= typedViews(of: message) }
      }
    }
    blackHole(sink)
  }

  /// Builds the typed values of the message's records, as ndeflib's decoder does; returns something
  /// derived from them so that the work is kept.
  private static func typedViews(of message: NDEFMessage) -> Int {
    var sink = 0
    for record in message.records {
      // The decoder checked these payloads, so the typed views cannot fail.
      if record.isWellKnown("T") {
        sink &+= (try? TextRecord(record))?.text.utf8.count ?? 0
      } else if record.isWellKnown("U") {
        sink &+= (try? URIRecord(record))?.uri.utf8.count ?? 0
      } else if record.isWellKnown("Sp"), let poster = try? SmartPosterRecord(record) {
        sink &+= poster.uri.uri.utf8.count &+ poster.titles.reduce(0) { $0 &+ $1.text.utf8.count }
      }
    }
    return sink
  }

  /// Keeps the optimizer from removing the measured work.
  @inline(never) static func blackHole(_ value: Int) {
    if value == Int.min { print("") }
  }
}

/// Times ndeflib through `Tests/NFCKitTests/Oracle/ndef_bench.py` in the package's `.venv`.
private enum NDEFBenchmarkPython {
  struct Measurement: Decodable {
    var messages: Int
    var seconds: Double
    var messagesPerSecond: Double
    var bytesPerSecond: Double
    var errors: Int
  }

  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// The venv's Python and the timing script, looked for in the package this file was built from, then in
  /// the current directory.
  static func oracle() -> (python: URL, script: URL)? {
    let fromSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    for root in [fromSource, URL(fileURLWithPath: FileManager.default.currentDirectoryPath)] {
      let python = root.appendingPathComponent(".venv/bin/python")
      let script = root.appendingPathComponent("Tests/NFCKitTests/Oracle/ndef_bench.py")
      if FileManager.default.isExecutableFile(atPath: python.path), FileManager.default.fileExists(atPath: script.path)
      {
        return (python, script)
      }
    }
    return nil
  }

  /// The measurement, or nil when the oracle is not installed.
  static func measure(_ corpus: [[UInt8]], iterations: Int) throws -> Measurement? {
    guard let (python, script) = oracle() else { return nil }
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("ndef-bench-\(UUID().uuidString).hex")
    defer { try? FileManager.default.removeItem(at: file) }
    try Data(corpus.map { NDEFBytes($0).hex }.joined(separator: "\n").utf8).write(to: file)

    let process = Process()
    process.executableURL = python
    process.arguments = [script.path, file.path, String(iterations)]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let pid = process.processIdentifier
    let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + 600, execute: watchdog)
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    watchdog.cancel()
    guard process.terminationStatus == 0 else {
      throw Failure(description: "ndef_bench.py exited with status \(process.terminationStatus)")
    }
    return try JSONDecoder().decode(Measurement.self, from: data)
  }
}
