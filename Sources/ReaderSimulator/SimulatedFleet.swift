import ReaderCore

/// Builds a believable, seeded set of readers for demos and tests.
public enum SimulatedFleet {
  /// `count` readers of mixed models at mixed distances, drawn from `seed`. The first is always a
  /// Chipper 2X within arm's reach (so proximity discovery finds something), the second an M2 on
  /// its charging dock.
  public static func readers(count: Int, seed: UInt64) -> [SimulatedReader] {
    var random = SeededRandom(seed: seed ^ 0x5EED_F1EE7)
    let models: [DeviceType] = [.chipper2X, .stripeM2, .wisePad3]
    let labels = ["Front counter", "Patio", "Bar", "Drive-through", "Pop-up stand", "Back office", "Kiosk", "Terrace"]
    return (0..<max(0, count)).map { index in
      let model = index < 2 ? models[index] : models[Int(random.next() % 3)]
      let number = 10_000 + Int(random.next() % 89_999)
      let distance = index == 0 ? 0.3 : 1.5 + random.nextUnit() * 12
      return SimulatedReader(
        serialNumber: "\(model.serialPrefix)-\(number)", deviceType: model,
        softwareVersion: "2.\(String(format2: Int(random.next() % 3))).00.\(10 + Int(random.next() % 20))",
        label: labels[index % labels.count], distance: distance, batteryLevel: 0.35 + random.nextUnit() * 0.6,
        isCharging: index == 1)
    }
  }
}

extension String {
  fileprivate init(format2 value: Int) {
    self = value < 10 ? "0\(value)" : "\(value)"
  }
}
