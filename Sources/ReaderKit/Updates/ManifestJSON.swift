import Foundation

/// A JSON value as read from an update manifest, kept whole so an error can quote the value it is
/// about.
enum ManifestJSON: Sendable, Hashable, Decodable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([ManifestJSON])
  case object([String: ManifestJSON])

  /// The deepest nesting of arrays and objects a manifest may have; a real one has 4 levels.
  static let maximumDepth = 16

  /// The most characters of a value an error quotes.
  static let quotedLength = 120

  private struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  init(from decoder: any Decoder) throws {
    if var container = try? decoder.unkeyedContainer() {
      var elements: [ManifestJSON] = []
      while !container.isAtEnd { elements.append(try container.decode(ManifestJSON.self)) }
      self = .array(elements)
    } else if let container = try? decoder.container(keyedBy: Key.self) {
      var members: [String: ManifestJSON] = [:]
      for key in container.allKeys { members[key.stringValue] = try container.decode(ManifestJSON.self, forKey: key) }
      self = .object(members)
    } else {
      let container = try decoder.singleValueContainer()
      if container.decodeNil() {
        self = .null
      } else if let value = try? container.decode(Bool.self) {
        self = .bool(value)
      } else if let value = try? container.decode(String.self) {
        self = .string(value)
      } else {
        self = .number(try container.decode(Double.self))
      }
    }
  }

  /// The JSON type's name, for messages: `a string`, `a number`, ….
  var kind: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }

  /// The value as an error quotes it: a string as it is, anything else as compact JSON; at most
  /// `quotedLength` characters, cut with `…`.
  var quoted: String {
    var text = ""
    if case .string(let value) = self {
      text = String(value.prefix(Self.quotedLength + 1))
    } else {
      render(into: &text)
    }
    return text.count > Self.quotedLength ? String(text.prefix(Self.quotedLength)) + "…" : text
  }

  /// Compact JSON, stopping once the text is longer than `quotedLength`.
  private func render(into text: inout String) {
    guard text.count <= Self.quotedLength else { return }
    switch self {
    case .null: text += "null"
    case .bool(let value): text += value ? "true" : "false"
    case .number(let value):
      text += value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    case .string(let value):
      text += "\"" + String(value.prefix(Self.quotedLength)) + "\""
    case .array(let elements):
      text += "["
      for (index, element) in elements.enumerated() {
        guard text.count <= Self.quotedLength else { return }
        if index > 0 { text += "," }
        element.render(into: &text)
      }
      text += "]"
    case .object(let members):
      text += "{"
      for (index, key) in members.keys.sorted().enumerated() {
        guard text.count <= Self.quotedLength else { return }
        if index > 0 { text += "," }
        text += "\"" + String(key.prefix(Self.quotedLength)) + "\":"
        members[key]!.render(into: &text)
      }
      text += "}"
    }
  }
}
