/// The NFC hardware and system services a reader system drives: capability, polling, tag commands and
/// the scan sheet.
///
/// Implementations deliver every `NFCRadioEvent` on the `Scheduler` given to the `NFCReaderSystem`,
/// one at a time, and never call the handler re-entrantly from inside a command. Commands are
/// fire-and-forget: their results arrive as events. The contract:
/// - Polling comes in rounds. `startPolling(_:)` opens a round, answered by `pollingStarted` or
///   `pollingFailed`; tag events carry their round; `stopPolling(_:)` ends it with no answer. Events of
///   a round that has ended may still arrive and are ignored.
/// - Every tag command is answered exactly once by `response(request, …)` while its round lasts; a tag
///   that leaves the field fails the commands in flight on it (`.tagLost`) before `tagRemoved`.
/// - `readNDEF` selects the tag itself; `connect(to:request:)` selects one tag among several and
///   releases the one selected before.
///
/// The simulator (`SimulatedNFCRadio` in ReaderSimulator) and real backends (PC/SC through pcsc-lite,
/// Core NFC) plug in here; `UnavailableNFCRadio` stands for a host without NFC.
public protocol NFCRadio: AnyObject, Sendable {
  /// Installs the receiver of events. Called once, before any command.
  func setEventHandler(_ handler: @escaping @Sendable (NFCRadioEvent) -> Void)
  /// Whether the host can read NFC tags at all (hardware and service present): a capability, not
  /// whether the radio is on right now.
  var isReadingAvailable: Bool { get }
  /// Why the host cannot read tags while `isReadingAvailable` is false; a session begun then ends with
  /// this failure's Core NFC code, message and context. `.unsupported` unless the radio says more.
  var unavailableReason: NFCRadioFailure { get }
  /// How the system runs sessions: its time limit, and what a second session gets while one runs.
  var policy: NFCSystemPolicy { get }
  /// Opens polling round `round`; answered by `pollingStarted(round)` or `pollingFailed(round, …)`.
  func startPolling(_ round: NFCRadioRequestID)
  /// Ends polling round `round`: tags are released, commands in flight are dropped; no event follows.
  func stopPolling(_ round: NFCRadioRequestID)
  /// Selects `tag` (releasing the tag selected before); answered by `.connected` or `.failed`.
  func connect(to tag: NFCRadioTagID, request: NFCRadioRequestID)
  /// Asks whether `tag` is NDEF-formatted, writable, and how large a message it holds; answered by
  /// `.status` or `.failed`.
  func queryNDEFStatus(of tag: NFCRadioTagID, request: NFCRadioRequestID)
  /// Reads the NDEF message area of `tag` (zero bytes for a blank, formatted tag); answered by
  /// `.read` or `.failed` (`.notNDEFFormatted` for a tag without an NDEF area).
  func readNDEF(from tag: NFCRadioTagID, request: NFCRadioRequestID)
  /// Replaces the NDEF message of `tag` with `bytes`; answered by `.written` or `.failed`
  /// (`.notWritable`, `.capacityExceeded`, `.notNDEFFormatted`, `.tagLost`).
  func writeNDEF(_ bytes: [UInt8], to tag: NFCRadioTagID, request: NFCRadioRequestID)
  /// Makes `tag` read-only for good; answered by `.locked` or `.failed`.
  func writeLock(_ tag: NFCRadioTagID, request: NFCRadioRequestID)
  /// Shows the system's scan sheet with `alertMessage` while a session runs. A backend without a
  /// sheet (a desktop reader) may log it or do nothing.
  func presentSheet(alertMessage: String)
  /// Changes the text of the sheet on display.
  func updateSheet(alertMessage: String)
  /// Dismisses the sheet, showing `errorMessage` first when there is one.
  func dismissSheet(errorMessage: String?)
}

extension NFCRadio {
  public var unavailableReason: NFCRadioFailure { .unsupported }
}

/// Names one radio command or polling round. The reader system makes these unique per session, so a
/// late answer can always be told apart from a current one.
public struct NFCRadioRequestID: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The session that issued the command.
  public var session: UInt64
  /// The command's number within the session, from 1.
  public var sequence: UInt64

  /// Creates an identifier.
  public init(session: UInt64, sequence: UInt64) {
    self.session = session
    self.sequence = sequence
  }

  public static func < (lhs: NFCRadioRequestID, rhs: NFCRadioRequestID) -> Bool {
    (lhs.session, lhs.sequence) < (rhs.session, rhs.sequence)
  }

  /// `session.sequence`, e.g. `3.7`.
  public var description: String { "\(session).\(sequence)" }
}

/// Names one presentation of a tag to the radio: a tag that leaves the field and comes back gets a
/// new identifier.
public struct NFCRadioTagID: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The radio's number for the presentation.
  public var rawValue: UInt64

  /// Creates an identifier.
  public init(_ rawValue: UInt64) { self.rawValue = rawValue }

  public static func < (lhs: NFCRadioTagID, rhs: NFCRadioTagID) -> Bool { lhs.rawValue < rhs.rawValue }

  /// `tag#N`.
  public var description: String { "tag#\(rawValue)" }
}

/// What a tag says about its NDEF area.
public struct NFCRadioTagStatus: Sendable, Hashable {
  /// Whether the tag has an NDEF area at all.
  public var isNDEFFormatted: Bool
  /// Whether the NDEF area can be written.
  public var isWritable: Bool
  /// The largest NDEF message the tag holds, in bytes.
  public var capacity: Int

  /// Creates a status.
  public init(isNDEFFormatted: Bool, isWritable: Bool, capacity: Int) {
    self.isNDEFFormatted = isNDEFFormatted
    self.isWritable = isWritable
    self.capacity = capacity
  }
}
