import PCSCKit
import ReaderCore
import ReaderSimulator
import Testing

/// Hostile tags: random answers, and real answers mutated at random. Whatever comes back, a procedure
/// finishes (success or a typed failure) within a bound set by the mapping's limits, never crashes and
/// never returns more message than the tag could hold. Each test prints its seed; a failure names it.
@Suite struct TagProcedureFuzzTests {
  static let operations: [TagOperation] = [.queryStatus, .read, .write(pattern(300)), .lock]
  static let families: [TagFamily] = [.type4, .type2]

  @Test func randomAnswersEndEveryProcedure() {
    let seed = UInt64.random(in: 1...UInt64.max)
    print("TagProcedureFuzzTests.randomAnswersEndEveryProcedure seed \(seed)")
    var random = SeededRandom(seed: seed)
    for round in 0..<3_000 {
      let operation = Self.operations[round % Self.operations.count]
      let family = Self.families[(round / Self.operations.count) % Self.families.count]
      var procedure = TagProcedure(operation, on: family)
      var step = procedure.start()
      var exchanges = 0
      while case .transmit = step {
        exchanges += 1
        guard exchanges < 70_000 else {
          Issue.record("seed \(seed), round \(round): \(operation.name) on \(family) did not end")
          return
        }
        // Mostly a success status word after random data, so procedures go deep; sometimes anything.
        let count = Int(random.next() % 40)
        var answer = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        if random.next() % 4 != 0 { answer += [0x90, 0x00] }
        step = procedure.receive(answer)
      }
      check(step, seed: seed, round: round)
    }
  }

  @Test func mutatedAnswersOfRealTagsEndEveryProcedure() {
    let seed = UInt64.random(in: 1...UInt64.max)
    print("TagProcedureFuzzTests.mutatedAnswersOfRealTagsEndEveryProcedure seed \(seed)")
    var random = SeededRandom(seed: seed)
    for round in 0..<1_500 {
      let operation = Self.operations[round % Self.operations.count]
      let mutationRate = 1 + random.next() % 12
      let mutate: (Int, [UInt8], [UInt8]) -> [UInt8] = { _, _, response in
        guard random.next() % mutationRate == 0 else { return response }
        var bytes = response
        switch random.next() % 6 {
        case 0: if !bytes.isEmpty { bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(1 << (random.next() % 8)) }
        case 1: bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count + 1))))
        case 2: bytes += (0..<Int(random.next() % 20)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        case 3: if bytes.count >= 2 { bytes[bytes.count - 2] = UInt8(truncatingIfNeeded: random.next()) }
        case 4: if bytes.count > 2 { bytes[Int(random.next() % UInt64(bytes.count - 2))] = 0xFF }
        default: bytes = (0..<Int(random.next() % 30)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        }
        return bytes
      }
      let result: ProcedureRun
      if round % 2 == 0 {
        var tag = SimulatedType4Tag(message: pattern(Int(random.next() % 700)), fileSize: 1024)
        tag.maxResponseData = 1 + Int(random.next() % 300)
        result = run(operation, on: &tag, limit: 70_000, answer: mutate)
      } else {
        var tag = SimulatedType2Tag.ntag216(message: pattern(Int(random.next() % 700)))
        result = run(operation, on: &tag, limit: 70_000, answer: mutate)
      }
      guard let outcome = result.result else {
        Issue.record("seed \(seed), round \(round): \(operation.name) did not end in 70,000 exchanges")
        return
      }
      check(.finished(outcome), seed: seed, round: round)
    }
  }

  private func check(_ step: TagStep, seed: UInt64, round: Int) {
    guard case .finished(let result) = step else { return }
    switch result {
    case .success(.read(let bytes)):
      #expect(bytes.count <= 0xFFFE, "seed \(seed), round \(round): \(bytes.count) bytes read")
    case .success(.status(_, _, let capacity)):
      #expect((0...0xFFFE).contains(capacity), "seed \(seed), round \(round): capacity \(capacity)")
    case .success, .failure:
      break
    }
  }
}
