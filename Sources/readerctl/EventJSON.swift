import Foundation
import ReaderKit

/// The `--json` form of ReaderKit values: one object per event, fields under the API's names.
extension TerminalEvent {
  /// `{"t": <simulated seconds>, "event": "<name>", …fields}`.
  var json: JSONValue { json(since: .zero) }

  /// The same, with `t` counted from the scheduler time `origin`.
  func json(since origin: Duration) -> JSONValue {
    var fields: [(String, JSONValue)] = [
      ("t", .number((time - origin).inSeconds, decimals: 3)), ("event", .string(name)),
    ]
    switch kind {
    case .didChangeConnectionStatus(let status):
      fields.append(("status", .string(status.rawValue)))
    case .didUpdateDiscoveredReaders(let readers):
      fields.append(("readers", .array(readers.map(\.json))))
    case .didFinishDiscovery(let error), .didFinishLaunchReconnect(let error):
      fields.append(("error", error.json))
    case .didRequestLEDFlash(let serial), .didStartLaunchReconnect(let serial):
      fields.append(("serialNumber", .string(serial)))
    case .didQueueCommand(let command, let position):
      fields += [("command", .string(command)), ("position", .int(position))]
    case .didConnect(let reader), .readerDidSucceedReconnect(let reader), .didFindSavedReader(let reader),
      .readerDidReportLowBatteryWarning(let reader):
      fields += reader.summaryFields
    case .didFailToConnect(let serial, let error):
      fields += [("serialNumber", .string(serial)), ("error", error.json)]
    case .didRespondToReboot(let serial, let error), .didSaveReader(let serial, let error):
      fields += [("serialNumber", .string(serial)), ("error", error.json)]
    case .didDisconnect(let reader, let reason), .didStartReconnect(let reader, let reason):
      // One name for the disconnect reason in every event (the delegate's parameter is `disconnectReason`).
      fields += reader.summaryFields + [("reason", .string(reason.rawValue))]
    case .readerDidFailReconnect(let reader, let error):
      fields += reader.summaryFields + [("error", error.json)]
    case .didReportBatteryLevel(let reader):
      fields +=
        reader.summaryFields + [
          ("batteryLevel", .optional(reader.batteryLevel, decimals: 3)),
          ("batteryStatus", .string(reader.batteryStatus.rawValue)),
          ("isCharging", reader.isCharging.map(JSONValue.bool) ?? .null),
        ]
    case .didFindNoSavedReader:
      break
    case .didReportAvailableUpdate(let reader, let update):
      fields += reader.summaryFields + [("update", update.json)]
    case .didStartInstallingUpdate(let reader, let update, let cancelable):
      fields += reader.summaryFields + [("update", update.json), ("cancelable", .bool(cancelable))]
    case .didReportReaderSoftwareUpdateProgress(let reader, let progress):
      fields += [("serialNumber", .string(reader.serialNumber)), ("progress", .number(progress, decimals: 3))]
    case .didFinishInstallingUpdate(let reader, let update, let error):
      fields += reader.summaryFields + [("update", update?.json ?? .null), ("error", error.json)]
    }
    return .object(fields)
  }
}

extension Reader {
  /// Every property, under its API name.
  var json: JSONValue {
    .object([
      ("serialNumber", .string(serialNumber)), ("deviceType", .string(deviceType.rawValue)),
      ("label", .optional(label)),
      ("deviceSoftwareVersion", .optional(deviceSoftwareVersion)),
      ("batteryLevel", .optional(batteryLevel, decimals: 3)), ("batteryStatus", .string(batteryStatus.rawValue)),
      ("isCharging", isCharging.map(JSONValue.bool) ?? .null), ("locationId", .optional(locationId)),
      ("signalStrength", signalStrength.map(JSONValue.int) ?? .null), ("simulated", .bool(simulated)),
      ("deviceInformation", deviceInformation?.json ?? .null),
    ])
  }

  /// The serial number at the top level (what most consumers filter on) and the whole reader.
  fileprivate var summaryFields: [(String, JSONValue)] {
    [("serialNumber", .string(serialNumber)), ("reader", json)]
  }
}

extension Optional where Wrapped == ReaderError {
  /// `null`, or the error as an object.
  var json: JSONValue { map(\.json) ?? .null }
}

extension ReaderError {
  /// `{"code": …, "message": …, "context": {…}}` with the context keys sorted (`contextJSON`).
  var json: JSONValue {
    .object([
      ("code", .string(code.description)), ("message", .string(message)), ("context", contextJSON(context)),
    ])
  }
}

/// The context keys that hold a duration, which every error context holds as a plain number of seconds.
private let durationKeys: Set = ["timeout", "deadline", "listened", "stallTimeout", "fetchTimeout"]

/// An error's context as a JSON object, keys sorted: a duration (`timeout`, `deadline`, `listened`) as a
/// number of seconds, everything else as the string it is.
func contextJSON(_ context: [String: String]) -> JSONValue {
  .sortedObject(
    Dictionary(
      uniqueKeysWithValues: context.map { key, value in
        guard durationKeys.contains(key), let seconds = Double(value), seconds.isFinite else {
          return (key, .string(value))
        }
        return (key, .number(seconds, decimals: 3))
      }))
}

extension ReaderSoftwareUpdate {
  /// Every property, under its API name; dates in ISO 8601.
  var json: JSONValue {
    .object([
      ("deviceSoftwareVersion", .string(deviceSoftwareVersion)),
      ("durationEstimate", .string(durationEstimate.rawValue)),
      ("components", .array(components.names.map(JSONValue.string))),
      ("requiredAt", .string(requiredAt.formatted(.iso8601))),
      ("isTestUpdate", .bool(isTestUpdate)),
      ("expiresAt", .optional(expiresAt?.formatted(.iso8601))),
      ("image", image?.json ?? .null),
    ])
  }
}

extension FirmwareImage {
  /// `{"url": …, "size": …, "sha256": …}`.
  var json: JSONValue {
    .object([("url", .string(url.absoluteString)), ("size", .int(size)), ("sha256", .string(sha256.hex))])
  }
}

extension InstalledSoftware {
  /// Every property, under its API name.
  var json: JSONValue {
    .object([
      ("deviceType", .string(deviceType.rawValue)), ("serialNumber", .string(serialNumber)),
      ("locationId", .string(locationId)), ("version", .string(version.description)),
    ])
  }
}
