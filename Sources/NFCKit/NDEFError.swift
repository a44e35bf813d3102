public import ReaderCore

/// The error every NFCKit NDEF operation throws: what went wrong, at which byte, and what was expected.
///
/// `code` is extensible (a struct wrapping a private enum, like `ReaderError.Code`): compare against
/// the static members (`error.code == .lengthOutOfBounds`) rather than switching over a frozen enum.
///
/// `offset` is the byte offset, from the start of the decoder's input, of the byte where the problem
/// was found: the header byte of a record with bad flags, the length field that points past the end, the
/// first byte of an invalid UTF-8 sequence. Errors inside a Smart Poster's nested message and inside
/// reassembled chunks are reported at their position in the original input. When a typed view such as
/// ``TextRecord/init(_:)`` parses a record on its own, `offset` is relative to that record's payload
/// (`context["relativeTo"] == "payload"`). Errors raised while building a record from values have
/// `offset` 0 and name the argument in `context["field"]`.
///
/// ```swift
/// do {
///   _ = try NDEFDecoder().decode([0xD1, 0x01, 0x05, 0x54])
/// } catch {
///   print(error) // lengthOutOfBounds at byte 2: PAYLOAD_LENGTH 5 of record 0 points past the end of the input; …
/// }
/// ```
public struct NDEFError: ReaderKitError, Hashable {
  /// What went wrong, as a stable identifier.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Wrapped: String, Hashable, Sendable {
      case zeroLengthMessage, truncated, lengthOutOfBounds, missingMessageBegin, unexpectedMessageBegin
      case missingMessageEnd, trailingBytes, invalidTypeLength, invalidEmptyRecord, unexpectedUnchangedRecord
      case invalidChunk, tooManyRecords, payloadTooLarge, nestingTooDeep, invalidTextRecord, invalidUTF8
      case invalidUTF16, invalidURIPrefix, invalidURI, invalidSmartPoster, typeMismatch, invalidRecord
      case invalidArgument
    }
    private let wrapped: Wrapped
    private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

    /// The input has no bytes at all. An NDEF message has at least one record; a tag whose NDEF area
    /// has length 0 holds no message (Core NFC: `ndefReaderSessionErrorZeroLengthMessage`).
    public static let zeroLengthMessage = Code(.zeroLengthMessage)
    /// The input ends inside a record header (flags, a length field) or before an expected chunk.
    public static let truncated = Code(.truncated)
    /// A TYPE, ID or PAYLOAD length (or a length inside a payload) points past the end of the input.
    public static let lengthOutOfBounds = Code(.lengthOutOfBounds)
    /// The first record does not have the MB (message begin) flag.
    public static let missingMessageBegin = Code(.missingMessageBegin)
    /// A record after the first has the MB flag.
    public static let unexpectedMessageBegin = Code(.unexpectedMessageBegin)
    /// The input ends after a record without the ME (message end) flag.
    public static let missingMessageEnd = Code(.missingMessageEnd)
    /// Bytes follow the record that has the ME flag.
    public static let trailingBytes = Code(.trailingBytes)
    /// The TYPE_LENGTH does not fit the TNF: zero for well-known, media, absolute-URI or external types,
    /// or non-zero for empty, unknown and unchanged.
    public static let invalidTypeLength = Code(.invalidTypeLength)
    /// A TNF 0 (empty) record has an identifier or a payload.
    public static let invalidEmptyRecord = Code(.invalidEmptyRecord)
    /// A TNF 6 (unchanged) record that is not a middle or terminating chunk: on its own, or as the
    /// first chunk of a chunked record.
    public static let unexpectedUnchangedRecord = Code(.unexpectedUnchangedRecord)
    /// A chunk sequence breaks the rules: a middle or terminating chunk with a TNF other than 6, a
    /// TYPE_LENGTH other than 0 or the IL flag; ME on a chunk with CF; a chunked empty record.
    public static let invalidChunk = Code(.invalidChunk)
    /// The input has more records than ``NDEFDecodingOptions/maxRecords``.
    public static let tooManyRecords = Code(.tooManyRecords)
    /// A (reassembled) payload is larger than ``NDEFDecodingOptions/maxPayloadSize``.
    public static let payloadTooLarge = Code(.payloadTooLarge)
    /// Smart Posters nest deeper than ``NDEFDecodingOptions/maxNestingDepth``.
    public static let nestingTooDeep = Code(.nestingTooDeep)
    /// A Text record's status byte or language code is invalid.
    public static let invalidTextRecord = Code(.invalidTextRecord)
    /// Bytes that must be UTF-8 are not.
    public static let invalidUTF8 = Code(.invalidUTF8)
    /// Bytes that must be UTF-16 are not (odd length, unpaired surrogate).
    public static let invalidUTF16 = Code(.invalidUTF16)
    /// A URI record's identifier code is not one of 0x00–0x23.
    public static let invalidURIPrefix = Code(.invalidURIPrefix)
    /// A URI record has no identifier code byte, or its URI field holds a control character (0x00–0x1F).
    public static let invalidURI = Code(.invalidURI)
    /// A Smart Poster's nested message breaks the Smart Poster rules (not exactly one URI record, a bad
    /// action, size or type record, two titles in the same language).
    public static let invalidSmartPoster = Code(.invalidSmartPoster)
    /// A typed view was asked of a record of another type (e.g. ``TextRecord/init(_:)`` on a URI record).
    public static let typeMismatch = Code(.typeMismatch)
    /// The fields given to ``NDEFRecord/init(typeNameFormat:type:identifier:payload:)`` break the NDEF rules.
    public static let invalidRecord = Code(.invalidRecord)
    /// A value given to a builder is invalid (an empty or too long language code, a bad external type name).
    public static let invalidArgument = Code(.invalidArgument)

    /// The stable name of the code, e.g. `"lengthOutOfBounds"`.
    public var description: String { wrapped.rawValue }
  }

  /// What went wrong.
  public var code: Code
  /// A sentence for people.
  public var message: String
  /// The byte offset of the problem (see the type's documentation for what it is relative to).
  public var offset: Int
  /// What the decoder expected to find at `offset`, e.g. `"TNF 6 (unchanged) on a middle chunk"`.
  public var expected: String
  /// Machine-readable details, e.g. `["record": "2", "field": "PAYLOAD_LENGTH"]`.
  public var context: [String: String]

  /// Creates an error.
  public init(
    _ code: Code, _ message: String, offset: Int, expected: String, context: [String: String] = [:]
  ) {
    self.code = code
    self.message = message
    self.offset = offset
    self.expected = expected
    self.context = context
  }

  /// `code at byte N: message; expected … (key=value, …)`, with the context keys sorted.
  public var description: String { "\(code) at byte \(offset): \(message); expected \(expected)\(renderedContext)" }

  /// The code's stable name (`code.description`), e.g. `"lengthOutOfBounds"`.
  public var codeName: String { code.description }

  /// Always nil: an NDEF error is the codec's own finding about the bytes (their fault is at `offset`),
  /// never a fault underneath it. An NFC session that fails on a tag's message keeps this error in
  /// `NFCReaderError.ndefError`.
  public var cause: ErrorCause? { nil }
}

extension NDEFError {
  /// Runs the check of a record nested in a Smart Poster, naming the record (`context["record"]`,
  /// its index in the nested message) and the nesting depth (`context["depth"]`) in its error,
  /// unless the error already names them.
  static func naming<T>(record index: Int, depth: Int, _ body: () throws(NDEFError) -> T) throws(NDEFError) -> T {
    do {
      return try body()
    } catch {
      throw error.naming(record: index, depth: depth)
    }
  }

  /// This error naming the record and nesting depth, as ``naming(record:depth:_:)`` does.
  func naming(record index: Int, depth: Int) -> NDEFError {
    var error = self
    error.context["record"] = error.context["record"] ?? String(index)
    error.context["depth"] = error.context["depth"] ?? String(depth)
    return error
  }

  /// This error with its offset mapped: the checks of typed payloads run with offsets in the payload, and
  /// the decoder maps an error's offset into its input afterwards, so that nothing is captured or allocated
  /// for error reporting unless a check fails.
  func mappingOffset(_ map: (Int) -> Int) -> NDEFError {
    var error = self
    error.offset = map(offset)
    return error
  }
}
