import Foundation
import NFCKit
import ReaderKit
import ReaderSimulator

/// What a station's world holds besides its readers: the releases its update catalog publishes over
/// the run, and the NFC tags a person may hold to the phone.
enum SoakCatalog {
  /// A catalog whose releases, for each model, come out every four to sixteen simulated hours (the
  /// first within half a day): versions `3.00.NN.00` (newer than any fleet reader's `2.x`), a third of them required
  /// at once and the rest one to five days after their release, one in ten incremental only (required,
  /// and not cancelable), with every estimate, and a small image each, checked against its SHA-256.
  static func make(seed: UInt64, deviceTypes: Set<DeviceType>, days: Int) -> InMemoryUpdateCatalog {
    let catalog = InMemoryUpdateCatalog(sha256: { SHA256Checksum.compute($0) })
    var random = SeededRandom(seed: seed ^ 0xCA7A_1065)
    let end = Double(max(days, 1) + 1) * 86_400
    for deviceType in deviceTypes.sorted(by: { $0.rawValue < $1.rawValue }) {
      var time = random.nextUnit() * 43_200
      var number = 1
      while time < end {
        let released = Terminal.simulationEpoch.addingTimeInterval(time)
        let required =
          random.nextUnit() < 1.0 / 3 ? released : released.addingTimeInterval(86_400 * (1 + random.nextUnit() * 4))
        let components: UpdateComponent =
          random.nextUnit() < 0.1
          ? .incremental : [[.firmware], [.config], [.keys], [.firmware, .config, .keys]][Int(random.next() % 4)]
        let estimates: [UpdateTimeEstimate] = [
          .estimateLessThan1Minute, .estimate1To2Minutes, .estimate2To5Minutes, .estimate5To15Minutes,
        ]
        let image = Data((0..<(256 + Int(random.next() % 1792))).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        let version = "3.\(twoDigits(number / 100)).\(twoDigits(number % 100)).00"
        guard let url = URL(string: "memory://soak/\(deviceType.rawValue)/\(version).bin"),
          let parsed = try? SoftwareVersion(version)
        else { break }
        catalog.add(
          UpdateRelease(
            deviceType: deviceType, version: parsed, releasedAt: released, requiredAt: required, components: components,
            durationEstimate: estimates[Int(random.next() % 4)],
            image: FirmwareImage(url: url, size: image.count, sha256: SHA256Checksum.compute(image))),
          image: image)
        number += 1
        time += 3600 * (4 + random.nextUnit() * 12)
      }
    }
    return catalog
  }

  private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

  /// The tags of every station: messages, a blank tag, an unformatted card, a damaged label and a tag
  /// too small to write to.
  static let tags: [SimulatedNFCTag] = {
    var tags: [SimulatedNFCTag] = [.blank(name: "blank"), .unformatted(name: "card")]
    if let hello = try? NDEFMessage(.text("hello")) { tags.append(SimulatedNFCTag(name: "hello", message: hello)) }
    if let poster = try? NDEFMessage(.uri("https://example.com/poster")) {
      tags.append(SimulatedNFCTag(name: "poster", message: poster))
    }
    if let small = try? NDEFMessage(.text("s")) {
      tags.append(SimulatedNFCTag(name: "small", message: small, capacity: 12))
    }
    tags.append(SimulatedNFCTag(name: "broken", ndef: [0xD1, 0x01, 0x08, 0x54, 0x02, 0x65, 0x6E]))
    return tags
  }()
}
