import PCSCKit
import ReaderSimulator
import Testing

/// A procedure run against a simulated card, with every command it sent.
struct ProcedureRun {
  var result: Result<TagOutcome, TagFailure>?
  var commands: [[UInt8]] = []
  var responses: [[UInt8]] = []

  /// The outcome, or `nil` on failure.
  var outcome: TagOutcome? { try? result?.get() }

  /// The failure, or `nil` on success.
  var failure: TagFailure? {
    if case .failure(let failure) = result { return failure }
    return nil
  }
}

/// Runs `operation` on `card` until it finishes (or `limit` exchanges, a test failure). `answer`
/// may replace the card's response to exchange `index` (a tag leaving, a mutated answer).
func run<Card: SimulatedSmartCard>(
  _ operation: TagOperation, on card: inout Card, family: TagFamily? = nil, limit: Int = 10_000,
  answer: (_ index: Int, _ command: [UInt8], _ response: [UInt8]) -> [UInt8] = { $2 }
) -> ProcedureRun {
  var procedure = TagProcedure(operation, on: family ?? TagFamily(atr: card.atr))
  var run = ProcedureRun()
  var step = procedure.start()
  while run.commands.count <= limit {
    switch step {
    case .finished(let result):
      run.result = result
      if procedure.exchanges != run.commands.count {
        Issue.record("the procedure counts \(procedure.exchanges) exchanges; \(run.commands.count) were made")
      }
      return run
    case .transmit(let command):
      let response = answer(run.commands.count, command, card.respond(to: command))
      run.commands.append(command)
      run.responses.append(response)
      step = procedure.receive(response)
    }
  }
  return run
}

/// `00 A4 04 00 …` and friends as hex text, for readable expectations.
func hex(_ bytes: [UInt8]) -> String {
  bytes.map { byte in
    let digits = String(byte, radix: 16, uppercase: true)
    return digits.count == 1 ? "0" + digits : digits
  }.joined(separator: " ")
}

/// A message of `count` bytes whose content shows where each byte sits.
func pattern(_ count: Int) -> [UInt8] {
  (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
}
