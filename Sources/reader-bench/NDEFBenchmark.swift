import CNDEFHeaderWalk
import Foundation
import NFCKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Benchmarks the NFCKit NDEF decoder and prints a summary; returns its ratios, each taken within one round of
/// this run (see `Comparison`).
///
/// On one corpus built here (400 mixed messages of every record kind ndeflib also decodes, and one message
/// with a 512 KiB payload) it measures `iterations` passes of: NFCKit decoding as `readerctl` does it
/// (structure and well-known payloads checked, no strings built), decoding plus the typed views (Text, URI
/// and Smart Poster values with their strings, and the type names of the other records, which is what
/// ndeflib's decoder produces), decoding the structure only, a validating walk over the record headers in C
/// (`ndef_header_walk`, the bare baseline of the structure decode), and a plain copy of the same bytes (an
/// `Array` made from the bytes' buffer: `Array(bytes)` itself would only share the buffer). Every case reads
/// every payload byte: the decoder checks Text, URI and Smart Poster payloads, and each case adds up the
/// bytes of the payloads nobody else reads (media, absolute-URI, external and unknown records, and every
/// payload in the structure-only decode and the C walk), as ndeflib copies them into `bytes` values. When
/// the ndeflib oracle is installed (`.ci/ndef-oracle.sh`), one Python process
/// (`Tests/NFCKitTests/Oracle/ndef_bench.py`) holds the corpus and, in its turn in each round, times the same
/// number of passes of ndeflib decoding it (the decode loop only).
func runNDEFBenchmark(iterations: Int) -> [Ratio] {
  let iterations = max(1, iterations)
  let mixed = NDEFBenchmarkCorpus.mixed()
  let large = [NDEFBenchmarkCorpus.largePayload()]
  NDEFBenchmarkTimer.checkBaseline(on: mixed + large)
  func timed(_ work: NDEFBenchmarkTimer.Work, on corpus: [[UInt8]]) -> () -> Void {
    { NDEFBenchmarkTimer.run(work, on: corpus, iterations: iterations) }
  }
  var cases: [Comparison.Case] = [
    .init("ndef.mixed.decode", timed(.decode, on: mixed)),
    .init("ndef.mixed.decodeTyped", timed(.decodeTyped, on: mixed)),
    .init("ndef.mixed.decodeStructure", timed(.decodeStructure, on: mixed)),
    .init("ndef.mixed.headerWalk", timed(.headerWalk, on: mixed)),
    .init("ndef.mixed.copy", timed(.copy, on: mixed)),
    .init("ndef.large.decode", timed(.decode, on: large)),
    .init("ndef.large.copy", timed(.copy, on: large)),
  ]
  var ndeflibLine = "  ndeflib: not measured (run .ci/ndef-oracle.sh to install the oracle)"
  var oracles: [NDEFBenchmarkPython] = []
  do {
    if let mixedPython = try NDEFBenchmarkPython(corpus: mixed),
      let largePython = try NDEFBenchmarkPython(corpus: large)
    {
      oracles = [mixedPython, largePython]
      cases += [
        .reported("ndef.mixed.ndeflib") { mixedPython.seconds(iterations: iterations) },
        .reported("ndef.large.ndeflib") { largePython.seconds(iterations: iterations) },
      ]
      ndeflibLine =
        "  ndeflib 0.3.3 times its own decode loop in a Python process, in its turn in each round, "
        + "\(iterations) passes like every case"
    }
  } catch {
    ndeflibLine = "  ndeflib: failed (\(error))"
  }
  let timings = Comparison(cases).measure()
  for oracle in oracles { oracle.finish() }

  let ratios = [
    timings.ratio("ndef.mixed: copy / decode", "ndef.mixed.copy", over: "ndef.mixed.decode"),
    timings.ratio("ndef.large: copy / decode", "ndef.large.copy", over: "ndef.large.decode"),
    timings.ratio("ndef.mixed: ndeflib / decode", "ndef.mixed.ndeflib", over: "ndef.mixed.decode"),
    timings.ratio(
      "ndef.mixed: ndeflib / decode with typed records", "ndef.mixed.ndeflib", over: "ndef.mixed.decodeTyped",
      goal: .atLeast(50)),
    timings.ratio("ndef.large: ndeflib / decode", "ndef.large.ndeflib", over: "ndef.large.decode"),
    timings.ratio(
      "ndef.mixed: C header walk / decode structure", "ndef.mixed.headerWalk", over: "ndef.mixed.decodeStructure",
      goal: .atLeast(0.3)),
  ]
  let mixedBytes = Double(mixed.reduce(0) { $0 + $1.count } * iterations)
  func megabytes(_ name: String) -> String {
    String(format: "%.1f MB/s", mixedBytes / timings.median(name) / 1e6)
  }
  print(
    """
    NDEF decode benchmark: \(BenchOptions.current.rounds) rounds of \(iterations) passes over \(mixed.count) mixed \
    messages (\(mixed.reduce(0) { $0 + $1.count }) bytes) and 1 message of \(large[0].count) bytes
      NFCKit decode \(megabytes("ndef.mixed.decode")), with typed records \(megabytes("ndef.mixed.decodeTyped")), \
    structure only \(megabytes("ndef.mixed.decodeStructure")); C header walk \(megabytes("ndef.mixed.headerWalk")), \
    plain copy \(megabytes("ndef.mixed.copy")) (medians)
    \(ndeflibLine)
    """)
  print(ratios.map(\.line).joined(separator: "\n"))
  return ratios
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
    /// `decodeTyped` (the Text, URI and Smart Poster values built by the pass that checks them), each value's
    /// strings read, and the type names of the other records.
    case decodeTyped
    /// `decode` without the well-known payload checks.
    case decodeStructure
    /// `ndef_header_walk` in C: the structure checks, no values built.
    case headerWalk
    /// A copy of the bytes into a new array.
    case copy
  }

  static func run(_ work: Work, on corpus: [[UInt8]], iterations: Int) {
    let options = NDEFDecodingOptions(validatesWellKnownPayloads: work != .decodeStructure)
    let decoder = NDEFDecoder(options: options)
    var sink = 0
    for _ in 0..<iterations {
      for bytes in corpus {
        switch work {
        case .copy:
          // `Array(bytes)` of an array only shares its buffer (copy on write); copy the bytes for real.
          let copy = bytes.withUnsafeBufferPointer { Array($0) }
          sink &+= copy.count &+ Int(copy[copy.count / 2])
        case .headerWalk:
          var sum: UInt64 = 0
          let records = bytes.withUnsafeBufferPointer {
            ndef_header_walk($0.baseAddress, $0.count, options.maxRecords, UInt64(options.maxPayloadSize), &sum)
          }
          precondition(records > 0, "benchmark corpus must decode")
          sink &+= records &+ Int(truncatingIfNeeded: sum)
        case .decode, .decodeStructure:
          guard let message = try? decoder.decode(bytes) else { preconditionFailure("benchmark corpus must decode") }
          sink &+= message.records.count
          // Each record read where it lies: `for record in records` or `records[index]` would copy it (a
          // retain and a release more per use).
          message.records.withUnsafeBufferPointer { records in
            for index in records.indices {
              // The decoder read the Text, URI and Smart Poster payloads; read the others.
              if work == .decodeStructure || Kind(of: records[index]) == .other {
                sink &+= sum(records[index].payload)
              }
            }
          }
        case .decodeTyped:
          guard let typed = try? decoder.decodeTyped(bytes) else {
            preconditionFailure("benchmark corpus must decode")
          }
          // The records are moved out of the message, the last first, so that reading one copies nothing: a
          // record read where it lies is copied around each call that reads it (a retain and a release).
          let values = typed.values
          var records = (consume typed).records
          sink &+= records.count
          values.withUnsafeBufferPointer { values in
            while let record = records.popLast() { sink &+= use(values[records.count], of: record) }
          }
        }
      }
    }
    blackHole(sink)
  }

  /// Stops unless the C walk finds the records the decoder finds, with the same payload bytes: the baseline
  /// must do the same work.
  static func checkBaseline(on corpus: [[UInt8]]) {
    let decoder = NDEFDecoder(options: NDEFDecodingOptions(validatesWellKnownPayloads: false))
    for bytes in corpus {
      var sum: UInt64 = 0
      let records = bytes.withUnsafeBufferPointer {
        ndef_header_walk(
          $0.baseAddress, $0.count, NDEFDecodingOptions().maxRecords, UInt64(NDEFDecodingOptions().maxPayloadSize), &sum
        )
      }
      guard let message = try? decoder.decode(bytes) else { preconditionFailure("benchmark corpus must decode") }
      let decodedSum = message.records.reduce(0) { $0 &+ Self.sum($1.payload) }
      let plainSum = message.records.reduce(0) { $0 &+ $1.payload.reduce(0) { $0 &+ Int($1) } }
      precondition(
        records == message.records.count && Int(sum) == decodedSum && decodedSum == plainSum,
        "the C header walk and the decoder disagree")
    }
  }

  /// The kinds of record whose payload the decoder (with its default options) reads itself, and the others
  /// (every record, for the structure decode).
  enum Kind {
    case text, uri, smartPoster, other

    init(of record: NDEFRecord) {
      if record.isWellKnown("T") {
        self = .text
      } else if record.isWellKnown("U") {
        self = .uri
      } else if record.isWellKnown("Sp") {
        self = .smartPoster
      } else {
        self = .other
      }
    }
  }

  /// The bytes added up, so that each is read (as `ndef_header_walk` adds them up; the C compiler vectorizes
  /// its loop, so this adds sixteen bytes at a time in sixteen 16-bit lanes, then eight, then one).
  static func sum(_ bytes: NDEFBytes) -> Int {
    bytes.withUnsafeBytes { buffer in
      let count = buffer.count
      var total: UInt64 = 0
      var index = 0
      while count - index >= 16 {
        // At most 256 vectors per pass: each adds at most 255 to a lane, and a lane holds 65,535.
        let end = index + min(256, (count - index) / 16) * 16
        var lanes = SIMD16<UInt16>()
        while index < end {
          lanes &+= SIMD16<UInt16>(
            truncatingIfNeeded: buffer.loadUnaligned(fromByteOffset: index, as: SIMD16<UInt8>.self))
          index += 16
        }
        total &+= UInt64(SIMD16<UInt32>(truncatingIfNeeded: lanes).wrappedSum())
      }
      if count - index >= 8 {
        let lanes = SIMD8<UInt16>(
          truncatingIfNeeded: buffer.loadUnaligned(fromByteOffset: index, as: SIMD8<UInt8>.self))
        total &+= UInt64(lanes.wrappedSum())
        index += 8
      }
      while index < count {
        total &+= UInt64(buffer[index])
        index += 1
      }
      return Int(truncatingIfNeeded: total)
    }
  }

  /// Reads the typed value `decodeTyped` built for a record, as ndeflib's decoder builds one: the Text, URI or
  /// Smart Poster value with its strings (the whole URI included), or, for the other records, the type name
  /// as a string and every payload byte (which the decoder did not read); returns something derived from
  /// them so that the work is kept.
  private static func use(_ value: NDEFRecordValue, of record: NDEFRecord) -> Int {
    switch value {
    case .text(let text):
      return text.text.utf8.count &+ text.languageCode.utf8.count
    case .uri(let uri):
      return uri.uri.utf8.count
    case .smartPoster(let poster):
      var total = poster.uri.uri.utf8.count
      for title in poster.titles { total &+= title.text.utf8.count &+ title.languageCode.utf8.count }
      return total
    case .none:
      let name = record.mediaType ?? record.externalType ?? record.absoluteURI ?? ""
      return name.utf8.count &+ sum(record.payload)
    }
  }

  /// Keeps the optimizer from removing the measured work.
  @inline(never) static func blackHole(_ value: Int) {
    if value == Int.min { print("") }
  }
}

/// Times ndeflib through `Tests/NFCKitTests/Oracle/ndef_bench.py` in the package's `.venv`: one Python process
/// holding one corpus, asked for a measurement in each round.
private final class NDEFBenchmarkPython {
  struct Measurement: Decodable {
    var messages: Int
    var seconds: Double
    var errors: Int
  }

  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  private let process: Process
  private let input: FileHandle
  private let output: FileHandle
  private let file: URL
  private var buffered: [UInt8] = []

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

  /// Starts the Python process with `corpus`; nil when the oracle is not installed.
  init?(corpus: [[UInt8]]) throws {
    guard let (python, script) = Self.oracle() else { return nil }
    file = FileManager.default.temporaryDirectory.appendingPathComponent("ndef-bench-\(UUID().uuidString).hex")
    try Data(corpus.map { NDEFBytes($0).hex }.joined(separator: "\n").utf8).write(to: file)
    process = Process()
    process.executableURL = python
    process.arguments = [script.path, file.path]
    let (toPython, fromPython) = (Pipe(), Pipe())
    process.standardInput = toPython
    process.standardOutput = fromPython
    process.standardError = FileHandle.nullDevice
    input = toPython.fileHandleForWriting
    output = fromPython.fileHandleForReading
    try process.run()
  }

  /// Has Python decode the corpus `iterations` times; returns the seconds its decode loop took.
  func seconds(iterations: Int) -> Double {
    input.write(Data("\(iterations)\n".utf8))
    guard let line = readLine(), let measurement = try? JSONDecoder().decode(Measurement.self, from: Data(line)) else {
      FileHandle.standardError.write(Data("reader-bench: ndef_bench.py stopped answering\n".utf8))
      exit(1)
    }
    precondition(measurement.errors == 0, "ndeflib decodes the whole corpus")
    return measurement.seconds
  }

  /// Ends the Python process and removes the corpus file.
  func finish() {
    try? input.close()
    process.waitUntilExit()
    try? FileManager.default.removeItem(at: file)
  }

  private func readLine() -> [UInt8]? {
    while true {
      if let end = buffered.firstIndex(of: UInt8(ascii: "\n")) {
        let line = Array(buffered[..<end])
        buffered.removeSubrange(...end)
        return line
      }
      let chunk = output.availableData
      guard !chunk.isEmpty else { return nil }
      buffered += chunk
    }
  }
}
