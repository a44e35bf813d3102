/// The one shape of every error ReaderKit throws: `ReaderError` (terminal, readers, updates, stores),
/// `NFCReaderError` (NFC sessions, Core NFC's codes) and `NDEFError` (the NDEF codec).
///
/// Each has a stable code name, a sentence for people, machine-readable `context`, and the underlying
/// fault as data in `cause` when there is one, so code that logs, reports or retries can handle any of
/// them the same way:
///
/// ```swift
/// catch let error as any ReaderKitError {
///   log(code: error.codeName, message: error.message, context: error.context, cause: error.cause)
/// }
/// ```
///
/// Each type keeps its own typed `code` for comparisons (`error.code == .readerNotFound`).
public protocol ReaderKitError: Error, Sendable, CustomStringConvertible {
  /// The stable name of what went wrong, e.g. `"bluetoothScanTimedOut"`,
  /// `"readerSessionInvalidationErrorSessionTimeout"`, `"lengthOutOfBounds"`.
  var codeName: String { get }
  /// A sentence for people.
  var message: String { get }
  /// Machine-readable details; a duration is a plain number of seconds.
  var context: [String: String] { get }
  /// The underlying fault, when one is known: an `errno`, a status word, an HTTP status, a D-Bus error.
  var cause: ErrorCause? { get }
}

extension ReaderKitError {
  /// ` (key=value, …)` with the keys sorted, or nothing for an empty context: how every description
  /// shows the context.
  package var renderedContext: String {
    guard !context.isEmpty else { return "" }
    return " (" + context.keys.sorted().map { "\($0)=\(context[$0] ?? "")" }.joined(separator: ", ") + ")"
  }

  /// ` [cause]`, or nothing: how every description shows the cause.
  package var renderedCause: String { cause.map { " [\($0)]" } ?? "" }
}
