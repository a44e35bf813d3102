import PCSCKit
import ReaderSimulator
import Testing

@Suite struct Type2ProcedureTests {
  @Test func theATROfAStorageCardNamesItsFamily() {
    #expect(TagFamily(atr: SimulatedType2Tag.ultralightATR) == .type2)
    #expect(TagFamily(atr: SimulatedType4Tag.isoDEPATR) == .type4)
    var classic = SimulatedType2Tag.ultralightATR
    classic[14] = 0x01
    #expect(TagFamily(atr: classic) == .otherStorageCard(name: 0x0001))
  }

  @Test func aReadTakesTheHeaderThenOnlyThePagesTheTLVsNeed() {
    var tag = SimulatedType2Tag.ntag213(message: pattern(20))
    let run = run(.read, on: &tag)
    #expect(run.outcome == .read(pattern(20)))
    // 16 bytes from page 4 hold the TLV header and 14 bytes; 8 more are in the next 16.
    #expect(run.commands.map(hex) == ["FF B0 00 00 10", "FF B0 00 04 10", "FF B0 00 08 10"])
  }

  @Test func aMessageOf255BytesOrMoreHasAThreeByteLength() {
    var tag = SimulatedType2Tag.ntag216(message: pattern(300))
    #expect(run(.read, on: &tag).outcome == .read(pattern(300)))
    #expect(Array(tag.memory[16..<20]) == [0x03, 0xFF, 0x01, 0x2C])
  }

  @Test func lockAndMemoryControlAndNullTLVsAreSteppedOver() {
    let area: [UInt8] =
      [0x00, 0x01, 0x03, 0xA0, 0x10, 0x44, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00]
      + SimulatedType2Tag.tlv(pattern(30))
    var tag = SimulatedType2Tag(pages: 45, dataAreaSize: 144, area: area)
    #expect(run(.read, on: &tag).outcome == .read(pattern(30)))
    #expect(run(.queryStatus, on: &tag).outcome == .status(formatted: true, writable: true, capacity: 144 - 12 - 2))
  }

  @Test func theStatusIsTheContainersAccessAndTheRoomAfterTheTLVsOffset() {
    var blank = SimulatedType2Tag.ntag213(message: [])
    #expect(run(.queryStatus, on: &blank).outcome == .status(formatted: true, writable: true, capacity: 142))
    #expect(run(.read, on: &blank).outcome == .read([]))
    var readOnly = SimulatedType2Tag.ntag213(message: pattern(3), access: 0x0F)
    #expect(run(.queryStatus, on: &readOnly).outcome == .status(formatted: true, writable: false, capacity: 142))
    var large = SimulatedType2Tag.ntag216(message: [])
    #expect(run(.queryStatus, on: &large).outcome == .status(formatted: true, writable: true, capacity: 868))
  }

  @Test func anythingWithoutTheMagicNumberOrAnNDEFTLVIsNotFormatted() {
    var noMagic = SimulatedType2Tag.ntag213(message: pattern(3))
    noMagic.memory[12] = 0x00
    #expect(run(.queryStatus, on: &noMagic).outcome == .status(formatted: false, writable: false, capacity: 0))
    #expect(
      run(.read, on: &noMagic).failure == .notNDEFFormatted("the capability container's magic number is 00, not E1"))
    var terminated = SimulatedType2Tag(pages: 45, dataAreaSize: 144, area: [0x00, 0xFE, 0x03, 0x00])
    #expect(
      run(.read, on: &terminated).failure
        == .notNDEFFormatted("a terminator TLV at byte 1 comes before any NDEF Message TLV"))
    var empty = SimulatedType2Tag(pages: 45, dataAreaSize: 144, area: [])
    #expect(run(.read, on: &empty).failure == .notNDEFFormatted("the data area has no NDEF Message TLV"))
    // Only the data area is read looking for it: 144 bytes, 9 reads, and the header.
    #expect(run(.read, on: &empty).commands.count == 10)
  }

  @Test func aTLVPastTheDataAreaIsMalformed() {
    var tag = SimulatedType2Tag(pages: 45, dataAreaSize: 144, area: [0x03, 0xFF, 0x10, 0x00])
    #expect(
      run(.read, on: &tag).failure == .malformed("TLV 03 at byte 0 claims 4096 bytes, past the 144-byte data area"))
    var lock = SimulatedType2Tag(pages: 45, dataAreaSize: 144, area: [0x01, 0x90])
    #expect(
      run(.read, on: &lock).failure == .malformed("TLV 01 at byte 0 claims 144 bytes, past the 144-byte data area"))
  }

  @Test func aContainerClaimingMoreThanTheTagHoldsFailsOnTheFirstPageThatIsNotThere() {
    var tag = SimulatedType2Tag(pages: 16, dataAreaSize: 2040, area: [0x03, 0xFF, 0x07, 0xF0])
    let run = run(.read, on: &tag)
    #expect(run.failure == .statusWord(0x6300, step: "READ data area"))
    #expect(run.commands.last.map(hex) == "FF B0 00 10 10")
  }

  @Test func aWriteClearsTheLengthThenWritesTheMessageThenSetsTheLength() {
    var tag = SimulatedType2Tag.ntag213(message: pattern(3))
    let message = pattern(10)
    let run = run(.write(message), on: &tag)
    #expect(run.outcome == .written)
    // Page 4 holds the TLV's length: first with 0, then pages 5 to 7 (the terminator in 7), then page 4
    // with the length.
    #expect(
      run.commands.suffix(5).map(hex) == [
        "FF D6 00 04 04 03 00 \(hex(Array(message[0..<2])))", "FF D6 00 05 04 \(hex(Array(message[2..<6])))",
        "FF D6 00 06 04 \(hex(Array(message[6..<10])))", "FF D6 00 07 04 FE 00 00 00",
        "FF D6 00 04 04 03 0A \(hex(Array(message[0..<2])))",
      ])
    #expect(runAgain(.read, &tag).outcome == .read(message))
    #expect(tag.memory[16 + 12] == 0xFE)
  }

  @Test func aWriteKeepsTheTLVsBeforeTheMessageAndUsesThreeLengthBytesFrom255() {
    let area: [UInt8] = [0x01, 0x03, 0xA0, 0x10, 0x44] + SimulatedType2Tag.tlv([])
    var tag = SimulatedType2Tag(pages: 231, dataAreaSize: 872, area: area)
    let message = pattern(400)
    #expect(run(.write(message), on: &tag).outcome == .written)
    #expect(Array(tag.memory[16..<25]) == [0x01, 0x03, 0xA0, 0x10, 0x44, 0x03, 0xFF, 0x01, 0x90])
    #expect(runAgain(.read, &tag).outcome == .read(message))
  }

  @Test func aWriteTornBeforeItsEndLeavesAnEmptyMessage() {
    var tag = SimulatedType2Tag.ntag213(message: pattern(3))
    let run = run(.write(pattern(40)), on: &tag) { index, command, response in
      command[1] == 0xD6 && command[3] == 8 ? [] : response
    }
    #expect(run.failure == .tagLost(step: "WRITE page 8"))
    #expect(runAgain(.read, &tag).outcome == .read([]))
  }

  @Test func writesAreRefusedOnAReadOnlyTagAndPastTheCapacity() {
    var readOnly = SimulatedType2Tag.ntag213(message: pattern(3), access: 0x0F)
    #expect(run(.write(pattern(3)), on: &readOnly).failure == .notWritable)
    var tag = SimulatedType2Tag.ntag213(message: [])
    #expect(run(.write(pattern(143)), on: &tag).failure == .capacityExceeded(size: 143, capacity: 142))
    #expect(runAgain(.write(pattern(142)), &tag).outcome == .written)
    #expect(runAgain(.read, &tag).outcome == .read(pattern(142)))
  }

  @Test func aLockSetsTheContainerThenTheDynamicThenTheStaticLockBits() {
    var tag = SimulatedType2Tag.ntag213(message: pattern(3))
    let run = run(.lock, on: &tag)
    #expect(run.outcome == .locked)
    let writes = run.commands.filter { $0[1] == 0xD6 }.map { Int($0[3]) }
    #expect(writes == [3, 40, 2])
    #expect(tag.memory[15] == 0x0F)
    #expect(Array(tag.memory[160..<162]) == [0xFF, 0x0F])
    #expect(Array(tag.memory[10..<12]) == [0xFF, 0xFF])
    #expect(runAgain(.queryStatus, &tag).outcome == .status(formatted: true, writable: false, capacity: 142))
    #expect(runAgain(.lock, &tag).failure == .notWritable)
    // The pages are locked too, not only the container's word.
    #expect(tag.respond(to: [0xFF, 0xD6, 0x00, 0x04, 0x04, 1, 2, 3, 4]) == [0x63, 0x00])
    #expect(tag.respond(to: [0xFF, 0xD6, 0x00, 0x27, 0x04, 1, 2, 3, 4]) == [0x63, 0x00])
  }

  @Test func aLockControlTLVPlacesTheDynamicLockBits() {
    // Dynamic lock bits at byte 80 (page 5 in units of 16 bytes), 10 bits.
    let area: [UInt8] = [0x01, 0x03, 0x50, 0x0A, 0x34] + SimulatedType2Tag.tlv(pattern(4))
    var tag = SimulatedType2Tag(pages: 45, dataAreaSize: 144, area: area)
    #expect(run(.lock, on: &tag).outcome == .locked)
    #expect(Array(tag.memory[80..<82]) == [0xFF, 0x03])
  }

  @Test func aResponseShorterThanAStatusWordIsTheTagLeaving() {
    for cut in 0..<4 {
      var tag = SimulatedType2Tag.ntag213(message: pattern(100))
      let run = run(.read, on: &tag) { index, _, response in index == cut ? [] : response }
      guard case .tagLost = run.failure else {
        Issue.record("exchange \(cut) cut short did not read as the tag leaving: \(String(describing: run.result))")
        continue
      }
    }
  }

  @Test func aCardWithoutAnNDEFMappingIsNotFormattedWithoutACommand() {
    var classic = SimulatedType2Tag.ntag213(message: pattern(3))
    classic.atr[14] = 0x01
    let read = run(.read, on: &classic)
    #expect(read.failure == .notNDEFFormatted("the card has no NFC Forum NDEF mapping"))
    #expect(read.commands.isEmpty)
    #expect(run(.queryStatus, on: &classic).outcome == .status(formatted: false, writable: false, capacity: 0))
  }

  private func runAgain(_ operation: TagOperation, _ tag: inout SimulatedType2Tag) -> ProcedureRun {
    run(operation, on: &tag)
  }
}
