import Foundation
internal import ReaderCore

/// The JSON form of recording lines, both ways.
extension NFCRadioRecord {
  static func json(_ entry: Entry) -> [String: Any] {
    switch entry {
    case .policy(let policy):
      return [
        "policy": [
          "sessionTimeout": policy.sessionTimeout.map { $0.inSeconds as Any } ?? NSNull(),
          "whenBusy": policy.whenBusy.rawValue,
        ]
      ]
    case .readingAvailable(let available): return ["readingAvailable": available]
    case .command(let command): return json(command)
    case .event(let event): return json(event)
    case .note(let note): return ["note": note]
    }
  }

  static func entry(_ object: [String: JSONValue]) throws(RecordFormatError) -> Entry {
    if let policy = object["policy"]?.members {
      guard let name = policy["whenBusy"]?.string, let busy = NFCSystemPolicy.BusyBehavior(rawValue: name) else {
        throw RecordFormatError("a policy without whenBusy")
      }
      let timeout = policy["sessionTimeout"]?.double.flatMap(Duration.seconds(exactly:))
      return .policy(NFCSystemPolicy(sessionTimeout: timeout, whenBusy: busy))
    }
    if let available = object["readingAvailable"]?.bool { return .readingAvailable(available) }
    if let note = object["note"]?.string { return .note(note) }
    if let name = object["command"]?.string { return .command(try command(name, object)) }
    if let name = object["event"]?.string { return .event(try event(name, object)) }
    throw RecordFormatError("neither a policy, a command, an event nor a note")
  }

  // MARK: Commands

  private static func json(_ command: NFCRadioCommand) -> [String: Any] {
    switch command {
    case .startPolling(let round): ["command": "startPolling", "round": round.description]
    case .stopPolling(let round): ["command": "stopPolling", "round": round.description]
    case .connect(let tag, let request): tagCommand("connect", tag, request)
    case .queryNDEFStatus(let tag, let request): tagCommand("queryNDEFStatus", tag, request)
    case .readNDEF(let tag, let request): tagCommand("readNDEF", tag, request)
    case .writeNDEF(let bytes, let tag, let request): tagCommand("writeNDEF", tag, request, ["bytes": hex(bytes)])
    case .writeLock(let tag, let request): tagCommand("writeLock", tag, request)
    case .presentSheet(let message): ["command": "presentSheet", "alertMessage": message]
    case .updateSheet(let message): ["command": "updateSheet", "alertMessage": message]
    case .dismissSheet(let message): ["command": "dismissSheet", "errorMessage": message ?? NSNull()]
    }
  }

  private static func tagCommand(
    _ name: String, _ tag: NFCRadioTagID, _ request: NFCRadioRequestID, _ extra: [String: Any] = [:]
  ) -> [String: Any] {
    extra.merging(["command": name, "tag": tag.rawValue, "request": request.description]) { $1 }
  }

  private static func command(_ name: String, _ object: [String: JSONValue]) throws(RecordFormatError)
    -> NFCRadioCommand
  {
    switch name {
    case "startPolling": return .startPolling(try requestID(object, "round"))
    case "stopPolling": return .stopPolling(try requestID(object, "round"))
    case "connect": return .connect(try tagID(object), try requestID(object, "request"))
    case "queryNDEFStatus": return .queryNDEFStatus(try tagID(object), try requestID(object, "request"))
    case "readNDEF": return .readNDEF(try tagID(object), try requestID(object, "request"))
    case "writeNDEF":
      return .writeNDEF(try bytes(object["bytes"]), try tagID(object), try requestID(object, "request"))
    case "writeLock": return .writeLock(try tagID(object), try requestID(object, "request"))
    case "presentSheet": return .presentSheet(object["alertMessage"]?.string ?? "")
    case "updateSheet": return .updateSheet(object["alertMessage"]?.string ?? "")
    case "dismissSheet": return .dismissSheet(object["errorMessage"]?.string)
    default: throw RecordFormatError("unknown command `\(name)`")
    }
  }

  // MARK: Events

  private static func json(_ event: NFCRadioEvent) -> [String: Any] {
    switch event {
    case .pollingStarted(let round): ["event": "pollingStarted", "round": round.description]
    case .pollingFailed(let round, let failure):
      ["event": "pollingFailed", "round": round.description, "failure": json(failure)]
    case .tagsDetected(let round, let tags):
      ["event": "tagsDetected", "round": round.description, "tags": tags.map(\.rawValue)]
    case .tagRemoved(let round, let tag): ["event": "tagRemoved", "round": round.description, "tag": tag.rawValue]
    case .response(let request, let response):
      ["event": "response", "request": request.description, "response": json(response)]
    case .userCanceled(let round): ["event": "userCanceled", "round": round.description]
    case .terminated: ["event": "terminated"]
    }
  }

  private static func event(_ name: String, _ object: [String: JSONValue]) throws(RecordFormatError) -> NFCRadioEvent {
    switch name {
    case "pollingStarted": return .pollingStarted(try requestID(object, "round"))
    case "pollingFailed":
      return .pollingFailed(try requestID(object, "round"), try failure(object["failure"], depth: 0))
    case "tagsDetected":
      guard case .array(let tags)? = object["tags"], tags.count <= 64 else {
        throw RecordFormatError("tags is not a list")
      }
      var ids: [NFCRadioTagID] = []
      for tag in tags { ids.append(try tagID(["tag": tag])) }
      return .tagsDetected(try requestID(object, "round"), ids)
    case "tagRemoved": return .tagRemoved(try requestID(object, "round"), try tagID(object))
    case "response": return .response(try requestID(object, "request"), try response(object["response"]))
    case "userCanceled": return .userCanceled(try requestID(object, "round"))
    case "terminated": return .terminated
    default: throw RecordFormatError("unknown event `\(name)`")
    }
  }

  private static func json(_ response: NFCRadioResponse) -> [String: Any] {
    switch response {
    case .connected: ["connected": true]
    case .status(let status):
      [
        "status": [
          "formatted": status.isNDEFFormatted, "writable": status.isWritable, "capacity": status.capacity,
        ]
      ]
    case .read(let bytes): ["read": hex(bytes)]
    case .written: ["written": true]
    case .locked: ["locked": true]
    case .failed(let failure): ["failed": json(failure)]
    }
  }

  private static func response(_ value: JSONValue?) throws(RecordFormatError) -> NFCRadioResponse {
    guard let object = value?.members else { throw RecordFormatError("a response is not an object") }
    if object["connected"] != nil { return .connected }
    if object["written"] != nil { return .written }
    if object["locked"] != nil { return .locked }
    if let read = object["read"] { return .read(try bytes(read)) }
    if let status = object["status"]?.members {
      guard let formatted = status["formatted"]?.bool, let writable = status["writable"]?.bool,
        let capacity = status["capacity"]?.int
      else { throw RecordFormatError("a status without formatted, writable and capacity") }
      return .status(NFCRadioTagStatus(isNDEFFormatted: formatted, isWritable: writable, capacity: capacity))
    }
    if let failed = object["failed"] { return .failed(try failure(failed, depth: 0)) }
    throw RecordFormatError("an unknown response")
  }

  // MARK: Failures and causes

  private static let simpleFailures: [(String, NFCRadioFailure)] = [
    ("unsupported", .unsupported), ("radioOff", .radioOff), ("busy", .busy), ("terminated", .terminated),
    ("tagLost", .tagLost), ("notNDEFFormatted", .notNDEFFormatted), ("notWritable", .notWritable),
    ("capacityExceeded", .capacityExceeded), ("updateFailed", .updateFailed),
  ]

  private static func json(_ failure: NFCRadioFailure) -> [String: Any] {
    switch failure {
    case .tagResponse(let detail): return ["failure": "tagResponse", "detail": detail]
    case .detailed(let base, let message, let cause, let context):
      return [
        "failure": "detailed", "base": json(base), "message": message ?? NSNull(),
        "cause": cause.map(json) ?? NSNull(), "context": context,
      ]
    default:
      return ["failure": simpleFailures.first { $0.1 == failure }?.0 ?? "unsupported"]
    }
  }

  private static func failure(_ value: JSONValue?, depth: Int) throws(RecordFormatError) -> NFCRadioFailure {
    guard depth < 8, let object = value?.members, let name = object["failure"]?.string else {
      throw RecordFormatError("a failure is not an object with `failure`")
    }
    if let simple = simpleFailures.first(where: { $0.0 == name }) { return simple.1 }
    switch name {
    case "tagResponse": return .tagResponse(detail: object["detail"]?.string ?? "")
    case "detailed":
      let context = (object["context"]?.members ?? [:]).compactMapValues(\.string)
      return .detailed(
        try failure(object["base"], depth: depth + 1), message: object["message"]?.string,
        cause: try cause(object["cause"]), context: context)
    default: throw RecordFormatError("unknown failure `\(name)`")
    }
  }

  private static func json(_ cause: ErrorCause) -> [String: Any] {
    switch cause {
    case .errno(let value): ["errno": Int(value)]
    case .statusWord(let word): ["statusWord": Int(word)]
    case .httpStatus(let status): ["httpStatus": status]
    case .pcsc(let code): ["pcsc": Int(code)]
    case .dbus(let name, let message): ["dbus": ["name": name, "message": message]]
    case .smp(let rc, let group): ["smp": ["rc": rc, "group": group.map { Int($0) as Any } ?? NSNull()]]
    case .other(let text): ["other": text]
    }
  }

  private static func cause(_ value: JSONValue?) throws(RecordFormatError) -> ErrorCause? {
    guard let object = value?.members else { return nil }
    if let value = object["errno"]?.int, let code = Int32(exactly: value) { return .errno(code) }
    if let value = object["statusWord"]?.int, let word = UInt16(exactly: value) { return .statusWord(word) }
    if let value = object["httpStatus"]?.int { return .httpStatus(value) }
    if let value = object["pcsc"]?.int, let code = UInt32(exactly: value) { return .pcsc(code) }
    if let dbus = object["dbus"]?.members {
      return .dbus(name: dbus["name"]?.string ?? "", message: dbus["message"]?.string ?? "")
    }
    if let smp = object["smp"]?.members, let rc = smp["rc"]?.int {
      return .smp(rc: rc, group: smp["group"]?.int.flatMap(UInt16.init(exactly:)))
    }
    if let text = object["other"]?.string { return .other(text) }
    throw RecordFormatError("an unknown cause")
  }

  // MARK: Values

  private static func requestID(
    _ object: [String: JSONValue], _ key: String
  ) throws(RecordFormatError) -> NFCRadioRequestID {
    guard let text = object[key]?.string else { throw RecordFormatError("no `\(key)`") }
    let parts = text.split(separator: ".")
    guard parts.count == 2, let session = UInt64(parts[0]), let sequence = UInt64(parts[1]) else {
      throw RecordFormatError("`\(key)` is not session.sequence")
    }
    return NFCRadioRequestID(session: session, sequence: sequence)
  }

  private static func tagID(_ object: [String: JSONValue]) throws(RecordFormatError) -> NFCRadioTagID {
    guard let number = object["tag"]?.int, let value = UInt64(exactly: number) else {
      throw RecordFormatError("no tag number")
    }
    return NFCRadioTagID(value)
  }

  /// Hex text; at most 64 KiB of bytes.
  private static func bytes(_ value: JSONValue?) throws(RecordFormatError) -> [UInt8] {
    guard let text = value?.string, text.utf8.count % 2 == 0, text.utf8.count <= 131_072 else {
      throw RecordFormatError("bytes are not hex text of at most 64 KiB")
    }
    var result: [UInt8] = []
    result.reserveCapacity(text.utf8.count / 2)
    var high: UInt8?
    for character in text.utf8 {
      let nibble: UInt8
      switch character {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
      default: throw RecordFormatError("bytes are not hex text")
      }
      if let first = high {
        result.append(first << 4 | nibble)
        high = nil
      } else {
        high = nibble
      }
    }
    return result
  }

  private static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text = [UInt8]()
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }
}

extension JSONValue {
  /// An object's members by key (the reader refuses repeated keys), or `nil` for anything else.
  fileprivate var members: [String: JSONValue]? {
    guard case .object(let members) = self else { return nil }
    return Dictionary(members, uniquingKeysWith: { $1 })
  }

  fileprivate var string: String? {
    guard case .string(let text) = self else { return nil }
    return text
  }

  fileprivate var bool: Bool? {
    guard case .bool(let flag) = self else { return nil }
    return flag
  }

  /// A whole number, written with or without a fraction of zero.
  fileprivate var int: Int? {
    switch self {
    case .int(let value): value
    case .number(let value, _): value.isFinite ? Int(exactly: value) : nil
    default: nil
    }
  }

  fileprivate var double: Double? {
    switch self {
    case .int(let value): Double(value)
    case .number(let value, _): value
    default: nil
    }
  }
}
