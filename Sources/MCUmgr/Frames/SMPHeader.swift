/// The 8-byte header of every SMP frame, as Zephyr's "SMP Protocol Specification" lays it out, all
/// multi-byte fields big-endian:
///
/// ```
/// byte 0: Res (3 bits, 0) | Ver (2 bits) | OP (3 bits)
/// byte 1: Flags (0: none are defined)
/// byte 2-3: Data Length (of the CBOR body that follows)
/// byte 4-5: Group ID
/// byte 6: Sequence Num (a response carries its request's)
/// byte 7: Command ID (within the group)
/// ```
public struct SMPHeader: Sendable, Hashable {
  /// The header's size in bytes.
  public static let size = 8

  /// What a frame does (`mcumgr_op_t`).
  public enum Operation: UInt8, Sendable, Hashable {
    /// A request that reads.
    case read = 0
    /// The answer to a `read`.
    case readResponse = 1
    /// A request that writes (or acts: reset, upload).
    case write = 2
    /// The answer to a `write`.
    case writeResponse = 3

    /// The operation of the answer to a request with this one; `nil` for a response.
    public var response: Operation? {
      switch self {
      case .read: .readResponse
      case .write: .writeResponse
      case .readResponse, .writeResponse: nil
      }
    }
  }

  /// The protocol version in the `Ver` field: 0 is the original SMP (errors as `rc`), 1 is SMP
  /// version 2 (group errors as `err: {group, rc}`, plain `rc` still possible). 2 and 3 are reserved.
  public static let version2: UInt8 = 1

  /// What the frame does.
  public var operation: Operation
  /// The protocol version (`0` or `version2`).
  public var version: UInt8
  /// The flags byte (no flags are defined; 0).
  public var flags: UInt8
  /// The length of the body after the header.
  public var length: UInt16
  /// The management group (0 OS, 1 image, …).
  public var group: UInt16
  /// The sequence number that pairs a response with its request.
  public var sequence: UInt8
  /// The command within the group.
  public var command: UInt8

  /// Creates a header.
  public init(
    operation: Operation, version: UInt8 = SMPHeader.version2, flags: UInt8 = 0, length: UInt16, group: UInt16,
    sequence: UInt8, command: UInt8
  ) {
    self.operation = operation
    self.version = version
    self.flags = flags
    self.length = length
    self.group = group
    self.sequence = sequence
    self.command = command
  }

  /// Reads a header from the first 8 bytes of `bytes`.
  /// - Throws: `SMPFrameError` when there are fewer than 8 bytes, the reserved bits are set, or the
  ///   operation or version is not one the specification defines.
  public init(decoding bytes: some Collection<UInt8>) throws(SMPFrameError) {
    let head = Array(bytes.prefix(Self.size))
    guard head.count == Self.size else { throw SMPFrameError(.truncatedHeader(count: head.count)) }
    guard head[0] & 0xE0 == 0 else { throw SMPFrameError(.reservedBitsSet(head[0])) }
    guard let operation = Operation(rawValue: head[0] & 0x07) else {
      throw SMPFrameError(.invalidOperation(head[0] & 0x07))
    }
    let version = (head[0] >> 3) & 0x03
    guard version <= Self.version2 else { throw SMPFrameError(.unsupportedVersion(version)) }
    self.init(
      operation: operation, version: version, flags: head[1], length: UInt16(head[2]) << 8 | UInt16(head[3]),
      group: UInt16(head[4]) << 8 | UInt16(head[5]), sequence: head[6], command: head[7])
  }

  /// The header's 8 bytes.
  public var bytes: [UInt8] {
    [
      (version & 0x03) << 3 | operation.rawValue, flags, UInt8(length >> 8), UInt8(length & 0xFF),
      UInt8(group >> 8), UInt8(group & 0xFF), sequence, command,
    ]
  }
}
