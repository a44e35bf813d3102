/// The Type Name Format of a payload in Core NFC's face of NDEF (`NFCNDEFPayload.typeNameFormat`):
/// Core NFC's `NFCTypeNameFormat`, with its cases and raw values, so a `switch` written for Core NFC
/// compiles (with or without `@unknown default`).
///
/// NFCKit's own ``TypeNameFormat`` has an eighth case, `reserved` (TNF 7), which the NFC Forum tells
/// readers to treat as unknown: on this face such a record reads as ``unknown``, and converting the
/// payload back gives the original TNF 7 record as long as it was not changed.
public enum NFCTypeNameFormat: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
  /// 0x00: no type, identifier or payload.
  case empty = 0
  /// 0x01: an NFC Forum well-known type, e.g. `T` (Text), `U` (URI).
  case nfcWellKnown = 1
  /// 0x02: an RFC 2046 media type, e.g. `text/plain`.
  case media = 2
  /// 0x03: an absolute URI names the type of the payload.
  case absoluteURI = 3
  /// 0x04: an NFC Forum external type, `domain:type`.
  case nfcExternal = 4
  /// 0x05: the payload's type is unknown.
  case unknown = 5
  /// 0x06: a middle or last chunk of a chunked record. Payloads read from tags never have it (chunks
  /// are joined); a payload given it cannot be written.
  case unchanged = 6

  /// The face of NFCKit's format; `reserved` (TNF 7) reads as `unknown`.
  public init(_ format: TypeNameFormat) {
    self = format == .reserved ? .unknown : NFCTypeNameFormat(rawValue: format.rawValue) ?? .unknown
  }

  /// The case name, e.g. `"nfcWellKnown"`.
  public var description: String { TypeNameFormat(self).description }
}

extension TypeNameFormat {
  /// NFCKit's format for Core NFC's (same raw value).
  public init(_ format: NFCTypeNameFormat) {
    // Every Core NFC value is one of NFCKit's eight.
    self = TypeNameFormat(headerByte: format.rawValue)
  }
}
