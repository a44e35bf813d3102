import Foundation

/// The JSON shape of one `TransportRecord` line: one flat object whose fields depend on `record` and
/// `name`, so that the lines read well and stay stable when a case gains a field.
struct TransportRecordLine: Codable {
  /// The time since the recording started, in seconds, to the attosecond: `"12.5"`,
  /// `"1811.368189515651700"` (a string, since a JSON number read as a `Double` would round it).
  var t: String?
  var record: String
  var header: TransportRecordHeader?
  var name: String?
  var serialNumber: String?
  var deviceType: DeviceType?
  var signalStrength: Int?
  var info: Info?
  var error: ErrorLine?
  var reason: DisconnectReason?
  var isPoweredOn: Bool?
  var progress: Double?
  var level: Double?
  var isCharging: Bool?
  var update: ReaderSoftwareUpdate?
  var imageSize: Int?
  var imageSHA256: SHA256Checksum?

  /// `ReaderInfo`'s fields.
  struct Info: Codable {
    var deviceSoftwareVersion: String?
    var batteryLevel: Double?
    var isCharging: Bool?
    var label: String?
    var deviceInformation: DeviceInformation?
  }

  /// A `ReaderError`: its code by name, message, context, and cause.
  struct ErrorLine: Codable {
    var code: String
    var message: String
    var context: [String: String]
    var cause: Cause?

    /// An `ErrorCause`: `kind` names the case, the other fields hold its values.
    struct Cause: Codable {
      var kind: String
      var value: Int64?
      var name: String?
      var message: String?
      var group: Int?
    }
  }

  private init(record: String, at time: Duration?, name: String?) {
    self.record = record
    self.name = name
    t = time.map(Self.text)
  }

  // MARK: Writing

  init(_ record: TransportRecord) {
    switch record {
    case .header(let header):
      self.init(record: "header", at: nil, name: nil)
      self.header = header
    case .command(let time, let command):
      self.init(record: "command", at: time, name: nil)
      set(command)
    case .event(let time, .central(let event)):
      self.init(record: "event", at: time, name: nil)
      set(event)
    case .event(let time, .link(let event)):
      self.init(record: "event", at: time, name: nil)
      set(event)
    }
  }

  private mutating func set(_ command: TransportCommand) {
    switch command {
    case .startScan: name = "startScan"
    case .stopScan: name = "stopScan"
    case .connect(let serial): (name, serialNumber) = ("connect", serial)
    case .cancelConnect(let serial): (name, serialNumber) = ("cancelConnect", serial)
    case .disconnect(let serial): (name, serialNumber) = ("disconnect", serial)
    case .flashLEDs(let serial): (name, serialNumber) = ("flashLEDs", serial)
    case .reboot(let serial): (name, serialNumber) = ("reboot", serial)
    case .cancelUpdate(let serial): (name, serialNumber) = ("cancelUpdate", serial)
    case .installUpdate(let serial, let update, let size, let sha256):
      (name, serialNumber, self.update, imageSize, imageSHA256) = ("installUpdate", serial, update, size, sha256)
    }
  }

  private mutating func set(_ event: BluetoothEvent) {
    switch event {
    case .radioStateChanged(let on): (name, isPoweredOn) = ("radioStateChanged", on)
    case .advertisement(let advertisement):
      (name, serialNumber, deviceType, signalStrength) = (
        "advertisement", advertisement.serialNumber, advertisement.deviceType, advertisement.signalStrength
      )
      info = Info(advertisement.info)
    case .didConnect(let serial, let details): (name, serialNumber, info) = ("didConnect", serial, Info(details))
    case .didFailToConnect(let serial, let failure):
      (name, serialNumber, error) = ("didFailToConnect", serial, ErrorLine(failure))
    case .didDisconnect(let serial, let why): (name, serialNumber, reason) = ("didDisconnect", serial, why)
    }
  }

  private mutating func set(_ event: ReaderLinkEvent) {
    switch event {
    case .updateProgress(let serial, let value): (name, serialNumber, progress) = ("updateProgress", serial, value)
    case .updateFinished(let serial, let failure):
      (name, serialNumber, error) = ("updateFinished", serial, failure.map(ErrorLine.init))
    case .batteryDidChange(let serial, let value, let charging):
      (name, serialNumber, level, isCharging) = ("batteryDidChange", serial, value, charging)
    case .rebootResponse(let serial, let failure):
      (name, serialNumber, error) = ("rebootResponse", serial, failure.map(ErrorLine.init))
    }
  }

  /// `seconds.fraction`, the fraction to the attosecond without trailing zeros (at least one digit).
  static func text(_ time: Duration) -> String {
    let (seconds, attoseconds) = time.components
    var fraction = String(attoseconds)
    fraction = String(repeating: "0", count: max(0, 18 - fraction.count)) + fraction
    while fraction.count > 1, fraction.hasSuffix("0") { fraction.removeLast() }
    return "\(seconds).\(fraction)"
  }

  /// A time `text(_:)` wrote: digits, a point, 1 to 18 digits; nil for anything else (or a negative time).
  static func duration(_ text: String) -> Duration? {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 2, (1...18).contains(parts[1].count), (1...18).contains(parts[0].count),
      parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
      let seconds = Int64(parts[0]), let fraction = Int64(parts[1])
    else { return nil }
    var attoseconds = fraction
    for _ in parts[1].count..<18 { attoseconds *= 10 }
    return Duration(secondsComponent: seconds, attosecondsComponent: attoseconds)
  }

  // MARK: Reading

  func decoded() throws(ReaderError) -> TransportRecord {
    if record == "header" {
      guard let header else { throw missing("header") }
      return .header(header)
    }
    guard let time = t.flatMap(Self.duration) else { throw missing("t") }
    switch record {
    case "command": return .command(at: time, try command())
    case "event":
      if let event = try centralEvent() { return .event(at: time, .central(event)) }
      return .event(at: time, .link(try linkEvent()))
    default:
      throw ReaderError(.invalidConfiguration, "unknown record '\(record)'", context: ["record": record])
    }
  }

  private func command() throws(ReaderError) -> TransportCommand {
    switch name {
    case "startScan": return .startScan
    case "stopScan": return .stopScan
    case "connect": return .connect(serialNumber: try serial())
    case "cancelConnect": return .cancelConnect(serialNumber: try serial())
    case "disconnect": return .disconnect(serialNumber: try serial())
    case "flashLEDs": return .flashLEDs(serialNumber: try serial())
    case "reboot": return .reboot(serialNumber: try serial())
    case "cancelUpdate": return .cancelUpdate(serialNumber: try serial())
    case "installUpdate":
      guard let update else { throw missing("update") }
      return .installUpdate(serialNumber: try serial(), update: update, imageSize: imageSize, imageSHA256: imageSHA256)
    default: throw unknownName()
    }
  }

  /// The radio's event the line holds; nil when it holds a reader link's.
  private func centralEvent() throws(ReaderError) -> BluetoothEvent? {
    switch name {
    case "radioStateChanged":
      guard let isPoweredOn else { throw missing("isPoweredOn") }
      return .radioStateChanged(isPoweredOn: isPoweredOn)
    case "advertisement":
      guard let deviceType else { throw missing("deviceType") }
      guard let signalStrength else { throw missing("signalStrength") }
      return .advertisement(
        Advertisement(
          serialNumber: try serial(), deviceType: deviceType, signalStrength: signalStrength,
          info: info?.readerInfo ?? ReaderInfo()))
    case "didConnect": return .didConnect(serialNumber: try serial(), info: info?.readerInfo ?? ReaderInfo())
    case "didFailToConnect":
      guard let error else { throw missing("error") }
      return .didFailToConnect(serialNumber: try serial(), error: try error.readerError())
    case "didDisconnect":
      guard let reason else { throw missing("reason") }
      return .didDisconnect(serialNumber: try serial(), reason: reason)
    default: return nil
    }
  }

  private func linkEvent() throws(ReaderError) -> ReaderLinkEvent {
    switch name {
    case "updateProgress":
      guard let progress else { throw missing("progress") }
      return .updateProgress(serialNumber: try serial(), progress: progress)
    case "updateFinished": return .updateFinished(serialNumber: try serial(), error: try error?.readerError())
    case "batteryDidChange":
      guard let level else { throw missing("level") }
      return .batteryDidChange(serialNumber: try serial(), level: level, isCharging: isCharging ?? false)
    case "rebootResponse": return .rebootResponse(serialNumber: try serial(), error: try error?.readerError())
    default: throw unknownName()
    }
  }

  private func serial() throws(ReaderError) -> String {
    guard let serialNumber else { throw missing("serialNumber") }
    return serialNumber
  }

  private func missing(_ field: String) -> ReaderError {
    ReaderError(
      .invalidConfiguration, "a recorded \(name ?? record) has no valid \(field)",
      context: ["record": record, "field": field])
  }

  private func unknownName() -> ReaderError {
    ReaderError(
      .invalidConfiguration, "unknown \(record) '\(name ?? "")'", context: ["record": record, "name": name ?? ""])
  }
}

extension TransportRecordLine.Info {
  init(_ info: ReaderInfo) {
    self.init(
      deviceSoftwareVersion: info.deviceSoftwareVersion, batteryLevel: info.batteryLevel, isCharging: info.isCharging,
      label: info.label, deviceInformation: info.deviceInformation)
  }

  var readerInfo: ReaderInfo {
    ReaderInfo(
      deviceSoftwareVersion: deviceSoftwareVersion, batteryLevel: batteryLevel, isCharging: isCharging, label: label,
      deviceInformation: deviceInformation)
  }
}

extension TransportRecordLine.ErrorLine {
  init(_ error: ReaderError) {
    self.init(
      code: error.code.description, message: error.message, context: error.context, cause: error.cause.map(Cause.init))
  }

  func readerError() throws(ReaderError) -> ReaderError {
    guard let known = ReaderError.Code(name: code) else {
      throw ReaderError(.invalidConfiguration, "unknown error code '\(code)'", context: ["code": code])
    }
    return ReaderError(known, message, context: context, cause: cause?.errorCause)
  }
}

extension TransportRecordLine.ErrorLine.Cause {
  init(_ cause: ErrorCause) {
    switch cause {
    case .errno(let value): self.init(kind: "errno", value: Int64(value))
    case .statusWord(let word): self.init(kind: "statusWord", value: Int64(word))
    case .httpStatus(let status): self.init(kind: "httpStatus", value: Int64(status))
    case .pcsc(let code): self.init(kind: "pcsc", value: Int64(code))
    case .dbus(let name, let message): self.init(kind: "dbus", name: name, message: message)
    case .smp(let rc, let group): self.init(kind: "smp", value: Int64(rc), group: group.map(Int.init))
    case .other(let text): self.init(kind: "other", message: text)
    }
  }

  /// The cause, or `.other` describing what it was when it does not read.
  var errorCause: ErrorCause {
    switch (kind, value) {
    case ("errno", let value?) where Int32(exactly: value) != nil: .errno(Int32(value))
    case ("statusWord", let value?) where UInt16(exactly: value) != nil: .statusWord(UInt16(value))
    case ("httpStatus", let value?) where Int(exactly: value) != nil: .httpStatus(Int(value))
    case ("pcsc", let value?) where UInt32(exactly: value) != nil: .pcsc(UInt32(value))
    case ("dbus", _): .dbus(name: name ?? "", message: message ?? "")
    case ("smp", let value?) where Int(exactly: value) != nil:
      .smp(rc: Int(value), group: group.flatMap { UInt16(exactly: $0) })
    default: .other(message ?? kind)
    }
  }
}
