import Testing

@testable import DBus

@Suite struct DBusMessageTests {
  /// A signal with a `u` body, laid out by hand from the specification: every field aligned to 8,
  /// strings to 4, the body on an 8-byte boundary.
  static let signalBytes: [UInt8] =
    [0x6C, 0x04, 0x00, 0x01, 0x04, 0, 0, 0, 0x01, 0, 0, 0, 0x37, 0, 0, 0]
    + [0x01, 0x01, 0x6F, 0x00, 0x01, 0, 0, 0, 0x2F, 0x00, 0, 0, 0, 0, 0, 0]
    + [0x02, 0x01, 0x73, 0x00, 0x03, 0, 0, 0, 0x61, 0x2E, 0x62, 0x00, 0, 0, 0, 0]
    + [0x03, 0x01, 0x73, 0x00, 0x01, 0, 0, 0, 0x43, 0x00, 0, 0, 0, 0, 0, 0]
    + [0x08, 0x01, 0x67, 0x00, 0x01, 0x75, 0x00, 0x00, 0x07, 0, 0, 0]

  static let signal = DBusMessage(
    kind: .signal, serial: 1, path: "/", interface: "a.b", member: "C", body: [.uint32(7)])

  @Test func encodingLaysOutFieldsWithTheSpecificationsAlignment() {
    #expect(Self.signal.encoded() == Self.signalBytes)
  }

  @Test func decodingTheHandLaidSignalGivesItsFieldsAndBody() throws {
    #expect(try DBusMessage.decode(Self.signalBytes) == Self.signal)
  }

  /// What GLib's `GDBusMessage.to_blob` produced for the same signal (fields in GLib's order, the
  /// no-reply flag set), kept as bytes so the test needs no Python.
  @Test func decodesAMessageAnotherImplementationMarshalled() throws {
    let glib = hex(
      "6c04010104000000010000003200000001016f00010000002f000000000000000201730003000000612e6200000000000801670001750000"
        + "0301730001000000430000000000000007000000")
    var expected = Self.signal
    expected.flags = DBusMessage.noReplyExpected
    #expect(try DBusMessage.decode(glib) == expected)
  }

  @Test func bigEndianMessagesDecodeLikeLittleEndianOnes() throws {
    let message = DBusMessage(
      kind: .methodReturn, serial: 9, replySerial: 3, destination: ":1.7",
      body: [.int16(-2), .uint64(0x0102_0304_0506_0708), .double(-1.5), .string("été")])
    let big = Self.bigEndian(message)
    #expect(big[0] == UInt8(ascii: "B"))
    #expect(try DBusMessage.decode(big) == message)
  }

  @Test func nestedDictionariesVariantsAndStructuresRoundTrip() throws {
    let properties = DBusValue.stringVariantDictionary([
      "RSSI": .int16(-61), "Name": .string("CHB20-0001"), "UUIDs": .stringArray([]),
      "ManufacturerData": .array(
        .dictEntry(key: .uint16, value: .variant), [.dictEntry(.uint16(0x59), .variant(.bytes([1, 2, 3])))]),
      "Pair": .structure([.byte(1), .boolean(true), .objectPath("/org/bluez/hci0"), .signature("a{sv}")]),
    ])
    let objects = DBusValue.array(
      .dictEntry(
        key: .objectPath,
        value: .array(.dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant))))),
      [
        .dictEntry(
          .objectPath("/org/bluez/hci0/dev_AA"),
          .array(
            .dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant))),
            [.dictEntry(.string("org.bluez.Device1"), properties)]))
      ])
    let message = DBusMessage(kind: .methodReturn, serial: 4, replySerial: 2, body: [objects, .int64(-9), .unixFD(0)])
    #expect(message.signature == "a{oa{sa{sv}}}xh")
    let decoded = try DBusMessage.decode(message.encoded())
    #expect(decoded == message)
    let device = decoded.body[0].dictionary?["/org/bluez/hci0/dev_AA"]?.dictionary?["org.bluez.Device1"]?.dictionary
    #expect(device?["RSSI"]?.int == -61)
    #expect(device?["Name"]?.string == "CHB20-0001")
    #expect(device?["ManufacturerData"]?.integerDictionary?[0x59]?.byteArray == [1, 2, 3])
  }

  @Test func frameLengthComesFromTheFirstSixteenBytes() throws {
    #expect(try DBusMessage.frameLength(Self.signalBytes.prefix(15)) == nil)
    #expect(try DBusMessage.frameLength(Self.signalBytes.prefix(16)) == Self.signalBytes.count)
  }

  @Test func aMessageLongerThanTheLimitIsRefusedFromItsPrefix() {
    var bytes = Self.signalBytes
    bytes[4...7] = [0xFF, 0xFF, 0xFF, 0x7F]
    #expect(throws: DBusWireError.self) { try DBusMessage.frameLength(bytes.prefix(16), limit: 1 << 20) }
    #expect(throws: DBusWireError.self) { try DBusMessage.decode(bytes) }
  }

  @Test(arguments: [
    ("endianness", 0, 0x58 as UInt8), ("type", 1, 9), ("version", 3, 2), ("serial", 8, 0),
    ("boolean-like signature", 69, 0x62), ("padding", 27, 1), ("string terminator", 43, 0x41),
  ])
  func malformedHeadersAreRefusedWithAnOffset(_ name: String, _ index: Int, _ byte: UInt8) {
    var bytes = Self.signalBytes
    bytes[index] = byte
    if name == "serial" { bytes[8...11] = [0, 0, 0, 0] }
    #expect(throws: DBusWireError.self, "\(name)") { try DBusMessage.decode(bytes) }
  }

  @Test func everyTruncationIsRefusedWithoutACrash() {
    for length in 0..<Self.signalBytes.count {
      #expect(throws: DBusWireError.self) { try DBusMessage.decode(Array(Self.signalBytes.prefix(length))) }
    }
  }

  @Test func aSignalWithoutItsMemberIsRefused() throws {
    var message = Self.signal
    message.member = nil
    let error = try #require(throws: DBusWireError.self) { try DBusMessage.decode(message.encoded()) }
    #expect(error.code == .invalidHeader)
    #expect(error.message.contains("MEMBER"))
  }

  @Test func anArrayClaimingMoreThanItsBytesAllocatesNothingAndFails() {
    // A reply whose body is `ay` with a length of 60 MiB but 4 bytes of content.
    let message = DBusMessage(kind: .methodReturn, serial: 2, replySerial: 1, body: [.bytes([1, 2, 3, 4])])
    var bytes = message.encoded()
    let bodyStart = bytes.count - 8
    bytes[bodyStart..<(bodyStart + 4)] = [0, 0, 0xC0, 0x03]
    let error = try? #require(throws: DBusWireError.self) { try DBusMessage.decode(bytes) }
    #expect(error?.code == .truncated)
  }

  @Test func booleansOtherThanZeroOrOneAreRefused() {
    let message = DBusMessage(kind: .methodReturn, serial: 2, replySerial: 1, body: [.boolean(true)])
    var bytes = message.encoded()
    bytes[bytes.count - 4] = 2
    let error = try? #require(throws: DBusWireError.self) { try DBusMessage.decode(bytes) }
    #expect(error?.code == .invalidValue)
  }

  @Test func malformedObjectPathsAndInteriorNULsAreRefused() {
    for path in ["", "a", "/a/", "//", "/a//b", "/a-b"] {
      #expect(!DBusDecoder.isValidObjectPath(path), "\(path)")
    }
    for path in ["/", "/org/bluez/hci0", "/a_1/B2"] { #expect(DBusDecoder.isValidObjectPath(path)) }
    let message = DBusMessage(kind: .methodReturn, serial: 2, replySerial: 1, body: [.string("ab")])
    var bytes = message.encoded()
    bytes[bytes.count - 3] = 0
    #expect(throws: DBusWireError.self) { try DBusMessage.decode(bytes) }
  }

  @Test func variantsNestedDeeperThanTheLimitAreRefused() {
    var value = DBusValue.byte(1)
    for _ in 0..<70 { value = .variant(value) }
    let message = DBusMessage(kind: .methodReturn, serial: 2, replySerial: 1, body: [value])
    let error = try? #require(throws: DBusWireError.self) { try DBusMessage.decode(message.encoded()) }
    #expect(error?.code == .tooLong)
  }

  @Test func bytesAfterTheBodyAreRefused() throws {
    let message = DBusMessage(kind: .methodReturn, serial: 2, replySerial: 1, body: [.uint32(1)])
    // Four more bytes, counted in the body's length, that the signature `u` does not describe.
    var bytes = message.encoded() + [0, 0, 0, 0]
    bytes[4] = 8
    let error = try #require(throws: DBusWireError.self) { try DBusMessage.decode(bytes) }
    #expect(error.message.contains("follow the body"))
  }

  @Test func errorRepliesCarryTheirNameAndMessage() throws {
    let reply = DBusMessage(
      kind: .error, serial: 5, errorName: "org.bluez.Error.InProgress", replySerial: 3, body: [.string("busy")])
    let error = DBusError(reply: try DBusMessage.decode(reply.encoded()))
    #expect(error == DBusError(name: "org.bluez.Error.InProgress", message: "busy"))
    #expect(error.description == "org.bluez.Error.InProgress: busy")
  }

  // MARK: Helpers

  /// The same message marshalled big-endian, by flipping every number the little-endian encoding wrote.
  static func bigEndian(_ message: DBusMessage) -> [UInt8] {
    var encoder = BigEndianWriter()
    encoder.write(message)
    return encoder.bytes
  }

  func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
      let next = text.index(index, offsetBy: 2)
      bytes.append(UInt8(text[index..<next], radix: 16)!)
      index = next
    }
    return bytes
  }
}

/// A minimal big-endian marshaller for the types the big-endian test uses.
private struct BigEndianWriter {
  var bytes: [UInt8] = []

  mutating func pad(_ alignment: Int) {
    while bytes.count % alignment != 0 { bytes.append(0) }
  }

  mutating func number<T: FixedWidthInteger>(_ value: T) {
    pad(MemoryLayout<T>.size)
    withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
  }

  mutating func text(_ string: String) {
    number(UInt32(string.utf8.count))
    bytes.append(contentsOf: string.utf8)
    bytes.append(0)
  }

  mutating func value(_ value: DBusValue) {
    switch value {
    case .int16(let number): self.number(number)
    case .uint32(let number): self.number(number)
    case .uint64(let number): self.number(number)
    case .double(let number): self.number(number.bitPattern)
    case .string(let string): text(string)
    default: Issue.record("a value the test does not generate: \(value)")
    }
  }

  mutating func write(_ message: DBusMessage) {
    var body = BigEndianWriter()
    for item in message.body { body.value(item) }
    bytes = [UInt8(ascii: "B"), message.kind.rawValue, message.flags, 1]
    number(UInt32(body.bytes.count))
    number(message.serial)
    var fields = BigEndianWriter()
    fields.bytes = Array(repeating: 0, count: 16)
    func field(_ code: UInt8, _ signature: String, _ write: (inout BigEndianWriter) -> Void) {
      fields.pad(8)
      fields.bytes += [code, 1] + Array(signature.utf8) + [0]
      write(&fields)
    }
    if let reply = message.replySerial { field(5, "u") { $0.number(reply) } }
    if let destination = message.destination { field(6, "s") { $0.text(destination) } }
    field(8, "g") { writer in
      writer.bytes += [UInt8(message.signature.utf8.count)] + Array(message.signature.utf8) + [0]
    }
    number(UInt32(fields.bytes.count - 16))
    bytes += fields.bytes[16...]
    pad(8)
    bytes += body.bytes
  }
}
