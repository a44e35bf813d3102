import Foundation
import MCUmgr
import ReaderCore
import Testing

/// An `SMPReaderLink` over a `FakeSMPCentral` with one `FakeSMPDevice`, on a `VirtualClock`, and a log
/// of everything the terminal would have heard, in order.
final class SMPLinkHarness: Sendable {
  enum Heard: Equatable, Sendable {
    case link(ReaderLinkEvent)
    case radio(BluetoothEvent)
  }

  static let serial = "SMP-0001"
  let clock = VirtualClock()
  let central: FakeSMPCentral
  let device: FakeSMPDevice
  let link: SMPReaderLink
  private final class Record: Sendable {
    let heard = Locked<[(time: Duration, what: Heard)]>([])
    let notes = Locked<[String]>([])
  }

  private let record = Record()

  init(writeLength: Int = 244, timings: ImageUpgradeTimings = ImageUpgradeTimings()) {
    central = FakeSMPCentral(clock: clock)
    central.writeLength = writeLength
    device = FakeSMPDevice(serialNumber: Self.serial, clock: clock)
    central.add(device)
    link = SMPReaderLink(
      transports: central, scheduler: clock, sha256: TestImages.sha256, timings: timings,
      log: { [record] line in record.notes.withLock { $0.append(line) } })
    link.setLinkEventHandler { [record, clock] event in
      record.heard.withLock { $0.append((clock.elapsed, .link(event))) }
    }
    central.setEventHandler { [record, clock] event in
      guard case .advertisement = event else {
        return record.heard.withLock { $0.append((clock.elapsed, .radio(event))) }
      }
    }
  }

  var log: [(time: Duration, what: Heard)] { record.heard.withLock { $0 } }
  /// The lines the link logged (dropped frames).
  var logged: [String] { record.notes.withLock { $0 } }
  var events: [Heard] { log.map(\.what) }
  var progress: [Double] {
    events.compactMap { if case .link(.updateProgress(_, let value)) = $0 { value } else { nil } }
  }
  var finishes: [ReaderError?] {
    events.compactMap { if case .link(.updateFinished(_, let error)) = $0 { .some(error) } else { nil } }
  }
  var disconnects: [DisconnectReason] {
    events.compactMap { if case .radio(.didDisconnect(_, let reason)) = $0 { reason } else { nil } }
  }

  /// Opens the link, as the terminal's connect would.
  func connect() {
    central.connect(serialNumber: Self.serial)
    clock.advance(by: .seconds(1))
  }

  /// Runs `body` as a work item of the clock (the link's commands run there), then lets it settle.
  func onClock(_ body: @escaping @Sendable () -> Void) {
    clock.execute(body)
    clock.runUntilIdle()
  }

  static func update(_ version: String = "1.1.0") -> ReaderSoftwareUpdate {
    ReaderSoftwareUpdate(
      deviceSoftwareVersion: version, durationEstimate: .estimate1To2Minutes, components: .firmware,
      requiredAt: Date(timeIntervalSince1970: 0))
  }

  func install(_ image: [UInt8]) {
    onClock { [link] in
      link.installUpdate(serialNumber: Self.serial, update: Self.update(), image: Data(image))
    }
  }

  func cancel() { onClock { [link] in link.cancelUpdate(serialNumber: Self.serial) } }

  func reboot() { onClock { [link] in link.reboot(serialNumber: Self.serial) } }

  /// Advances the clock until `condition` holds or `limit` passes; returns whether it held.
  @discardableResult
  func run(until condition: () -> Bool, limit: Duration = .seconds(600), step: Duration = .milliseconds(10)) -> Bool {
    // By steps rather than until the clock reads the end: a clock that stops moving fails the test.
    for _ in 0..<Int((limit / step).rounded(.up)) {
      if condition() { return true }
      clock.advance(by: step)
    }
    return condition()
  }
}
