import NFCKit
import ReaderKit

/// The run's event log, as a digest: every terminal event, NFC event, fault and app launch or death,
/// with its station and simulated time, folded into a 64-bit FNV-1a hash. Two runs with the same
/// seed and schedule give the same digest: the replay is byte for byte. With `keepsLines` the lines
/// themselves are kept too (for `--trace` and the tests).
final class SoakLog: @unchecked Sendable {
  // Confined to the thread that drives the clock.
  private(set) var digest: UInt64 = 0xCBF2_9CE4_8422_2325
  private(set) var count = 0
  private(set) var lines: [String] = []
  let keepsLines: Bool
  /// How many entries one simulated instant may hold before the run counts as runaway: time that
  /// never moves again would otherwise hang the caller.
  static let runawayLimit = 200_000
  /// Called once, when an instant holds more than `runawayLimit` entries.
  var onRunaway: (() -> Void)?
  private var instant: (time: Duration, count: Int) = (.zero, 0)

  init(keepsLines: Bool) { self.keepsLines = keepsLines }

  func terminalEvent(_ event: TerminalEvent, station: Int) {
    add(event.time, station, event.name, subject(of: event.kind))
  }

  func nfcEvent(_ event: NFCReaderEvent, station: Int) {
    add(event.time, station, event.name, "session \(event.session)")
  }

  func fault(_ fault: SoakFault, at time: Duration, state: SoakState) {
    if keepsLines { return add(time, fault.station, "fault", "\(fault) in \(state)") }
    add(time, fault.station, "fault", state.rawValue)
    mix(UInt64(fault.id))
  }

  func note(_ station: Int, _ text: String) {
    add(nil, station, text, "")
  }

  private func subject(of kind: TerminalEvent.Kind) -> String {
    switch kind {
    case .didConnect(let reader), .didDisconnect(let reader, _), .didStartReconnect(let reader, _),
      .readerDidSucceedReconnect(let reader), .readerDidFailReconnect(let reader, _),
      .didFinishInstallingUpdate(let reader, _, _), .didStartInstallingUpdate(let reader, _, _):
      reader.serialNumber
    case .didReportReaderSoftwareUpdateProgress(_, let progress): "\(progress)"
    case .didChangeConnectionStatus(let status): status.rawValue
    case .didFailToConnect(let serial, let error): "\(serial) \(error.code)"
    case .didSaveReader(let serial, let error): "\(serial) \(error.map { "\($0.code)" } ?? "ok")"
    default: ""
    }
  }

  private func add(_ time: Duration?, _ station: Int, _ name: String, _ detail: String) {
    count += 1
    if let time {
      instant = time == instant.time ? (time, instant.count + 1) : (time, 1)
      if instant.count == Self.runawayLimit { onRunaway?() }
    }
    if let time { mix(UInt64(bitPattern: time.components.seconds)) }
    if let time { mix(UInt64(bitPattern: time.components.attoseconds / 1_000_000)) }
    mix(UInt64(station))
    for byte in name.utf8 { mix(UInt64(byte)) }
    for byte in detail.utf8 { mix(UInt64(byte)) }
    if keepsLines { lines.append("\(time.map(\.soakText) ?? "-") s\(station) \(name) \(detail)") }
  }

  private func mix(_ value: UInt64) {
    digest = (digest ^ value) &* 0x0000_0100_0000_01B3
  }
}
