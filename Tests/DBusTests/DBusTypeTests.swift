import Testing

@testable import DBus

@Suite struct DBusTypeTests {
  @Test func signaturesParseIntoCompleteTypesAndPrintBack() throws {
    let types = try DBusType.parse("oa{sa{sv}}(iby)aay")
    #expect(types.count == 4)
    #expect(types.map(\.signature).joined() == "oa{sa{sv}}(iby)aay")
    #expect(types[1] == .array(.dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant)))))
  }

  @Test(arguments: ["a", "(", "()", "(i", "{sv}", "a{vs}", "a{s}", "a{sss}", "z", "a{(i)s}"])
  func malformedSignaturesAreRefused(_ signature: String) {
    #expect(throws: DBusWireError.self) { try DBusType.parse(signature) }
  }

  @Test func nestingAndLengthLimitsHold() throws {
    #expect(try DBusType.parse(String(repeating: "a", count: 32) + "y").count == 1)
    #expect(throws: DBusWireError.self) { try DBusType.parse(String(repeating: "a", count: 33) + "y") }
    #expect(try DBusType.parse(String(repeating: "(", count: 32) + "y" + String(repeating: ")", count: 32)).count == 1)
    #expect(throws: DBusWireError.self) {
      try DBusType.parse(String(repeating: "(", count: 33) + "y" + String(repeating: ")", count: 33))
    }
    #expect(throws: DBusWireError.self) { try DBusType.parse(String(repeating: "y", count: 256)) }
  }

  @Test func aVariantsSignatureMustBeOneCompleteType() {
    #expect(throws: DBusWireError.self) { try DBusType.parseSingle("ss") }
    #expect(throws: DBusWireError.self) { try DBusType.parseSingle("") }
    #expect((try? DBusType.parseSingle("a{sv}")) == .array(.dictEntry(key: .string, value: .variant)))
  }

  @Test func alignmentsFollowTheSpecification() {
    let expected: [(DBusType, Int)] = [
      (.byte, 1), (.signature, 1), (.variant, 1), (.int16, 2), (.uint16, 2), (.boolean, 4), (.int32, 4),
      (.string, 4), (.objectPath, 4), (.array(.uint64), 4), (.unixFD, 4), (.int64, 8), (.double, 8),
      (.structure([.byte]), 8), (.dictEntry(key: .byte, value: .byte), 8),
    ]
    for (type, alignment) in expected { #expect(type.alignment == alignment, "\(type)") }
  }

  @Test func accessorsLookThroughVariantsAndRefuseOtherTypes() {
    let value = DBusValue.variant(.variant(.int16(-40)))
    #expect(value.int == -40)
    #expect(value.string == nil)
    #expect(DBusValue.uint64(.max).int == nil)
    #expect(DBusValue.stringArray(["a", "b"]).stringArray == ["a", "b"])
    #expect(DBusValue.bytes([]).byteArray == [])
  }
}

@Suite struct DBusAddressTests {
  @Test func unixPathsAndAbstractNamesParseWithEscapes() {
    #expect(DBusAddress.parse("unix:path=/tmp/a%20b,guid=12") == [.unixPath("/tmp/a b")])
    #expect(DBusAddress.parse("tcp:host=x;unix:abstract=/tmp/dbus-X") == [.unixAbstract("/tmp/dbus-X")])
    #expect(DBusAddress.parse("unix:path=/a;unix:path=/b") == [.unixPath("/a"), .unixPath("/b")])
    #expect(DBusAddress.parse("unix:path=%zz").isEmpty)
    #expect(DBusAddress.parse("").isEmpty)
  }

  @Test func theSystemBusComesFromTheEnvironmentOrTheWellKnownSocket() {
    #expect(DBusAddress.systemBus(environment: [:]) == [.defaultSystemBus])
    #expect(DBusAddress.systemBus(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/x"]) == [.unixPath("/x")])
  }
}
