import PCSCKit
import ReaderSimulator
import Testing

@Suite struct Type4ProcedureTests {
  @Test func aReadSelectsTheApplicationTheContainerAndTheFileThenReadsLengthAndMessageTogether() {
    var tag = SimulatedType4Tag(message: pattern(20))
    let run = run(.read, on: &tag)
    #expect(run.outcome == .read(pattern(20)))
    #expect(
      run.commands.map(hex) == [
        "00 A4 04 00 07 D2 76 00 00 85 01 01 00", "00 A4 00 0C 02 E1 03", "00 B0 00 00 0F", "00 A4 00 0C 02 E1 04",
        "00 B0 00 00 FF",
      ])
  }

  @Test func aLongMessageIsReadInChunksOfMLe() {
    var tag = SimulatedType4Tag(message: pattern(1000), fileSize: 4096)
    tag.maxResponseData = 0x3B
    let run = run(.read, on: &tag)
    #expect(run.outcome == .read(pattern(1000)))
    let reads = run.commands.dropFirst(4)
    #expect(reads.allSatisfy { $0[1] == 0xB0 && $0[4] <= 0x3B })
    // NLEN and the message, 1002 bytes, in reads of 59 bytes: the fewest MLe allows.
    #expect(reads.count == (1002 + 58) / 59)
  }

  @Test func readsNeverAskPastTheFileTheContainerDeclares() {
    var tag = SimulatedType4Tag(message: pattern(5), fileSize: 16)
    let run = run(.read, on: &tag)
    #expect(run.outcome == .read(pattern(5)))
    #expect(run.commands.last.map(hex) == "00 B0 00 00 10")
  }

  @Test func aTagWithOnlyTheVersion1ApplicationIsReadThroughIt() {
    var tag = SimulatedType4Tag(message: pattern(3))
    tag.answersVersion2AID = false
    tag.version = 0x10
    let run = run(.read, on: &tag)
    #expect(run.outcome == .read(pattern(3)))
    #expect(
      run.commands[1].map { $0 } == [0x00, 0xA4, 0x04, 0x00, 0x07, 0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x00, 0x00])
  }

  @Test func aBlankTagReadsAsNoBytes() {
    var tag = SimulatedType4Tag(message: [])
    #expect(run(.read, on: &tag).outcome == .read([]))
  }

  @Test func theStatusComesFromTheContainer() {
    var tag = SimulatedType4Tag(message: [], fileSize: 1024)
    #expect(run(.queryStatus, on: &tag).outcome == .status(formatted: true, writable: true, capacity: 1022))
    tag.writeAccess = 0xFF
    #expect(run(.queryStatus, on: &tag).outcome == .status(formatted: true, writable: false, capacity: 1022))
  }

  @Test func aTagWithoutTheNDEFApplicationIsNotFormatted() {
    var tag = SimulatedType4Tag(message: [])
    tag.refusals[0xA4] = 0x6A82
    #expect(run(.queryStatus, on: &tag).outcome == .status(formatted: false, writable: false, capacity: 0))
    guard case .notNDEFFormatted = run(.read, on: &tag).failure else {
      Issue.record("a read of a tag without the NDEF application did not fail as not formatted")
      return
    }
  }

  @Test func aWriteClearsNLENThenWritesTheMessageInChunksOfMLcThenSetsNLEN() {
    var tag = SimulatedType4Tag(message: pattern(4))
    tag.maxCommandData = 0x40
    let message = pattern(150)
    let run = run(.write(message), on: &tag)
    #expect(run.outcome == .written)
    #expect(tag.message == message)
    let updates = run.commands.filter { $0[1] == 0xD6 }
    // Offset 0: NLEN 0 and the first 62 bytes; then 64, then 24; NLEN last.
    #expect(updates.map { Array($0[2...4]) } == [[0, 0, 64], [0, 64, 64], [0, 128, 24], [0, 0, 2]])
    #expect(Array(updates[0][5...6]) == [0, 0])
    #expect(Array(updates.last![5...6]) == [0, 150])
  }

  @Test func aWriteTornBeforeItsEndLeavesNLENZero() {
    var tag = SimulatedType4Tag(message: pattern(4))
    tag.maxCommandData = 0x40
    let run = run(.write(pattern(150)), on: &tag) { index, command, response in
      command[1] == 0xD6 && command[3] == 64 ? [] : response
    }
    #expect(run.failure == .tagLost(step: "UPDATE BINARY NDEF file"))
    #expect(tag.message == [])
  }

  @Test func aReadOnlyTagRefusesWritesBeforeAnyUpdate() {
    var tag = SimulatedType4Tag(message: pattern(4))
    tag.writeAccess = 0xFF
    let run = run(.write(pattern(10)), on: &tag)
    #expect(run.failure == .notWritable)
    #expect(!run.commands.contains { $0[1] == 0xD6 })
  }

  @Test func aMessageLargerThanTheFileIsRefusedWithTheCapacity() {
    var tag = SimulatedType4Tag(message: [], fileSize: 64)
    #expect(run(.write(pattern(63)), on: &tag).failure == .capacityExceeded(size: 63, capacity: 62))
    #expect(run(.write(pattern(62)), on: &tag).outcome == .written)
  }

  @Test func aLockSetsTheContainersWriteAccessToFF() {
    var tag = SimulatedType4Tag(message: pattern(4))
    let run = run(.lock, on: &tag)
    #expect(run.outcome == .locked)
    #expect(run.commands.last.map(hex) == "00 D6 00 0E 01 FF")
    #expect(run.commands.dropLast().last.map(hex) == "00 B0 00 00 0F")
    #expect(tag.writeAccess == 0xFF)
    #expect(runAgain(.lock, &tag).failure == .notWritable)
    #expect(runAgain(.write(pattern(2)), &tag).failure == .notWritable)
  }

  @Test func aTagThatRefusesTheLockSaysSoWithItsStatusWord() {
    var tag = SimulatedType4Tag(message: pattern(4))
    tag.isLockable = false
    #expect(run(.lock, on: &tag).failure == .updateFailed(0x6982, step: "UPDATE BINARY write access"))
  }

  @Test func anNLENPastTheFileIsMalformedAndNothingMoreIsRead() {
    var tag = SimulatedType4Tag(message: pattern(4), fileSize: 100)
    tag.file[0] = 0x01  // NLEN 260 in a 100-byte file
    let run = run(.read, on: &tag)
    #expect(run.failure == .malformed("NLEN 260 is past the end of the 100-byte NDEF file"))
    #expect(run.commands.count == 5)
  }

  @Test func aContainerClaimingMoreThanTheTagHoldsFailsWithTheTagsStatusWord() {
    var tag = SimulatedType4Tag(message: pattern(400), fileSize: 0x7000)
    tag.file = Array(tag.file.prefix(300))  // NLEN says 400; the file really holds 300 bytes
    tag.maxResponseData = 0x80
    let run = run(.read, on: &tag)
    #expect(run.failure == .statusWord(0x6282, step: "READ BINARY NDEF file"))
  }

  @Test func statusWordsOtherThan9000NameTheStepAndTheWord() {
    for (instruction, step) in [(UInt8(0xB0), "READ BINARY capability container"), (0xA4, "SELECT NDEF application")] {
      var tag = SimulatedType4Tag(message: pattern(4))
      tag.refusals[instruction] = 0x6F00
      #expect(run(.read, on: &tag).failure == .statusWord(0x6F00, step: step))
    }
  }

  @Test func aResponseShorterThanAStatusWordIsTheTagLeaving() {
    for cut in 0..<5 {
      var tag = SimulatedType4Tag(message: pattern(600))
      let run = run(.read, on: &tag) { index, _, response in index == cut ? Array(response.prefix(1)) : response }
      guard case .tagLost = run.failure else {
        Issue.record("exchange \(cut) cut short did not read as the tag leaving: \(String(describing: run.result))")
        continue
      }
      #expect(run.commands.count == cut + 1)
    }
  }

  @Test func anAnswerLongerThanAskedIsMalformed() {
    var tag = SimulatedType4Tag(message: pattern(20))
    let run = run(.read, on: &tag) { index, _, response in index == 2 ? [0] + response : response }
    #expect(run.failure == .malformed("READ BINARY capability container returned 16 bytes, more than it asked for"))
  }

  @Test func containerFieldsOutOfRangeAreRefused() {
    func failure(_ change: (inout [UInt8]) -> Void) -> TagFailure? {
      var tag = SimulatedType4Tag(message: pattern(4))
      var container = tag.container
      change(&container)
      tag.containerOverride = container
      return run(.read, on: &tag).failure
    }
    #expect(failure { $0[1] = 0x0E } == .malformed("CCLEN is 14; it is at least 15"))
    #expect(failure { $0[2] = 0x30 } == .notNDEFFormatted("mapping version 3.0 is not supported"))
    #expect(
      failure {
        $0[3] = 0; $0[4] = 0
      } == .malformed("MLe 0 or MLc 255 is zero"))
    #expect(failure { $0[7] = 0x06 } == .notNDEFFormatted("the capability container has no NDEF File Control TLV"))
    #expect(
      failure {
        $0[9] = 0xE1; $0[10] = 0x03
      } == .malformed("the NDEF file identifier E103 is reserved"))
    #expect(
      failure {
        $0[11] = 0xFF; $0[12] = 0xFF
      } == .malformed("the NDEF file size 65535 is outside 3-65534"))
    var tag = SimulatedType4Tag(message: pattern(4))
    let short = run(.read, on: &tag) { index, _, response in
      index == 2 ? Array(response.prefix(12)) + [0x90, 0x00] : response
    }
    #expect(short.failure.map { "\($0)" } == "malformed: the capability container holds 12 bytes; it has at least 15")
  }

  private func runAgain(_ operation: TagOperation, _ tag: inout SimulatedType4Tag) -> ProcedureRun {
    run(operation, on: &tag)
  }
}
