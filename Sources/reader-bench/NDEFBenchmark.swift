import Foundation
import NFCKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Benchmarks the NFCKit NDEF decoder and prints a summary; returns the measured numbers.
///
/// On one corpus built here (a few hundred mixed messages of every record kind, and one message with a
/// 512 KiB payload) it measures, over `iterations` passes: NFCKit decoding (with and without well-known
/// payload validation) in MB/s and messages/s, a plain copy of the same bytes (an `Array` made from the
/// bytes' buffer: `Array(bytes)` itself would only share the buffer), and the decode/copy throughput
/// ratio. When the ndeflib oracle is installed (`.ci/ndef-oracle.sh`), it writes the corpus as hex lines
/// to a temporary file and times ndeflib decoding it in one Python process
/// (`Tests/NFCKitTests/Oracle/ndef_bench.py`, decode loop only), then reports NFCKit/ndeflib.
///
/// Keys of the result: `mixed.decode.MBps`, `mixed.decode.messagesPerSecond`, `mixed.decodeStructure.MBps`,
/// `mixed.copy.MBps`, `mixed.decodeToCopy`, `large.decode.MBps`, `large.copy.MBps`, `large.decodeToCopy`,
/// and with ndeflib `ndeflib.mixed.messagesPerSecond`, `ndeflib.mixed.MBps`, `ndeflib.large.MBps`,
/// `mixed.nfckitToNdeflib`, `large.nfckitToNdeflib`.
func runNDEFBenchmark(iterations: Int) -> [String: Double] {
  let iterations = max(1, iterations)
  let mixed = NDEFBenchmarkCorpus.mixed()
  let large = [NDEFBenchmarkCorpus.largePayload()]
  var results: [String: Double] = [:]

  let mixedBytes = Double(mixed.reduce(0) { $0 + $1.count } * iterations)
  let mixedMessages = Double(mixed.count * iterations)
  let decode = NDEFBenchmarkTimer.seconds { NDEFBenchmarkTimer.decode(mixed, iterations: iterations, validating: true) }
  let structure = NDEFBenchmarkTimer.seconds {
    NDEFBenchmarkTimer.decode(mixed, iterations: iterations, validating: false)
  }
  let copy = NDEFBenchmarkTimer.seconds { NDEFBenchmarkTimer.copy(mixed, iterations: iterations) }
  results["mixed.decode.MBps"] = mixedBytes / decode / 1e6
  results["mixed.decode.messagesPerSecond"] = mixedMessages / decode
  results["mixed.decodeStructure.MBps"] = mixedBytes / structure / 1e6
  results["mixed.copy.MBps"] = mixedBytes / copy / 1e6
  results["mixed.decodeToCopy"] = copy / decode

  let largeBytes = Double(large[0].count * iterations)
  let largeDecode = NDEFBenchmarkTimer.seconds {
    NDEFBenchmarkTimer.decode(large, iterations: iterations, validating: true)
  }
  let largeCopy = NDEFBenchmarkTimer.seconds { NDEFBenchmarkTimer.copy(large, iterations: iterations) }
  results["large.decode.MBps"] = largeBytes / largeDecode / 1e6
  results["large.copy.MBps"] = largeBytes / largeCopy / 1e6
  results["large.decodeToCopy"] = largeCopy / largeDecode

  var ndeflibNote = "ndeflib: not measured (run .ci/ndef-oracle.sh to install the oracle)"
  do {
    if let mixedPython = try NDEFBenchmarkPython.measure(mixed, iterations: iterations),
      let largePython = try NDEFBenchmarkPython.measure(large, iterations: iterations)
    {
      results["ndeflib.mixed.messagesPerSecond"] = mixedPython.messagesPerSecond
      results["ndeflib.mixed.MBps"] = mixedPython.bytesPerSecond / 1e6
      results["ndeflib.large.MBps"] = largePython.bytesPerSecond / 1e6
      results["mixed.nfckitToNdeflib"] = results["mixed.decode.messagesPerSecond"]! / mixedPython.messagesPerSecond
      results["large.nfckitToNdeflib"] = results["large.decode.MBps"]! * 1e6 / largePython.bytesPerSecond
      ndeflibNote = String(
        format:
          "ndeflib 0.3.3: mixed %.0f messages/s (%.1f MB/s), large %.1f MB/s -> NFCKit is %.1fx (mixed), %.1fx (large)",
        mixedPython.messagesPerSecond, mixedPython.bytesPerSecond / 1e6, largePython.bytesPerSecond / 1e6,
        results["mixed.nfckitToNdeflib"]!, results["large.nfckitToNdeflib"]!)
      if mixedPython.errors + largePython.errors > 0 {
        ndeflibNote += " (ndeflib rejected \(mixedPython.errors + largePython.errors) decodes)"
      }
    }
  } catch {
    ndeflibNote = "ndeflib: failed (\(error))"
  }

  print(
    String(
      format: """
        NDEF decode benchmark (%d iterations; %d mixed messages, %d bytes; 1 message of %d bytes)
          mixed: decode %.1f MB/s, %.0f messages/s (structure only %.1f MB/s); copy %.1f MB/s; decode/copy %.3f
          large: decode %.1f MB/s, copy %.1f MB/s; decode/copy %.1f (payloads are views, not copies)
        """, iterations, mixed.count, mixed.reduce(0) { $0 + $1.count }, large[0].count, results["mixed.decode.MBps"]!,
      results["mixed.decode.messagesPerSecond"]!, results["mixed.decodeStructure.MBps"]!, results["mixed.copy.MBps"]!,
      results["mixed.decodeToCopy"]!, results["large.decode.MBps"]!, results["large.copy.MBps"]!,
      results["large.decodeToCopy"]!))
  print("  " + ndeflibNote)
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
  static func seconds(_ body: () -> Void) -> Double {
    body()  // warm up
    let clock = ContinuousClock()
    let elapsed = clock.measure(body)
    return max(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, 1e-9)
  }

  static func decode(_ corpus: [[UInt8]], iterations: Int, validating: Bool) {
    let decoder = NDEFDecoder(options: NDEFDecodingOptions(validatesWellKnownPayloads: validating))
    var sink = 0
    for _ in 0..<iterations {
      for bytes in corpus {
        guard let message = try? decoder.decode(bytes) else { preconditionFailure("benchmark corpus must decode") }
        sink &+= message.records.count &+ Int(message.records[0].payload.first ?? 0)
      }
    }
    blackHole(sink)
  }

  static func copy(_ corpus: [[UInt8]], iterations: Int) {
    var sink = 0
    for _ in 0..<iterations {
      for bytes in corpus {
        // `Array(bytes)` of an array only shares its buffer (copy on write); copy the bytes for real.
        let copy = bytes.withUnsafeBufferPointer { Array($0) }
        sink &+= copy.count &+ Int(copy[copy.count / 2])
      }
    }
    blackHole(sink)
  }

  /// Keeps the optimizer from removing the measured work.
  @inline(never) static func blackHole(_ value: Int) {
    if value == Int.min { print("") }
  }
}

/// Times ndeflib through `Tests/NFCKitTests/Oracle/ndef_bench.py` in the package's `.venv`.
private enum NDEFBenchmarkPython {
  struct Measurement: Decodable {
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
