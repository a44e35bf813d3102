import ReaderCore

/// Builds a believable, seeded set of readers for demos and tests.
public enum SimulatedFleet {
  /// `count` readers of mixed models at mixed distances, drawn from `seed`. The first is always a
  /// Chipper 2X within arm's reach (so proximity discovery finds something), the second an M2 on
  /// its charging dock.
  ///
  /// Serial numbers are the model's prefix and a number (`STRM2-44068`), unique within the fleet at
  /// any count, and the same for the same seed.
  public static func readers(count: Int, seed: UInt64) -> [SimulatedReader] {
    var random = SeededRandom(seed: seed ^ 0x5EED_F1EE7)
    let models: [DeviceType] = [.chipper2X, .stripeM2, .wisePad3]
    let labels = ["Front counter", "Patio", "Bar", "Drive-through", "Pop-up stand", "Back office", "Kiosk", "Terrace"]
    var numbers = [SerialNumbers](repeating: SerialNumbers(), count: models.count)
    return (0..<max(0, count)).map { index in
      let kind = index < 2 ? index : Int(random.next() % 3)
      let model = models[kind]
      let number = numbers[kind].claim(random.next())
      let distance = index == 0 ? 0.3 : 1.5 + random.nextUnit() * 12
      return SimulatedReader(
        serialNumber: "\(model.serialPrefix)-\(number)", deviceType: model,
        softwareVersion: "2.\(String(format2: Int(random.next() % 3))).00.\(10 + Int(random.next() % 20))",
        label: labels[index % labels.count], distance: distance, batteryLevel: 0.35 + random.nextUnit() * 0.6,
        isCharging: index == 1)
    }
  }
}

/// The serial numbers handed out to one model.
///
/// A draw picks a five-digit number; one already taken moves on to the next free one. Once half the
/// five-digit numbers are taken, draws pick six digits, and so on: a free number is always a few steps
/// away, however large the fleet. A draw that lands on a free number keeps it, so a small fleet's
/// serials are simply its draws.
private struct SerialNumbers {
  private var taken: Set<Int> = []
  /// How many numbers of each width (five digits, six, …) are taken.
  private var takenPerWidth: [Int] = []

  /// A number not handed out before, derived from `draw`.
  mutating func claim(_ draw: UInt64) -> Int {
    var width = 0
    while width < takenPerWidth.count, takenPerWidth[width] * 2 >= Self.span(width) { width += 1 }
    if width == takenPerWidth.count { takenPerWidth.append(0) }
    let lowest = Self.lowest(width)
    let span = Self.span(width)
    var number = lowest + Int(draw % UInt64(span))
    while taken.contains(number) {
      number = number + 1 == lowest + span ? lowest : number + 1
    }
    taken.insert(number)
    takenPerWidth[width] += 1
    return number
  }

  /// The smallest number of width `width`: 10,000 for five digits.
  private static func lowest(_ width: Int) -> Int {
    (0..<width).reduce(10_000) { value, _ in value * 10 }
  }

  /// How many numbers of width `width` may be drawn: 10,000...99,998 for five digits (the range serials
  /// always came from), then every number of six digits, seven, ….
  private static func span(_ width: Int) -> Int {
    width == 0 ? 89_999 : 9 * lowest(width)
  }
}

extension String {
  fileprivate init(format2 value: Int) {
    self = value < 10 ? "0\(value)" : "\(value)"
  }
}
