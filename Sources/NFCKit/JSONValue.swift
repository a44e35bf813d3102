/// A minimal JSON value with a deterministic rendering: object keys sorted, no insignificant spaces.
enum JSONValue: Equatable {
  case string(String)
  case int(Int)
  case bool(Bool)
  case array([JSONValue])
  case object([String: JSONValue])

  /// The JSON text. Strings are escaped per RFC 8259 (quote, backslash and control characters); other
  /// characters are written as UTF-8.
  var rendered: String {
    var output = ""
    render(into: &output)
    return output
  }

  private func render(into output: inout String) {
    switch self {
    case .string(let value): JSONValue.quote(value, into: &output)
    case .int(let value): output += String(value)
    case .bool(let value): output += value ? "true" : "false"
    case .array(let values):
      output += "["
      for (index, value) in values.enumerated() {
        if index > 0 { output += "," }
        value.render(into: &output)
      }
      output += "]"
    case .object(let members):
      output += "{"
      for (index, key) in members.keys.sorted().enumerated() {
        if index > 0 { output += "," }
        JSONValue.quote(key, into: &output)
        output += ":"
        members[key]!.render(into: &output)
      }
      output += "}"
    }
  }

  private static func quote(_ string: String, into output: inout String) {
    output += "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": output += "\\\""
      case "\\": output += "\\\\"
      case "\n": output += "\\n"
      case "\r": output += "\\r"
      case "\t": output += "\\t"
      case "\u{08}": output += "\\b"
      case "\u{0C}": output += "\\f"
      case "\u{00}"..."\u{1F}":
        let hex = String(scalar.value, radix: 16)
        output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: output.unicodeScalars.append(scalar)
      }
    }
    output += "\""
  }
}
