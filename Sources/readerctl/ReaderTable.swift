import ReaderKit

/// The table of discovered readers.
enum ReaderTable {
  /// The rows for `readers`, nearest first, with a header.
  static func lines(_ readers: [Reader]) -> [String] {
    let header = row("#", "Serial", "Model", "Label", "Signal", "Battery", "Software")
    let rows = readers.enumerated().map { index, reader in
      row(
        "\(index + 1)", reader.serialNumber, reader.deviceType.displayName, reader.label ?? "-",
        reader.signalStrength.map { "\($0) dBm \(bars($0))" } ?? "-",
        reader.batteryLevel.map { "\(Int(($0 * 100).rounded())) %\(reader.isCharging == true ? " +" : "")" } ?? "-",
        reader.deviceSoftwareVersion ?? "-")
    }
    return [header] + (rows.isEmpty ? ["  (none)"] : rows)
  }

  private static func row(_ cells: String...) -> String {
    let widths = [3, 13, 17, 15, 16, 9, 0]
    return "  " + zip(cells, widths).map { cell, width in cell.padding(to: width) }.joined(separator: " ")
  }

  /// Four steps of signal strength, for people.
  private static func bars(_ rssi: Int) -> String {
    let filled = rssi >= -50 ? 4 : rssi >= -60 ? 3 : rssi >= -70 ? 2 : rssi >= -80 ? 1 : 0
    return String(repeating: "#", count: filled) + String(repeating: ".", count: 4 - filled)
  }
}

extension String {
  /// The string, space-padded on the right to `width` characters (never cut).
  fileprivate func padding(to width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}
