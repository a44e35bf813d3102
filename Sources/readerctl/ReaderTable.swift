import ReaderKit

/// The table of discovered readers.
///
/// ```
///    #  Serial       Model             Label          Signal        Battery  Software
///    1  CHB20-30262  Chipper 2X BT     Front counter  -35 dBm ####  65 %     2.01.00.16
///    2  STRM2-44068  Stripe Reader M2  Patio          -69 dBm ##..  82 % +   2.00.00.27
///   + charging
/// ```
enum ReaderTable {
  /// A column: its header, its cell for a reader, and whether its cells line up on the right.
  private struct Column: Sendable {
    var header: String
    var cell: @Sendable (_ index: Int, _ reader: Reader) -> String
    var alignRight = false
  }

  /// The columns in the order they are shown.
  private static let columns = [
    Column(header: "#", cell: { index, _ in "\(index + 1)" }, alignRight: true),
    Column(header: "Serial", cell: { _, reader in reader.serialNumber }),
    Column(header: "Model", cell: { _, reader in reader.deviceType.displayName }),
    Column(header: "Label", cell: { _, reader in reader.label ?? "-" }),
    Column(header: "Signal", cell: { _, reader in reader.signalStrength.map { "\($0) dBm \(bars($0))" } ?? "-" }),
    Column(header: "Battery", cell: { _, reader in battery(reader) }),
    Column(header: "Software", cell: { _, reader in reader.deviceSoftwareVersion ?? "-" }),
  ]

  /// The columns dropped, in this order, until the table fits its width: the least useful first.
  private static let dropOrder = ["Software", "Label", "Model", "Battery", "Signal"]

  /// The lines for `readers`, nearest first: a header, a row per reader, and a legend for the `+`
  /// that marks a charging battery when a row shows one.
  ///
  /// - Parameter space: the most lines, and the widest line, the table may take (`nil`: no limit).
  ///   Columns are dropped, least useful first, until the rows fit the width (a line still too wide
  ///   is cut); readers that do not fit the height are counted on a last line, "… and N more".
  static func lines(_ readers: [Reader], fitting space: TerminalSize? = nil) -> [String] {
    let width = space?.columns ?? Int.max
    let height = space?.rows ?? Int.max
    let charging = { (readers: ArraySlice<Reader>) in readers.contains { $0.isCharging == true } }
    var shown = readers.count
    if 1 + shown + (charging(readers[...]) ? 1 : 0) > height {
      // Room for the header and the line that counts the others, and for the legend if a row needs it.
      shown = max(0, height - 2)
      if shown > 0, charging(readers.prefix(shown)) { shown -= 1 }
    }
    let visible = readers.prefix(shown)
    var kept = columns
    var table = render(visible, kept)
    for name in dropOrder where table.contains(where: { $0.count > width }) {
      kept.removeAll { $0.header == name }
      table = render(visible, kept)
    }
    if readers.isEmpty { table.append("  (none)") }
    if charging(visible), kept.contains(where: { $0.header == "Battery" }) { table.append("  + charging") }
    if shown < readers.count { table.append("  … and \(readers.count - shown) more") }
    if shown == 0 && !readers.isEmpty {
      table = ["  \(readers.count) readers (the terminal is too small to list them)"]
    }
    return table.prefix(height).map { $0.fitted(to: width) }
  }

  /// The header and rows with `columns`, each as wide as its widest cell, two spaces apart.
  private static func render(_ readers: ArraySlice<Reader>, _ columns: [Column]) -> [String] {
    let cells =
      [columns.map(\.header)]
      + readers.enumerated().map { index, reader in columns.map { $0.cell(index, reader) } }
    let widths = columns.indices.map { column in cells.map { $0[column].count }.max() ?? 0 }
    return cells.map { row in
      var line = "  "
      for (column, cell) in row.enumerated() {
        let padding = String(repeating: " ", count: widths[column] - cell.count)
        line += (column == 0 ? "" : "  ") + (columns[column].alignRight ? padding + cell : cell + padding)
      }
      while line.last == " " { line.removeLast() }
      return line
    }
  }

  /// `82 %`, and `82 % +` when charging.
  private static func battery(_ reader: Reader) -> String {
    reader.batteryLevel.map { "\(Int(($0 * 100).rounded())) %\(reader.isCharging == true ? " +" : "")" } ?? "-"
  }

  /// Four steps of signal strength, for people.
  private static func bars(_ rssi: Int) -> String {
    let filled = rssi >= -50 ? 4 : rssi >= -60 ? 3 : rssi >= -70 ? 2 : rssi >= -80 ? 1 : 0
    return String(repeating: "#", count: filled) + String(repeating: ".", count: 4 - filled)
  }
}
