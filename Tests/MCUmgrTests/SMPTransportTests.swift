import MCUmgr
import Testing

@Suite struct SMPTransportTests {
  @Test func gattIdentifiersAreZephyrsSMPServiceAndCharacteristic() {
    #expect(SMPGATT.serviceUUID == "8D53DC1D-1DB7-4CD3-868B-8A527460AA84")
    #expect(SMPGATT.characteristicUUID == "DA2E7828-FBCE-4E01-AE9E-261174997C48")
  }
}
