import ReaderCore
import ReaderSimulator
import Testing

@Suite struct SimulatedFleetTests {
  @Test func serialNumbersAreUniqueInAFleetOfOneHundredThousand() {
    let serials = SimulatedFleet.readers(count: 100_000, seed: 1).map(\.serialNumber)
    #expect(serials.count == 100_000)
    #expect(Set(serials).count == serials.count)
  }

  @Test func serialNumbersAreUniqueWhenOneModelOutgrowsFiveDigits() {
    // About 100,000 readers of each model: more than half the five-digit numbers, so wider ones are drawn.
    let readers = SimulatedFleet.readers(count: 300_000, seed: 5)
    #expect(Set(readers.map(\.serialNumber)).count == readers.count)
    #expect(readers.contains { $0.serialNumber.count > "STRM2-12345".count })
  }

  @Test func serialNumbersAreTheModelsPrefixAndDigits() {
    for reader in SimulatedFleet.readers(count: 1_000, seed: 3) {
      let prefix = reader.deviceType.serialPrefix + "-"
      #expect(reader.serialNumber.hasPrefix(prefix), "\(reader.serialNumber)")
      let digits = reader.serialNumber.dropFirst(prefix.count)
      #expect(digits.count >= 5 && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber), "\(digits)")
    }
  }

  @Test func theSameSeedGivesTheSameFleet() {
    let first = SimulatedFleet.readers(count: 20_000, seed: 9)
    let second = SimulatedFleet.readers(count: 20_000, seed: 9)
    #expect(first.count == second.count)
    let differing = first.indices.first { $0 >= second.count || first[$0] != second[$0] }
    #expect(differing == nil, "reader \(differing ?? -1) differs")
    let sameAsOtherSeed = SimulatedFleet.readers(count: 20, seed: 9) == SimulatedFleet.readers(count: 20, seed: 10)
    #expect(!sameAsOtherSeed)
  }

  @Test func aLargerFleetStartsWithTheSmallerOne() {
    let small = SimulatedFleet.readers(count: 50, seed: 11)
    let startsWithSmall = SimulatedFleet.readers(count: 10_000, seed: 11).starts(with: small)
    #expect(startsWithSmall)
  }

  @Test func smallFleetsKeepTheirSerialNumbers() {
    // The serials demos and recorded runs show for these seeds.
    #expect(
      SimulatedFleet.readers(count: 5, seed: 7).map(\.serialNumber) == [
        "CHB20-42674", "STRM2-64743", "STRM2-77813", "WPC32-30816", "WPC32-36915",
      ])
    #expect(
      SimulatedFleet.readers(count: 3, seed: 1).map(\.serialNumber) == ["CHB20-30262", "STRM2-44068", "STRM2-79529"])
  }

  @Test func theFirstReaderIsANearbyChipperAndTheSecondAChargingM2() {
    for seed: UInt64 in [0, 1, 7, 42, 1234] {
      let readers = SimulatedFleet.readers(count: 10, seed: seed)
      #expect(readers[0].deviceType == .chipper2X)
      #expect(readers[0].distance == 0.3)
      #expect(readers[0].deviceType.supportsProximityDiscovery)
      #expect(readers[1].deviceType == .stripeM2)
      #expect(readers[1].isCharging)
      #expect(readers.dropFirst(2).allSatisfy { !$0.isCharging })
      #expect(readers.dropFirst().allSatisfy { $0.distance >= 1.5 })
    }
  }

  @Test func aFleetOfNoneIsEmpty() {
    #expect(SimulatedFleet.readers(count: 0, seed: 1).isEmpty)
    #expect(SimulatedFleet.readers(count: -3, seed: 1).isEmpty)
  }
}
