/// A minimal JSON value with a deterministic rendering: no insignificant spaces, object members in
/// the order given, numbers formatted the same way on every platform.
///
/// Used by the command-line tools for their one-object-per-line output, where byte-identical output
/// for the same seed matters more than what a general-purpose encoder offers.
package enum JSONValue: Equatable, Sendable {
  case null
  case bool(Bool)
  case int(Int)
  /// A finite number written with at most `decimals` fraction digits, trailing zeros removed.
  case number(Double, decimals: Int)
  case string(String)
  case array([JSONValue])
  /// Members in the order they are rendered; keys are expected to be unique.
  case object([(String, JSONValue)])

  /// An object whose members are rendered in key order.
  package static func sortedObject(_ members: [String: JSONValue]) -> JSONValue {
    .object(members.sorted { $0.key < $1.key })
  }

  /// `value` as a number, or `null` when it is `nil`.
  package static func optional(_ value: Double?, decimals: Int) -> JSONValue {
    value.map { .number($0, decimals: decimals) } ?? .null
  }

  /// `value` as a string, or `null` when it is `nil`.
  package static func optional(_ value: String?) -> JSONValue {
    value.map(JSONValue.string) ?? .null
  }

  /// The JSON text.
  package var rendered: String {
    var output = ""
    render(into: &output)
    return output
  }

  package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.int(let a), .int(let b)): a == b
    case (.number(let a, let x), .number(let b, let y)): a == b && x == y
    case (.string(let a), .string(let b)): a == b
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)): a.map(\.0) == b.map(\.0) && a.map(\.1) == b.map(\.1)
    default: false
    }
  }

  private func render(into output: inout String) {
    switch self {
    case .null: output += "null"
    case .bool(let value): output += value ? "true" : "false"
    case .int(let value): output += String(value)
    case .number(let value, let decimals): output += Self.format(value, decimals: decimals)
    case .string(let value): Self.quote(value, into: &output)
    case .array(let values):
      output += "["
      for (index, value) in values.enumerated() {
        if index > 0 { output += "," }
        value.render(into: &output)
      }
      output += "]"
    case .object(let members):
      output += "{"
      for (index, member) in members.enumerated() {
        if index > 0 { output += "," }
        Self.quote(member.0, into: &output)
        output += ":"
        member.1.render(into: &output)
      }
      output += "}"
    }
  }

  /// Fixed-point formatting without Foundation, so the text is the same everywhere. Non-finite values
  /// have no JSON form and are written as `null`.
  private static func format(_ value: Double, decimals: Int) -> String {
    guard value.isFinite else { return "null" }
    let decimals = min(max(decimals, 0), 9)
    var scale: Int64 = 1
    for _ in 0..<decimals { scale *= 10 }
    guard abs(value) * Double(scale) < 9e18 else { return String(value) }
    let scaled = Int64((abs(value) * Double(scale)).rounded())
    let whole = scaled / scale
    var fraction = String(scaled % scale)
    fraction = String(repeating: "0", count: max(0, decimals - fraction.count)) + fraction
    while fraction.last == "0" { fraction.removeLast() }
    let sign = value < 0 && scaled != 0 ? "-" : ""
    return fraction.isEmpty ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
  }

  /// Escapes per RFC 8259: quote, backslash and control characters; everything else as UTF-8.
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
