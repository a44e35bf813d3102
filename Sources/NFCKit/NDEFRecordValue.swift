/// The typed view of one decoded record, built by the same pass of ``NDEFDecoder/decodeTyped(_:)`` that checked
/// the record's payload.
///
/// ```swift
/// let typed = try NDEFDecoder().decodeTyped(bytes)
/// for value in typed.values {
///   if case .text(let text) = value { print(text.languageCode, text.text) }
/// }
/// ```
public enum NDEFRecordValue: Hashable, Sendable {
  /// A well-known Text record (`T`), as ``TextRecord/init(_:)`` reads it.
  case text(TextRecord)
  /// A well-known URI record (`U`), as ``URIRecord/init(_:)`` reads it.
  case uri(URIRecord)
  /// A well-known Smart Poster record (`Sp`), as ``SmartPosterRecord/init(_:options:)`` reads it with the
  /// decoder's options.
  case smartPoster(SmartPosterRecord)
  /// Any other record (media, absolute-URI, external, unknown, empty, reserved, and well-known types other
  /// than `T`, `U` and `Sp`): NFCKit has no typed view of it; read the record's own fields.
  case none
}
