/// The 3-bit Type Name Format (TNF) of an NDEF record: how to read the record's `type` field.
///
/// The names follow Core NFC's `NFCTypeNameFormat`; the raw values are the NFC Forum NDEF values.
public enum TypeNameFormat: UInt8, CaseIterable, Hashable, Sendable, CustomStringConvertible {
  /// 0x00: no type, identifier or payload (the "empty record", `D0 00 00` on its own).
  case empty = 0
  /// 0x01: an NFC Forum well-known type (RTD), e.g. `T` (Text), `U` (URI), `Sp` (Smart Poster).
  case nfcWellKnown = 1
  /// 0x02: an RFC 2046 media type, e.g. `text/plain`, `application/json`, `text/vcard`.
  case media = 2
  /// 0x03: an absolute URI (RFC 3986) names the type of the payload.
  case absoluteURI = 3
  /// 0x04: an NFC Forum external type, `domain:type` (e.g. `android.com:pkg`).
  case nfcExternal = 4
  /// 0x05: the payload type is unknown; the type field is empty.
  case unknown = 5
  /// 0x06: a middle or terminating chunk of a chunked record. The decoder reassembles chunks, so a
  /// decoded ``NDEFRecord`` never has this format; on the wire it never appears on its own.
  case unchanged = 6
  /// 0x07: reserved by the NFC Forum. Generators must not use it, so
  /// ``NDEFRecord/init(typeNameFormat:type:identifier:payload:)`` refuses it; parsers should treat it as
  /// ``unknown``, so the decoder accepts it with any type, identifier and payload and keeps it as is
  /// (re-encoding gives the same bytes).
  case reserved = 7

  /// The format encoded in the low three bits of an NDEF record header byte.
  @inline(__always)
  init(headerByte: UInt8) {
    switch headerByte & 0x07 {
    case 0: self = .empty
    case 1: self = .nfcWellKnown
    case 2: self = .media
    case 3: self = .absoluteURI
    case 4: self = .nfcExternal
    case 5: self = .unknown
    case 6: self = .unchanged
    default: self = .reserved
    }
  }

  /// The case name, e.g. `"nfcWellKnown"`.
  public var description: String {
    switch self {
    case .empty: "empty"
    case .nfcWellKnown: "nfcWellKnown"
    case .media: "media"
    case .absoluteURI: "absoluteURI"
    case .nfcExternal: "nfcExternal"
    case .unknown: "unknown"
    case .unchanged: "unchanged"
    case .reserved: "reserved"
    }
  }
}
