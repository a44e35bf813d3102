import Dispatch
import Foundation
import NFCKit
import PCSCKit
import ReaderCore

/// Benchmarks reading an NDEF message from a tag through pcscd: a 4 KiB message on a virtual Type 4 tag
/// in vpcd's first reader (`Tests/PCSCTestSupport/virtual_tag.py`), read with `NFCNDEFTag.readNDEF`
/// through a reader session, the PC/SC radio and pcsc-lite, against the same APDUs sent one after
/// another with bare synchronous `SCardTransmit` calls on one thread, in the same run. Both read the
/// same tag through the same pcscd, so the ratio is ReaderKit's own cost: scheduler hops, the radio's
/// lanes, the procedure, the NDEF decoding, the delegate call.
///
/// Also counts the APDUs one message takes, against the fewest MLe allows: the four that reach the NDEF
/// file (select the application, select and read the capability container, select the file) and
/// NLEN plus the message in reads of at most min(MLe, 256) bytes.
///
/// Skips with one line where pcscd with vpcd does not answer or Python 3 is missing.
func runPCSCBenchmarkAndPrint() {
  let messageSize = 4096
  let mle = 0xFF
  let reads = 40
  let rounds = 9
  let reader = "Virtual PCD 00 00"
  let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../Tests/PCSCTestSupport/virtual_tag.py").standardized
  guard FileManager.default.fileExists(atPath: script.path) else {
    print("PC/SC benchmark skipped: \(script.path) is not there (run from the package's checkout)")
    return
  }
  guard let probe = try? PCSCDirectConnection() else {
    print("PC/SC benchmark skipped: pcscd does not answer (`bash .ci/pcscd.sh start` starts one with vpcd)")
    return
  }
  _ = probe

  // The virtual tag, in its own process; it leaves when this process ends (its standard input closes).
  let card = Process()
  card.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  card.arguments = ["python3", script.path]
  let input = Pipe()
  let output = Pipe()
  card.standardInput = input
  card.standardOutput = output
  guard (try? card.run()) != nil else {
    print("PC/SC benchmark skipped: python3 cannot run \(script.path)")
    return
  }
  defer {
    try? input.fileHandleForWriting.write(contentsOf: Data("{\"cmd\": \"quit\"}\n".utf8))
    card.waitUntilExit()
  }
  let message = NDEFMessage(
    try! NDEFRecord.media(
      type: "application/octet-stream", payload: NDEFBytes(Array(repeating: 0x5A, count: messageSize - 30))))
  let bytes = message.encoded()
  let hex = bytes.map { String(format: "%02x", $0) }.joined()
  let present =
    "{\"cmd\": \"present\", \"port\": 35963, \"card\": {\"type\": \"t4\", \"message\": \"\(hex)\", "
    + "\"mle\": \(mle), \"fileSize\": 8192}}\n"
  try? input.fileHandleForWriting.write(contentsOf: Data(present.utf8))
  _ = output.fileHandleForReading.availableData  // its answer

  // The bare baseline: the procedure's APDUs, recorded once, sent again and again.
  guard let direct = try? PCSCDirectConnection() else {
    print("PC/SC benchmark skipped: pcscd does not answer")
    return
  }
  /// Connects, retrying for 10 s: vpcd's card appears when pcscd next polls the reader, and a session
  /// that just ended releases its card a moment later.
  func connect() -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while (try? direct.connect(reader)) == nil {
      guard ContinuousClock.now < deadline else { return false }
      Thread.sleep(forTimeInterval: 0.02)
    }
    return true
  }
  guard connect() else {
    print("PC/SC benchmark skipped: the virtual tag did not appear in \(reader)")
    return
  }
  /// The APDUs of one read, recorded as the procedure sends them; `nil` when the read fails (a card of
  /// an earlier run that pcscd has not yet seen leave answers nothing).
  func recordRead() -> [[UInt8]]? {
    var procedure = TagProcedure(.read, on: .type4)
    var apdus: [[UInt8]] = []
    var step = procedure.start()
    while case .transmit(let apdu) = step {
      apdus.append(apdu)
      step = procedure.receive((try? direct.transmit(apdu)) ?? [])
    }
    guard case .finished(.success(.read(let read))) = step, read == bytes else { return nil }
    return apdus
  }
  var recorded = recordRead()
  let retryUntil = ContinuousClock.now + .seconds(10)
  while recorded == nil, ContinuousClock.now < retryUntil {
    direct.disconnect()
    Thread.sleep(forTimeInterval: 0.1)
    recorded = connect() ? recordRead() : nil
  }
  guard let apdus = recorded else {
    print("PC/SC benchmark failed: a bare read did not return the message")
    return
  }
  let minimum = 4 + (2 + bytes.count + min(mle, 256) - 1) / min(mle, 256)
  func bare() -> Double? {
    let start = ContinuousClock.now
    for _ in 0..<reads {
      for apdu in apdus {
        guard let response = try? direct.transmit(apdu), response.suffix(2) == [0x90, 0x00] else { return nil }
      }
    }
    return (ContinuousClock.now - start).inSeconds / Double(reads)
  }

  // ReaderKit: a read-write session's tag, read again and again with readNDEF.
  func readerKit() -> Double? {
    direct.disconnect()
    var configuration = NFCSystemConfiguration()
    configuration.reader = reader
    configuration.lockDirectory = NSTemporaryDirectory() + "readerkit-bench-\(UUID())"
    let scheduler = LiveScheduler<ContinuousClock>(label: "reader-bench.pcsc")
    guard let radio = PCSCNFCRadio(configuration: configuration, scheduler: scheduler) else { return nil }
    let system = NFCReaderSystem(radio: radio, scheduler: scheduler)
    let timer = BenchReader(reads: reads, expected: message)
    let session = NFCNDEFReaderSession(delegate: timer, invalidateAfterFirstRead: false, system: system)
    session.begin()
    let finished = timer.done.wait(timeout: .now() + 60) == .success
    session.invalidate()
    guard finished, connect() else { return nil }
    return timer.perRead
  }

  var bareTimes: [Double] = []
  var kitTimes: [Double] = []
  for _ in 0..<rounds {
    guard let bareTime = bare() else {
      print("PC/SC benchmark failed: a bare SCardTransmit did not answer 90 00")
      return
    }
    bareTimes.append(bareTime)
    guard let kit = readerKit() else {
      print("PC/SC benchmark failed: the reader session did not read the tag \(reads) times")
      return
    }
    kitTimes.append(kit)
  }
  let (bareBest, kitBest) = (bareTimes.min()!, kitTimes.min()!)
  print(
    "PC/SC benchmark: a \(bytes.count)-byte NDEF message on a virtual Type 4 tag (MLe \(mle)) in vpcd, best of \(rounds) rounds of \(reads) reads, interleaved"
  )
  print(
    "  ReaderKit readNDEF: \(String(format: "%.3f", kitBest * 1000)) ms/message; bare SCardTransmit of the same APDUs: \(String(format: "%.3f", bareBest * 1000)) ms/message"
  )
  print("  APDUs per message: \(apdus.count); the fewest MLe \(mle) allows: \(minimum)")
  print("  ratio ReaderKit / bare: \(String(format: "%.2f", kitBest / bareBest))× (goal ≤ 1.2×)")
}

/// The app of the benchmark: connects to the tag it is given, reads it `reads` times one after another,
/// and keeps the time per read.
private final class BenchReader: NFCNDEFReaderSessionTagDelegate, Sendable {
  let reads: Int
  let expected: NDEFMessage
  let done = DispatchSemaphore(value: 0)
  private let result = Locked<Double>(0)

  init(reads: Int, expected: NDEFMessage) {
    self.reads = reads
    self.expected = expected
  }

  var perRead: Double { result.withLock { $0 } }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}

  func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
    let tag = tags[0]
    session.connect(to: tag) { [self] error in
      guard error == nil else { return }
      // One read to warm up, then the timed ones.
      tag.readNDEF { [self] _, _ in
        let start = ContinuousClock.now
        read(tag, left: reads) { [self] in
          result.withLock { $0 = (ContinuousClock.now - start).inSeconds / Double(reads) }
          done.signal()
        }
      }
    }
  }

  private func read(_ tag: NFCNDEFTag, left: Int, then finish: @escaping @Sendable () -> Void) {
    guard left > 0 else { return finish() }
    tag.readNDEF { [self] message, _ in
      guard let message, (try? NDEFMessage(message)) == expected else { return }
      read(tag, left: left - 1, then: finish)
    }
  }
}
