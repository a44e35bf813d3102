import MCUmgr
import Testing

@Suite struct SMPFrameTests {
  /// An image-state read request as Zephyr's specification lays it out: OP 0, group 1, command 0, an
  /// empty map as the body.
  @Test func headerLaysOutTheFieldsBigEndianWithTheVersionInBitsThreeAndFour() {
    let frame = SMPFrame(operation: .read, group: 1, command: 0, sequence: 0x2A, body: [:])
    #expect(frame.bytes == [0x08, 0x00, 0x00, 0x01, 0x00, 0x01, 0x2A, 0x00, 0xA0])
    let legacy = SMPHeader(
      operation: .writeResponse, version: 0, length: 0x0102, group: 0x0304, sequence: 9, command: 5)
    #expect(legacy.bytes == [0x03, 0x00, 0x01, 0x02, 0x03, 0x04, 0x09, 0x05])
  }

  @Test func headerDecodesWhatItEncodes() throws {
    for operation in [SMPHeader.Operation.read, .readResponse, .write, .writeResponse] {
      for version in [UInt8(0), SMPHeader.version2] {
        let header = SMPHeader(
          operation: operation, version: version, flags: 0x80, length: 0xBEEF, group: 0xFF01, sequence: 255,
          command: 6)
        #expect(try SMPHeader(decoding: header.bytes) == header)
      }
    }
    #expect(SMPHeader.Operation.read.response == .readResponse)
    #expect(SMPHeader.Operation.write.response == .writeResponse)
    #expect(SMPHeader.Operation.writeResponse.response == nil)
  }

  @Test func headerRefusesWhatTheSpecificationDoesNotDefine() {
    #expect(throws: SMPFrameError(.truncatedHeader(count: 7))) {
      try SMPHeader(decoding: [UInt8](repeating: 0, count: 7))
    }
    #expect(throws: SMPFrameError(.reservedBitsSet(0x21))) { try SMPHeader(decoding: [0x21, 0, 0, 0, 0, 0, 0, 0]) }
    #expect(throws: SMPFrameError(.invalidOperation(4))) { try SMPHeader(decoding: [0x04, 0, 0, 0, 0, 0, 0, 0]) }
    #expect(throws: SMPFrameError(.unsupportedVersion(2))) { try SMPHeader(decoding: [0x11, 0, 0, 0, 0, 0, 0, 0]) }
  }

  @Test func fragmentsSplitAFrameIntoWritesOfTheMaximumLengthInOrder() {
    let frame = SMPFrame(operation: .write, group: 1, command: 1, sequence: 1, body: ["data": .bytes(Array(0..<50))])
    let pieces = frame.fragments(maximumWriteLength: 20)
    #expect(pieces.map(\.count) == [20, 20, 20, frame.bytes.count - 60])
    #expect(pieces.flatMap { $0 } == frame.bytes)
    #expect(frame.fragments(maximumWriteLength: 1_000) == [frame.bytes])
  }

  @Test func reassemblerJoinsAResponseSplitOverNotifications() {
    let frame = SMPFrame(operation: .readResponse, group: 1, command: 0, sequence: 3, body: ["images": [["slot": 0]]])
    var reassembler = SMPReassembler()
    let pieces = frame.fragments(maximumWriteLength: 5)
    for piece in pieces.dropLast() {
      let (frames, error) = reassembler.append(piece)
      #expect(frames.isEmpty && error == nil)
    }
    let (frames, error) = reassembler.append(pieces.last!)
    #expect(frames == [frame] && error == nil)
    #expect(reassembler.pendingCount == 0)
  }

  @Test func reassemblerSplitsANotificationThatEndsOneFrameAndStartsTheNext() {
    let first = SMPFrame(operation: .writeResponse, group: 1, command: 1, sequence: 1, body: ["off": 100])
    let second = SMPFrame(operation: .writeResponse, group: 1, command: 1, sequence: 2, body: ["off": 200])
    let stream = first.bytes + second.bytes
    var reassembler = SMPReassembler()
    let cut = first.bytes.count + 3
    #expect(reassembler.append(Array(stream[..<cut])).frames == [first])
    #expect(reassembler.pendingCount == 3)
    #expect(reassembler.append(Array(stream[cut...])).frames == [second])
  }

  @Test func reassemblerDropsItsBufferOnAMalformedHeaderAndStartsAfreshWithTheNextNotification() {
    var reassembler = SMPReassembler()
    let (frames, error) = reassembler.append([0xE3, 0, 0, 0, 0, 1, 0, 0, 0xA0])
    #expect(frames.isEmpty)
    #expect(error == SMPFrameError(.reservedBitsSet(0xE3)))
    #expect(reassembler.pendingCount == 0)
    let good = SMPFrame(operation: .writeResponse, group: 0, command: 5, sequence: 7, body: [:])
    #expect(reassembler.append(good.bytes).frames == [good])
  }

  @Test func reassemblerRefusesABodyLongerThanItsBoundBeforeBufferingIt() {
    var reassembler = SMPReassembler(maximumBodyLength: 64)
    let (frames, error) = reassembler.append([0x03, 0, 0xFF, 0xFF, 0, 1, 0, 1])
    #expect(frames.isEmpty)
    #expect(error == SMPFrameError(.bodyTooLong(length: 0xFFFF, limit: 64)))
    #expect(reassembler.pendingCount == 0)
  }

  @Test func resetDropsAPartialFrame() {
    var reassembler = SMPReassembler()
    _ = reassembler.append([0x03, 0, 0, 4])
    #expect(reassembler.pendingCount == 4)
    reassembler.reset()
    #expect(reassembler.pendingCount == 0)
  }
}
