/// A pcsc-lite return code (`LONG` in the C API): `SCARD_S_SUCCESS`, an `SCARD_E_*` error or an
/// `SCARD_W_*` warning, kept as its 32-bit value so that unknown codes pass through unchanged.
package struct PCSCCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
  package let rawValue: UInt32

  package init(rawValue: UInt32) { self.rawValue = rawValue }

  /// The code of a C call's `LONG` result (64 bits on Linux, 32 on macOS; codes fit in 32).
  package init(_ value: Int) { rawValue = UInt32(truncatingIfNeeded: value) }

  package static let success = PCSCCode(rawValue: 0)
  package static let cancelled = PCSCCode(rawValue: 0x8010_0002)
  package static let invalidHandle = PCSCCode(rawValue: 0x8010_0003)
  package static let invalidParameter = PCSCCode(rawValue: 0x8010_0004)
  package static let noMemory = PCSCCode(rawValue: 0x8010_0006)
  package static let insufficientBuffer = PCSCCode(rawValue: 0x8010_0008)
  package static let unknownReader = PCSCCode(rawValue: 0x8010_0009)
  package static let timeout = PCSCCode(rawValue: 0x8010_000A)
  package static let sharingViolation = PCSCCode(rawValue: 0x8010_000B)
  package static let noSmartcard = PCSCCode(rawValue: 0x8010_000C)
  package static let protoMismatch = PCSCCode(rawValue: 0x8010_000F)
  package static let commError = PCSCCode(rawValue: 0x8010_0013)
  package static let notTransacted = PCSCCode(rawValue: 0x8010_0016)
  package static let readerUnavailable = PCSCCode(rawValue: 0x8010_0017)
  package static let noService = PCSCCode(rawValue: 0x8010_001D)
  package static let serviceStopped = PCSCCode(rawValue: 0x8010_001E)
  package static let unsupportedFeature = PCSCCode(rawValue: 0x8010_001F)
  package static let noReadersAvailable = PCSCCode(rawValue: 0x8010_002E)
  package static let unresponsiveCard = PCSCCode(rawValue: 0x8010_0066)
  package static let unpoweredCard = PCSCCode(rawValue: 0x8010_0067)
  package static let resetCard = PCSCCode(rawValue: 0x8010_0068)
  package static let removedCard = PCSCCode(rawValue: 0x8010_0069)

  private static let names: [UInt32: String] = [
    0: "SCARD_S_SUCCESS", 0x8010_0002: "SCARD_E_CANCELLED", 0x8010_0003: "SCARD_E_INVALID_HANDLE",
    0x8010_0004: "SCARD_E_INVALID_PARAMETER", 0x8010_0006: "SCARD_E_NO_MEMORY",
    0x8010_0008: "SCARD_E_INSUFFICIENT_BUFFER", 0x8010_0009: "SCARD_E_UNKNOWN_READER",
    0x8010_000A: "SCARD_E_TIMEOUT", 0x8010_000B: "SCARD_E_SHARING_VIOLATION", 0x8010_000C: "SCARD_E_NO_SMARTCARD",
    0x8010_000F: "SCARD_E_PROTO_MISMATCH", 0x8010_0013: "SCARD_F_COMM_ERROR", 0x8010_0016: "SCARD_E_NOT_TRANSACTED",
    0x8010_0017: "SCARD_E_READER_UNAVAILABLE", 0x8010_001D: "SCARD_E_NO_SERVICE",
    0x8010_001E: "SCARD_E_SERVICE_STOPPED", 0x8010_001F: "SCARD_E_UNSUPPORTED_FEATURE",
    0x8010_002E: "SCARD_E_NO_READERS_AVAILABLE", 0x8010_0066: "SCARD_W_UNRESPONSIVE_CARD",
    0x8010_0067: "SCARD_W_UNPOWERED_CARD", 0x8010_0068: "SCARD_W_RESET_CARD", 0x8010_0069: "SCARD_W_REMOVED_CARD",
  ]

  /// pcsc-lite's name for the code, e.g. `SCARD_W_REMOVED_CARD`; `nil` for one it does not name here.
  package var name: String? { Self.names[rawValue] }

  /// Whether the PC/SC service is gone: not running, stopped, or its socket broke.
  package var meansServiceGone: Bool {
    self == .noService || self == .serviceStopped || self == .commError
  }

  /// Whether the card left or was reset: the connection to it is over.
  package var meansCardGone: Bool {
    self == .removedCard || self == .resetCard || self == .notTransacted || self == .noSmartcard
      || self == .unpoweredCard || self == .unresponsiveCard || self == .invalidHandle
      || self == .readerUnavailable
  }

  /// `SCARD_W_REMOVED_CARD (0x80100069)`.
  package var description: String {
    let hex = String(rawValue, radix: 16, uppercase: true)
    let value = "0x" + String(repeating: "0", count: max(0, 8 - hex.count)) + hex
    return name.map { "\($0) (\(value))" } ?? value
  }
}

/// A PC/SC call that failed: which call, and the code it returned.
package struct PCSCError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The C function, e.g. `SCardTransmit`.
  package var call: String
  /// What it returned.
  package var code: PCSCCode

  package init(_ call: String, _ code: PCSCCode) {
    self.call = call
    self.code = code
  }

  package var description: String { "\(call) returned \(code)" }
}
