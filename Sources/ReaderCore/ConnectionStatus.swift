/// Where the terminal stands with respect to a reader.
public enum ConnectionStatus: String, Sendable, Hashable, Codable, CustomStringConvertible {
  /// No reader is connected and nothing is in progress.
  case notConnected
  /// A discovery is running.
  case discovering
  /// A connection is being established.
  case connecting
  /// A reader is connected.
  case connected
  /// The connection was lost and the terminal is trying to win it back.
  case reconnecting

  public var description: String { rawValue }
}
