import NFCKit
import ReaderKit

/// The `--json` form of NFC reader sessions: one object per event, fields under the API's names.
extension NFCReaderEvent {
  /// `{"t": <simulated seconds>, "event": "<name>", "session": N, …}`: `position` (`didQueue`),
  /// `messages` (`didDetectNDEFs`, each as `readerctl ndef decode` prints it), `tags` (`didDetectTags`),
  /// `error` (`didFailToReadNDEF`, `didInvalidateWithError`). `tag`, when given, names the simulated tag
  /// in the field (a message read, a read that failed, a tag detected). `t` counts from `origin`.
  func jsonLine(tag: String?, since origin: Duration = .zero) -> String {
    var fields: [(String, JSONValue)] = [
      ("t", .number((time - origin).inSeconds, decimals: 3)), ("event", .string(name)),
      ("session", .int(Int(clamping: session))),
    ]
    let tagField: [(String, JSONValue)] = tag.map { [("tag", .string($0))] } ?? []
    switch kind {
    case .didQueue(let position):
      fields.append(("position", .int(position)))
    case .didBecomeActive:
      break
    case .didDetectNDEFs(let messages):
      return NFCJSON.object(fields + tagField, raw: [("messages", NFCJSON.messages(messages))])
    case .didDetectTags(let tags):
      fields += tagField + [("tags", .array(tags.map { .string($0.description) }))]
    case .didFailToReadNDEF(let error):
      fields += tagField + [("error", error.json)]
    case .didInvalidate(let error):
      fields.append(("error", error.json))
    }
    return JSONValue.object(fields).rendered
  }
}

extension NFCReaderError {
  /// `{"code": <Core NFC's name>, "errorCode": <raw value>, "message": …, "context": {…}, "ndefError": …}`;
  /// `ndefError` is the decoding error of a malformed message, with its byte `offset`, or `null`.
  var json: JSONValue {
    .object([
      ("code", .string(code.description)), ("errorCode", .int(errorCode)), ("message", .string(message)),
      ("context", contextJSON(context)),
      ("ndefError", ndefError.map(\.json) ?? .null),
    ])
  }
}

extension NDEFError {
  /// `{"code": …, "offset": N, "expected": …, "message": …}`.
  var json: JSONValue {
    .object([
      ("code", .string(code.description)), ("offset", .int(offset)), ("expected", .string(expected)),
      ("message", .string(message)),
    ])
  }
}

extension CommandOutcome {
  /// A command ended by an NFC reader session error, with the status `ExitStatus` maps its code to.
  static func failure(_ error: NFCReaderError) -> CommandOutcome {
    CommandOutcome(status: ExitStatus.status(for: error), error: error.json, fields: [])
  }
}

/// JSON text with NDEF messages in it, rendered by `NDEFJSON` exactly as `readerctl ndef decode` prints
/// them. `NDEFJSON` gives text, not a `JSONValue`, so the messages are spliced in as text.
enum NFCJSON {
  /// The object of `members`, followed by `raw` members whose values are JSON text already.
  static func object(_ members: [(String, JSONValue)], raw: [(String, String)]) -> String {
    var text = JSONValue.object(members).rendered
    guard !raw.isEmpty else { return text }
    text.removeLast()
    for (index, member) in raw.enumerated() {
      if !members.isEmpty || index > 0 { text += "," }
      text += JSONValue.string(member.0).rendered + ":" + member.1
    }
    return text + "}"
  }

  /// `[message, …]`, each as `readerctl ndef decode` prints it.
  static func messages(_ messages: [NDEFMessage]) -> String {
    "[" + messages.map { NDEFJSON.render($0) }.joined(separator: ",") + "]"
  }
}
