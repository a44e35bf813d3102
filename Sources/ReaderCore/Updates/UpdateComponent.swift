/// The parts of the reader's software a software update replaces.
///
/// Encoded (and written in update manifests) as a list of names, e.g. `["firmware", "config"]`, never
/// as bits. The bits are the anchor SDK's, for code that needs them.
public struct UpdateComponent: OptionSet, Sendable, Hashable, Codable, CustomStringConvertible {
  public let rawValue: Int

  /// Creates a set from its bits; bits that name no component are dropped.
  public init(rawValue: Int) { self.rawValue = rawValue & 0b1111 }

  /// A small incremental change; when it is the only component the version does not change and the
  /// install takes under a minute. An incremental-only update is always installed when it is offered
  /// and cannot be cancelled.
  public static let incremental = UpdateComponent(rawValue: 1 << 0)
  /// New firmware; typically 5 to 15 minutes.
  public static let firmware = UpdateComponent(rawValue: 1 << 1)
  /// A new configuration (regional and card-network settings); typically 1 to 2 minutes.
  public static let config = UpdateComponent(rawValue: 1 << 2)
  /// New encryption keys; typically under a minute.
  public static let keys = UpdateComponent(rawValue: 1 << 3)

  /// Every component with its stable name, in bit order.
  public static let named: [(name: String, component: UpdateComponent)] = [
    ("incremental", .incremental), ("firmware", .firmware), ("config", .config), ("keys", .keys),
  ]

  /// The component called `name` (`incremental`, `firmware`, `config` or `keys`), or `nil`.
  public init?(name: String) {
    guard let entry = Self.named.first(where: { $0.name == name }) else { return nil }
    self = entry.component
  }

  /// The names of the components in the set, in bit order.
  public var names: [String] { Self.named.filter { contains($0.component) }.map(\.name) }

  /// The names joined by `+`, e.g. `firmware+config`, or `none`.
  public var description: String { isEmpty ? "none" : names.joined(separator: "+") }

  /// Decodes a list of names.
  public init(from decoder: any Decoder) throws {
    var container = try decoder.unkeyedContainer()
    var set: UpdateComponent = []
    while !container.isAtEnd {
      let name = try container.decode(String.self)
      guard let component = UpdateComponent(name: name) else {
        throw DecodingError.dataCorruptedError(
          in: container, debugDescription: "\"\(name)\" is not an update component")
      }
      set.insert(component)
    }
    self = set
  }

  /// Encodes the names, in bit order.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.unkeyedContainer()
    for name in names { try container.encode(name) }
  }
}
