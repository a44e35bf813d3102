/// Limits and checks applied while decoding NDEF bytes.
///
/// The defaults are safe for untrusted input read from a tag: decoding work and memory stay
/// proportional to the input, and these limits cap them further. Negative limits act as 0.
///
/// ```swift
/// var options = NDEFDecodingOptions()
/// options.maxPayloadSize = 64 * 1024
/// let message = try NDEFDecoder(options: options).decode(bytes)
/// ```
public struct NDEFDecodingOptions: Hashable, Sendable {
  /// The most records one decode may read, counting every chunk and every record nested in a Smart
  /// Poster. More throws ``NDEFError/Code/tooManyRecords``. Default 4096.
  public var maxRecords: Int
  /// The deepest Smart Poster nesting accepted: 1 allows a Smart Poster in the message, 2 also a Smart
  /// Poster inside that one, and so on. Deeper throws ``NDEFError/Code/nestingTooDeep``. Default 4.
  ///
  /// Values above ``nestingDepthCeiling`` act as the ceiling: nested messages are parsed recursively, and a
  /// few kilobytes of hostile input nest deep enough to exhaust a thread's stack, whatever the settings.
  public var maxNestingDepth: Int
  /// The largest payload of one logical record, after reassembling chunks. Larger throws
  /// ``NDEFError/Code/payloadTooLarge``. Default 16 MiB.
  public var maxPayloadSize: Int
  /// Whether the payloads of well-known Text (`T`), URI (`U`) and Smart Poster (`Sp`) records (and the
  /// records nested in Smart Posters) are checked while decoding, so that malformed ones fail the decode
  /// with an offset into the input. When `false` only the record structure is checked, and the typed
  /// views (``TextRecord/init(_:)`` …) report payload problems later. Default `true`.
  public var validatesWellKnownPayloads: Bool

  /// The largest nesting depth any options allow (32): the effective limit is the smaller of this and
  /// ``maxNestingDepth``.
  public static let nestingDepthCeiling = 32

  /// The record limit in force: ``maxRecords``, a negative value acting as 0.
  var effectiveMaxRecords: Int { max(0, maxRecords) }

  /// The payload limit in force: ``maxPayloadSize`` (a negative value acting as 0), at most 2^32 - 1,
  /// the largest PAYLOAD_LENGTH a record can state.
  var effectiveMaxPayloadSize: Int { max(0, min(maxPayloadSize, Int(UInt32.max))) }

  /// The nesting limit in force: ``maxNestingDepth``, capped at ``nestingDepthCeiling``.
  var effectiveMaxNestingDepth: Int { max(0, min(maxNestingDepth, Self.nestingDepthCeiling)) }

  /// Creates options; every argument has the safe default.
  public init(
    maxRecords: Int = 4096, maxNestingDepth: Int = 4, maxPayloadSize: Int = 16 * 1024 * 1024,
    validatesWellKnownPayloads: Bool = true
  ) {
    self.maxRecords = maxRecords
    self.maxNestingDepth = maxNestingDepth
    self.maxPayloadSize = maxPayloadSize
    self.validatesWellKnownPayloads = validatesWellKnownPayloads
  }
}
