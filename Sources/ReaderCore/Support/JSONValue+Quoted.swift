extension JSONValue {
  /// The most characters of a value an error quotes.
  package static let quotedLength = 120

  /// The value as an error quotes it: a string as it is, anything else as compact JSON with object
  /// keys sorted; at most `quotedLength` characters, cut with `…`.
  package var quoted: String {
    var text = ""
    if case .string(let value) = self {
      text = String(value.prefix(Self.quotedLength + 1))
    } else {
      quote(into: &text)
    }
    return text.count > Self.quotedLength ? String(text.prefix(Self.quotedLength)) + "…" : text
  }

  /// The member named `key` of an object, or `nil` (also when this is not an object).
  package subscript(member key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.0 == key }?.1
  }

  /// Compact JSON, stopping once the text is longer than `quotedLength`.
  private func quote(into text: inout String) {
    guard text.count <= Self.quotedLength else { return }
    switch self {
    case .null: text += "null"
    case .bool(let value): text += value ? "true" : "false"
    case .int(let value): text += String(value)
    case .number(let value, _):
      text += value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    case .string(let value):
      text += "\"" + String(value.prefix(Self.quotedLength)) + "\""
    case .array(let elements):
      text += "["
      for (index, element) in elements.enumerated() {
        guard text.count <= Self.quotedLength else { return }
        if index > 0 { text += "," }
        element.quote(into: &text)
      }
      text += "]"
    case .object(let members):
      text += "{"
      for (index, member) in members.sorted(by: { $0.0 < $1.0 }).enumerated() {
        guard text.count <= Self.quotedLength else { return }
        if index > 0 { text += "," }
        text += "\"" + String(member.0.prefix(Self.quotedLength)) + "\":"
        member.1.quote(into: &text)
      }
      text += "}"
    }
  }
}
