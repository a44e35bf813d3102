import ReaderCore

extension DeviceInformation {
  /// Every value, under its API name (`null` when unknown).
  var json: JSONValue {
    .object([
      ("serialNumber", .optional(serialNumber)), ("modelNumber", .optional(modelNumber)),
      ("firmwareRevision", .optional(firmwareRevision)), ("hardwareRevision", .optional(hardwareRevision)),
      ("manufacturerName", .optional(manufacturerName)),
    ])
  }

  /// The line a connect prints, e.g. `Device information (read over GATT): serial number A1B2, model
  /// ACME-R1, firmware 1.4.2, hardware rev B, manufacturer Acme.`; only the values the reader gave (and
  /// one final period, when the last value ends with its own).
  var line: String {
    let values = [
      ("serial number", serialNumber), ("model", modelNumber), ("firmware", firmwareRevision),
      ("hardware", hardwareRevision), ("manufacturer", manufacturerName),
    ].compactMap { name, value in value.map { "\(name) \($0)" } }
    let text = "Device information (read over GATT): \(values.joined(separator: ", "))"
    return text.hasSuffix(".") ? text : text + "."
  }
}
