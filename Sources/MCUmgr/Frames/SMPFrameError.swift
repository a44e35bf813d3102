/// Why bytes received from a reader are not an SMP frame.
public struct SMPFrameError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong.
  public enum Reason: Sendable, Hashable {
    /// Fewer than the header's 8 bytes.
    case truncatedHeader(count: Int)
    /// The reserved top three bits of the first byte are not 0.
    case reservedBitsSet(UInt8)
    /// The operation is not one of read, read response, write, write response.
    case invalidOperation(UInt8)
    /// The version is one the specification reserves (2 or 3).
    case unsupportedVersion(UInt8)
    /// The header announces a body longer than the receiver accepts.
    case bodyTooLong(length: Int, limit: Int)
  }

  /// What is wrong.
  public var reason: Reason

  /// Creates an error.
  public init(_ reason: Reason) { self.reason = reason }

  /// A sentence naming the fault.
  public var description: String {
    switch reason {
    case .truncatedHeader(let count): "SMP: a header of \(count) bytes (8 needed)"
    case .reservedBitsSet(let byte): "SMP: reserved bits set in the first header byte (\(byte))"
    case .invalidOperation(let operation): "SMP: operation \(operation) is not defined"
    case .unsupportedVersion(let version): "SMP: version \(version) is reserved"
    case .bodyTooLong(let length, let limit): "SMP: a body of \(length) bytes (at most \(limit) accepted)"
    }
  }
}
