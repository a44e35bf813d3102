import Foundation
import ReaderKit

/// The persistence rule on one station, held against the disk itself: the saved reader is always
/// readable, and it is the last reader whose save was acknowledged (`didSaveReader` without an error)
/// or one saved since (a save cut short by the app's death or a power loss may or may not have landed).
///
/// The disk is read straight, not through the app: after every instant in which it changed, after a
/// power loss, and whenever a launch says what it found.
final class StoreTruth: @unchecked Sendable {
  // Confined to the thread that drives the clock.
  private unowned let station: SoakStation
  private let violations: SoakViolations
  private let store: FileReaderStore
  /// The last save the app was told succeeded.
  private var acknowledged: SavedReader?
  /// Readers connected since, whose saves may have landed.
  private var candidates: [SavedReader] = []
  private var checkedVersion = -1
  private(set) var reads = 0

  init(station: SoakStation, violations: SoakViolations) {
    self.station = station
    self.violations = violations
    store = FileReaderStore(fileURL: station.storeURL, fileSystem: station.disk)
  }

  private func fail(_ message: String) {
    violations.record(station.clock.elapsed, station.index, .store, message)
  }

  func event(_ event: TerminalEvent) {
    switch event.kind {
    case .didConnect(let reader):
      candidates.append(SavedReader(serialNumber: reader.serialNumber, locationId: reader.locationId ?? ""))
    case .didSaveReader(let serial, nil):
      acknowledged = candidates.last { $0.serialNumber == serial } ?? acknowledged
      candidates = []
    case .didStartLaunchReconnect(let serial):
      if let saved = read(), saved?.serialNumber != serial {
        fail("the launch looks for \(serial); the disk holds \(saved?.serialNumber ?? "nothing")")
      }
    case .didFindNoSavedReader:
      if let saved = read(), let saved { fail("the launch found nothing saved; the disk holds \(saved.serialNumber)") }
    default:
      break
    }
  }

  /// Reads the disk again if it changed (or when `force`), and checks what it holds.
  func instant(force: Bool = false) {
    let version = station.disk.version
    guard force || version != checkedVersion else { return }
    checkedVersion = version
    guard let saved = read() else { return }
    let allowed = (acknowledged.map { [$0] } ?? []) + candidates
    let lost = saved == nil && acknowledged != nil
    let foreign =
      saved.map { saved in
        !allowed.contains { $0.serialNumber == saved.serialNumber && $0.locationId == saved.locationId }
      } ?? false
    // One report per episode: the disk stays wrong until a new save lands.
    violations.episode(
      "lost", broken: lost, station.clock.elapsed, station.index, .store,
      "the saved reader \(acknowledged?.serialNumber ?? "") is gone from the disk")
    violations.episode(
      "foreign", broken: foreign, station.clock.elapsed, station.index, .store,
      "the disk holds \(saved?.serialNumber ?? "") at \(saved?.locationId ?? ""); the last acknowledged save is \(acknowledged?.serialNumber ?? "none")"
    )
  }

  /// The record on the disk (`nil` inside when there is none); `nil` when it cannot be read, reported.
  private func read() -> SavedReader?? {
    reads += 1
    do {
      return .some(try store.loadLastReader())
    } catch {
      fail("the saved reader cannot be read: \(error.code): \(error.message)")
      return nil
    }
  }
}
