import MCUmgr
import Testing

@Suite struct MCUbootImageTests {
  @Test func readsTheHeaderAndTheSHA256TLVThatCoversHeaderBodyAndProtectedTLVs() throws {
    for protected in [false, true] {
      let bytes = TestImages.image(
        version: .init(major: 2, minor: 5, revision: 300, build: 7), bodySize: 777, headerSize: 512,
        protected: protected)
      let image = try MCUbootImage(parsing: bytes)
      #expect(image.headerSize == 512)
      #expect(image.imageSize == 777)
      #expect(image.protectedTLVSize == (protected ? 12 : 0))
      #expect(image.version.description == "2.5.300.7")
      #expect(image.sha256 == TestImages.sha256(Array(bytes[..<image.hashedLength])).bytes)
    }
    #expect(MCUbootImage.Version(major: 1, minor: 0, revision: 2).description == "1.0.2")
  }

  @Test func allowsPaddingAfterTheTLVArea() throws {
    let bytes = TestImages.image() + [UInt8](repeating: 0xFF, count: 100)
    #expect(try MCUbootImage(parsing: bytes).sha256 == TestImages.hash(TestImages.image()))
  }

  @Test func refusesWhatIsNotAnMCUbootImageItCanTrust() {
    let good = TestImages.image(bodySize: 100)
    var badMagic = good
    badMagic[0] = 0
    var smallHeader = good
    smallHeader[8] = 16
    var badTLVMagic = good
    badTLVMagic[132] = 0
    var longTLVArea = good
    longTLVArea[134] = 0xFF
    var protectedMismatch = TestImages.image(bodySize: 100, protected: true)
    protectedMismatch[10] = 16
    let noHash = Array(good[..<132]) + [0x07, 0x69, 0x0C, 0x00, 0x01, 0x00, 0x04, 0x00, 1, 2, 3, 4]
    let shortHash = Array(good[..<132]) + [0x07, 0x69, 0x0A, 0x00, 0x10, 0x00, 0x02, 0x00, 1, 2]
    let twoHashes =
      Array(good[..<132]) + [0x07, 0x69, 0x4C, 0x00] + ([0x10, 0x00, 0x20, 0x00] + [UInt8](repeating: 1, count: 32))
      + ([0x10, 0x00, 0x20, 0x00] + [UInt8](repeating: 1, count: 32))
    let cases: [([UInt8], MCUbootImageError)] = [
      (Array(good[..<31]), MCUbootImageError(.truncated("header"), at: 0)),
      (badMagic, MCUbootImageError(.badMagic(0x96F3_B800), at: 0)),
      (smallHeader, MCUbootImageError(.headerTooSmall(16), at: 8)),
      (Array(good[..<120]), MCUbootImageError(.truncated("body"), at: 120)),
      (Array(good[..<134]), MCUbootImageError(.truncated("TLV area"), at: 132)),
      (badTLVMagic, MCUbootImageError(.badTLVInfoMagic(0x6900), at: 132)),
      (longTLVArea, MCUbootImageError(.truncated("TLV area"), at: 132)),
      (protectedMismatch, MCUbootImageError(.protectedTLVSizeMismatch(header: 16, area: 12), at: 132)),
      (noHash, MCUbootImageError(.noSHA256, at: 132)),
      (shortHash, MCUbootImageError(.badSHA256Length(2), at: 136)),
      (twoHashes, MCUbootImageError(.multipleSHA256, at: 172)),
    ]
    for (bytes, expected) in cases {
      #expect(throws: expected, "\(expected)") { try MCUbootImage(parsing: bytes) }
    }
  }

  @Test func slotStatesRoundTripThroughTheStateBody() {
    let slots = [
      ImageSlotState(slot: 0, version: "1.0.0", hash: [1], confirmed: true, active: true),
      ImageSlotState(slot: 1, version: "1.1.0", hash: [2], pending: true),
    ]
    #expect(ImageSlotState.slots(in: ImageSlotState.body(slots)) == slots)
    #expect(ImageSlotState.slots(in: ["images": [["slot": "0"]]]) == nil)
    #expect(ImageSlotState.slots(in: ["images": [["slot": 0, "pending": 1]]]) == nil)
    #expect(ImageSlotState.slots(in: ["rc": 0]) == nil)
    #expect(ImageSlotState.slots(in: ["images": [["slot": 1]]]) == [ImageSlotState(slot: 1)])
  }
}
