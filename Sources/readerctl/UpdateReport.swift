import Foundation
import ReaderKit

/// What `update` reports about a check and about the end of an install, in the same words for simulated
/// readers and real ones (`update --bluez`), so the two forms cannot drift apart.
enum UpdateReport {
  /// Whether the update that applies is required at `date`; `nil` when none applies.
  static func required(_ availability: UpdateAvailability, at date: Date) -> Bool? {
    switch UpdatePolicy().decide(availability, at: date) {
    case .upToDate: nil
    case .optional: false
    case .required: true
    }
  }

  /// The check's fields in the outcome: the update that applies and whether it is required (`null`
  /// both when none applies).
  static func fields(_ availability: UpdateAvailability, required: Bool?) -> [(String, JSONValue)] {
    [("update", availability.update?.json ?? .null), ("required", required.map(JSONValue.bool) ?? .null)]
  }

  /// One line of the check's report: `prefix` is a table row's name column (empty for a sentence).
  struct Line: Equatable {
    var prefix = ""
    var text: String
  }

  /// The check's report: what the reader runs, whether an update applies, and if one does its rows.
  static func check(
    serialNumber: String, deviceType: DeviceType, installed: InstalledSoftware, availability: UpdateAvailability,
    required: Bool, install: Bool, catalog: String, date: Date
  ) -> [Line] {
    var lines = [
      Line(
        text: "\(serialNumber) (\(deviceType.displayName)) runs \(installed.version) at location "
          + "\(installed.locationId); catalog \(catalog), as of \(date.formatted(.iso8601)).")
    ]
    guard let update = availability.update else {
      let expired = availability.installedVersionSupersededAt == nil ? "" : " (newer ones were, but they have expired)"
      lines.append(
        Line(
          text: "No update applies: no release newer than \(installed.version) for \(installed.deviceType) at "
            + "\(installed.locationId) is published\(expired)."))
      return lines
    }
    let when = update.requiredAt.formatted(.iso8601)
    lines.append(
      Line(
        text: required
          ? "Update \(update.deviceSoftwareVersion) applies and is required: it installs while the reader connects."
          : "Update \(update.deviceSoftwareVersion) applies and is optional until \(when): an app installs it with "
            + "installAvailableUpdate()."))
    var rows = [
      ("version", update.deviceSoftwareVersion), ("components", update.components.names.joined(separator: ", ")),
      ("estimate", "\(update.durationEstimate) (\(update.durationEstimate.rawValue))"),
      ("required", required ? "yes" : "no"), ("requiredAt", when),
      ("expiresAt", update.expiresAt?.formatted(.iso8601) ?? "never"),
    ]
    if let image = update.image {
      rows += [("image", image.url.absoluteString), ("size", "\(image.size) bytes"), ("sha256", image.sha256.hex)]
    }
    lines += rows.map { name, value in
      Line(prefix: "  " + name + String(repeating: " ", count: 12 - name.count), text: value)
    }
    if !install { lines.append(Line(text: "Add --install to install it.")) }
    return lines
  }

  /// Once the reader connected with the catalog: when the update is still to be installed (it was
  /// optional), says so and installs it with `installAvailableUpdate()`, as an app does, paced by `pace`;
  /// `stopping` runs before an interrupted install is cancelled. Returns what failed and why, or `nil`.
  static func installOptional(
    _ update: ReaderSoftwareUpdate, terminal: Terminal, session: any ReaderSession, pace: () -> Double = { 1 },
    stopping: () -> Void = {}
  ) -> (what: String, error: ReaderError)? {
    guard terminal.connectedReader?.deviceSoftwareVersion != update.deviceSoftwareVersion else { return nil }
    session.say(
      "Connected; \(update.deviceSoftwareVersion) is optional, so the app installs it with installAvailableUpdate().")
    let done = Outcome<ReaderError?>()
    let installing = terminal.installAvailableUpdate { done.set($0) }
    session.run(until: { done.isSet }, limit: .seconds(3600), paced: true, interruptible: true, pace: pace)
    if !done.isSet {
      stopping()
      installing.cancel { _ in }
      session.run(until: { done.isSet }, limit: .seconds(600), paced: false, interruptible: false)
    }
    switch done.value {
    case .some(nil): return nil
    case .some(let error?): return ("installing \(update.deviceSoftwareVersion) failed", error)
    case nil: return ("interrupted", .canceled("installAvailableUpdate"))
    }
  }

  /// The end of an install, once the reader connected with the catalog and any optional update was
  /// installed: success when `terminal`'s reader runs `update`, otherwise the failure that says the
  /// catalog no longer offered it. Returns the exit status.
  static func installed(
    _ update: ReaderSoftwareUpdate, serial: String, terminal: Terminal, session: any ReaderSession,
    _ fields: [(String, JSONValue)]
  ) -> Int32 {
    guard let final = terminal.connectedReader, final.deviceSoftwareVersion == update.deviceSoftwareVersion else {
      let running = terminal.connectedReader?.deviceSoftwareVersion ?? "?"
      session.console.error(
        "readerctl: \(update.deviceSoftwareVersion) was not installed: when the reader connected the catalog no "
          + "longer offered it; the reader runs \(running)\n")
      return session.finish(
        .failure(
          code: "updateNotInstalled",
          message: "\(update.deviceSoftwareVersion) was not installed; the reader runs \(running)",
          status: ExitStatus.failure))
    }
    session.say("\(serial) now runs \(update.deviceSoftwareVersion).")
    return session.finish(.success(fields + [("reader", final.json)]))
  }
}
