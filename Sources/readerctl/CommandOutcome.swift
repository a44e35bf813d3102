import ReaderKit

/// How a simulation command ended: its exit status and, for `--json`, the last line it prints.
///
/// `{"t": <simulated seconds>, "event": "result", "exitStatus": 0, "error": null, …}` on success;
/// on failure `error` is an object like every event's: `{"code": …, "message": …, "context": {…}}`.
/// Commands add what they produced (`readers`, `reader`) under the API's names.
struct CommandOutcome {
  /// The process exit status.
  var status: Int32
  /// Why the command failed; `null` on success.
  var error: JSONValue
  /// What the command produced.
  var fields: [(String, JSONValue)]

  /// Success, with what the command produced.
  static func success(_ fields: [(String, JSONValue)] = []) -> CommandOutcome {
    CommandOutcome(status: ExitStatus.success, error: .null, fields: fields)
  }

  /// A failed ReaderKit operation, with the status `ExitStatus` maps its code to.
  static func failure(_ error: ReaderError, _ fields: [(String, JSONValue)] = []) -> CommandOutcome {
    CommandOutcome(status: ExitStatus.status(for: error), error: error.json, fields: fields)
  }

  /// A failure that is not a ReaderKit error, reported under `code` with `status`.
  static func failure(code: String, message: String, status: Int32) -> CommandOutcome {
    CommandOutcome(
      status: status,
      error: .object([("code", .string(code)), ("message", .string(message)), ("context", .object([]))]),
      fields: [])
  }

  /// The `--json` line, stamped with the simulated time `time`.
  func json(at time: Duration) -> JSONValue {
    .object(
      [
        ("t", .number(time.inSeconds, decimals: 3)), ("event", .string("result")), ("exitStatus", .int(Int(status))),
        ("error", error),
      ] + fields)
  }
}

extension ReaderError {
  /// `code: message (key=value, …)` for people: the context the message already says is left out.
  var report: String {
    let details = context.sorted { $0.key < $1.key }.filter { !message.contains($0.value) }.map {
      "\($0.key)=\($0.value)"
    }
    return details.isEmpty ? "\(code): \(message)" : "\(code): \(message) (\(details.joined(separator: ", ")))"
  }
}
