public import ReaderCore

/// The error an NFC reader session reports: Core NFC's `NFCReaderError`, with its codes and raw values.
///
/// `code` is open: it wraps an `Int`, so a code ReaderKit does not know (a newer system's, a backend's)
/// is carried as it is and never crashes anything — compare against the static members
/// (`error.code == .readerSessionInvalidationErrorUserCanceled`) rather than switching over a frozen
/// enum. `message` is for people; `context` carries machine-readable details (`"reason"`,
/// `"offset"`, the operation); `ndefError` is the decoding error of a malformed message, with its byte
/// offset.
///
/// Two codes end a session normally and are not failures to show: `readerSessionInvalidationErrorFirstNDEFTagRead`
/// (204, a session created with `invalidateAfterFirstRead` read its tag) and
/// `readerSessionInvalidationErrorUserCanceled` (200, the user or the app closed the session);
/// ``isNormalEnd`` says so.
public struct NFCReaderError: ReaderKitError, Hashable {
  /// Core NFC's error code, by raw value; unknown values are kept as they are.
  public struct Code: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The raw value, as in Core NFC's `NFCReaderError.Code`.
    public let rawValue: Int

    /// Creates a code from its raw value; any value is accepted.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The feature is not supported: no NFC reader on this device, or a missing entitlement (1).
    public static let readerErrorUnsupportedFeature = Code(rawValue: 1)
    /// A missing entitlement or usage description (2).
    public static let readerErrorSecurityViolation = Code(rawValue: 2)
    /// An invalid parameter, e.g. a tag from another session (3).
    public static let readerErrorInvalidParameter = Code(rawValue: 3)
    /// A parameter of invalid length (4).
    public static let readerErrorInvalidParameterLength = Code(rawValue: 4)
    /// A parameter out of bounds (5).
    public static let readerErrorParameterOutOfBound = Code(rawValue: 5)
    /// The NFC radio is off (e.g. airplane mode) (6).
    public static let readerErrorRadioDisabled = Code(rawValue: 6)
    /// Undocumented by Apple (iOS 26) (7).
    public static let readerErrorIneligible = Code(rawValue: 7)
    /// Undocumented by Apple (iOS 26) (8).
    public static let readerErrorAccessNotAccepted = Code(rawValue: 8)
    /// The tag left the field (or was reset) during an operation (100).
    public static let readerTransceiveErrorTagConnectionLost = Code(rawValue: 100)
    /// Too many retries (101).
    public static let readerTransceiveErrorRetryExceeded = Code(rawValue: 101)
    /// The tag answered with an error, or with something that is not NDEF (102).
    public static let readerTransceiveErrorTagResponseError = Code(rawValue: 102)
    /// The session that the tag or call belongs to is already invalidated (103).
    public static let readerTransceiveErrorSessionInvalidated = Code(rawValue: 103)
    /// The tag is not the connected one; `connect(to:)` it first (104).
    public static let readerTransceiveErrorTagNotConnected = Code(rawValue: 104)
    /// A packet too long for the tag (105).
    public static let readerTransceiveErrorPacketTooLong = Code(rawValue: 105)
    /// The user tapped Cancel on the sheet, or the app invalidated the session (200).
    public static let readerSessionInvalidationErrorUserCanceled = Code(rawValue: 200)
    /// The system's session time limit was reached (201).
    public static let readerSessionInvalidationErrorSessionTimeout = Code(rawValue: 201)
    /// The system ended the session, e.g. the app moved to the background (202).
    public static let readerSessionInvalidationErrorSessionTerminatedUnexpectedly = Code(rawValue: 202)
    /// The system could not run the session now (another session or process holds the radio) (203).
    public static let readerSessionInvalidationErrorSystemIsBusy = Code(rawValue: 203)
    /// The normal end of an `invalidateAfterFirstRead` session: its first NDEF message was read (204).
    public static let readerSessionInvalidationErrorFirstNDEFTagRead = Code(rawValue: 204)
    /// Invalid tag command configuration (300).
    public static let tagCommandConfigurationErrorInvalidParameters = Code(rawValue: 300)
    /// The tag is read-only (400).
    public static let ndefReaderSessionErrorTagNotWritable = Code(rawValue: 400)
    /// The tag did not take the update (401).
    public static let ndefReaderSessionErrorTagUpdateFailure = Code(rawValue: 401)
    /// The message is larger than the tag's capacity (402).
    public static let ndefReaderSessionErrorTagSizeTooSmall = Code(rawValue: 402)
    /// The tag is NDEF-formatted but holds no message (a blank tag) (403).
    public static let ndefReaderSessionErrorZeroLengthMessage = Code(rawValue: 403)

    /// Every code Core NFC documents, by raw value.
    public static let allKnown: [Code] = names.keys.sorted().map(Code.init(rawValue:))

    private static let names: [Int: String] = [
      1: "readerErrorUnsupportedFeature", 2: "readerErrorSecurityViolation", 3: "readerErrorInvalidParameter",
      4: "readerErrorInvalidParameterLength", 5: "readerErrorParameterOutOfBound", 6: "readerErrorRadioDisabled",
      7: "readerErrorIneligible", 8: "readerErrorAccessNotAccepted",
      100: "readerTransceiveErrorTagConnectionLost", 101: "readerTransceiveErrorRetryExceeded",
      102: "readerTransceiveErrorTagResponseError", 103: "readerTransceiveErrorSessionInvalidated",
      104: "readerTransceiveErrorTagNotConnected", 105: "readerTransceiveErrorPacketTooLong",
      200: "readerSessionInvalidationErrorUserCanceled", 201: "readerSessionInvalidationErrorSessionTimeout",
      202: "readerSessionInvalidationErrorSessionTerminatedUnexpectedly",
      203: "readerSessionInvalidationErrorSystemIsBusy", 204: "readerSessionInvalidationErrorFirstNDEFTagRead",
      300: "tagCommandConfigurationErrorInvalidParameters", 400: "ndefReaderSessionErrorTagNotWritable",
      401: "ndefReaderSessionErrorTagUpdateFailure", 402: "ndefReaderSessionErrorTagSizeTooSmall",
      403: "ndefReaderSessionErrorZeroLengthMessage",
    ]

    /// Core NFC's name for the code, e.g. `"readerSessionInvalidationErrorUserCanceled"`; `nil` for
    /// a code it does not document.
    public var name: String? { Self.names[rawValue] }

    /// Whether Core NFC documents the code.
    public var isKnown: Bool { name != nil }

    /// The name, or `"unknown(<raw value>)"`.
    public var description: String { name ?? "unknown(\(rawValue))" }

    public static func < (lhs: Code, rhs: Code) -> Bool { lhs.rawValue < rhs.rawValue }
  }

  /// What went wrong.
  public var code: Code {
    get { storage.code }
    set { uniqueStorage().code = newValue }
  }
  /// A sentence for people.
  public var message: String {
    get { storage.message }
    set { uniqueStorage().message = newValue }
  }
  /// Machine-readable details, e.g. `["reason": "malformedMessage", "offset": "2"]`. A duration
  /// (`timeout`) is a plain number of seconds: `["timeout": "0.5"]`.
  public var context: [String: String] {
    get { storage.context }
    set { uniqueStorage().context = newValue }
  }
  /// Why a message on the tag could not be decoded, with the byte offset of the problem.
  public var ndefError: NDEFError? {
    get { storage.ndefError }
    set { uniqueStorage().ndefError = newValue }
  }
  /// The underlying fault, when one is known: a tag's status word, a PC/SC error code.
  public var cause: ErrorCause? {
    get { storage.cause }
    set { uniqueStorage().cause = newValue }
  }

  /// The fields, in one block that copies share until one of them changes: an error is one reference
  /// to move, copy and keep (a session's machine keeps the one it ended with, every delegate call
  /// carries one), and an error built once, like the app's own invalidation, is handed out without
  /// being copied field by field.
  private var storage: Storage

  /// Creates an error.
  public init(
    _ code: Code, _ message: String, context: [String: String] = [:], ndefError: NDEFError? = nil,
    cause: ErrorCause? = nil
  ) {
    storage = Storage(code: code, message: message, context: context, ndefError: ndefError, cause: cause)
  }

  /// The storage, copied first if another error shares it.
  private mutating func uniqueStorage() -> Storage {
    if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    return storage
  }

  /// Whether both errors share one block of fields (a copy of the other, neither changed since): then
  /// they are equal, without comparing the fields.
  func sharesStorage(with other: NFCReaderError) -> Bool { storage === other.storage }

  public static func == (lhs: NFCReaderError, rhs: NFCReaderError) -> Bool {
    lhs.storage === rhs.storage || lhs.storage.fieldsEqual(rhs.storage)
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(storage.code)
    hasher.combine(storage.message)
    hasher.combine(storage.context)
    hasher.combine(storage.ndefError)
    hasher.combine(storage.cause)
  }

  /// Changed only through `uniqueStorage()`, when no other error holds it, which is what makes it
  /// `@unchecked Sendable`: a storage two errors share is never written.
  private final class Storage: @unchecked Sendable {
    var code: Code
    var message: String
    var context: [String: String]
    var ndefError: NDEFError?
    var cause: ErrorCause?

    init(code: Code, message: String, context: [String: String], ndefError: NDEFError?, cause: ErrorCause?) {
      self.code = code
      self.message = message
      self.context = context
      self.ndefError = ndefError
      self.cause = cause
    }

    func copy() -> Storage {
      Storage(code: code, message: message, context: context, ndefError: ndefError, cause: cause)
    }

    func fieldsEqual(_ other: Storage) -> Bool {
      code == other.code && message == other.message && context == other.context && ndefError == other.ndefError
        && cause == other.cause
    }
  }

  /// The raw value of the code (Core NFC's `errorCode`).
  public var errorCode: Int { code.rawValue }

  /// Whether the error is a session's normal end rather than a failure: the first tag was read
  /// (204) or the session was cancelled (200). Apple's sample shows no alert for either.
  public var isNormalEnd: Bool {
    code == .readerSessionInvalidationErrorFirstNDEFTagRead || code == .readerSessionInvalidationErrorUserCanceled
  }

  /// `name (raw): message (key=value, …) [cause]`, with the context keys sorted.
  public var description: String { "\(code) (\(code.rawValue)): \(message)\(renderedContext)\(renderedCause)" }

  /// The code's stable name, Core NFC's (`code.description`), e.g. `"readerErrorRadioDisabled"`.
  public var codeName: String { code.description }
}
