import NFCKit

/// The record options `ndef encode` and `nfc write` share: one record per `--text`, `--uri`, `--mime`
/// or `--poster`, in the order given; `--lang` belongs to the `--text` or `--title` just before it,
/// and `--title`, `--action`, `--resource-size` and `--resource-type` to the `--poster` before them.
enum RecordOptions {
  static let options: [CommandHelp.Option] = [
    .init("text", ["TEXT"], "a Text record"),
    .init("lang", ["CODE"], "the language code of the --text or --title just before (default en)"),
    .init("uri", ["URI"], "a URI record"),
    .init("mime", ["TYPE", "FILE"], "a media record of TYPE (such as text/plain) holding FILE's bytes"),
    .init("poster", ["URI"], "a Smart Poster record for URI, with the options below that follow it"),
    .init("title", ["TEXT"], "a title of the --poster before (at most one per language)"),
    .init("action", ["ACTION"], "what a phone should do with the --poster's URI: exec, save or edit"),
    .init("resource-size", ["BYTES"], "the size of the --poster's resource, 0-4294967295"),
    .init("resource-type", ["TYPE"], "the media type of the --poster's resource"),
  ]

  /// The records `options` ask for, in order.
  /// - Throws: a `UsageError` for an option that belongs to a record that is not just before it, or a
  ///   value that is not one of the choices.
  static func specs(_ options: ArgumentList) throws(UsageError) -> [NDEFCommand.RecordSpec] {
    var specs: [NDEFCommand.RecordSpec] = []
    /// Whether the last thing given was a poster's title (which a `--lang` then belongs to).
    var afterTitle = false
    for occurrence in options.occurrences {
      let value = occurrence.values.first ?? ""
      let name = occurrence.name
      defer { afterTitle = name == "title" }
      switch name {
      case "text": specs.append(.text(value, language: "en"))
      case "uri": specs.append(.uri(value))
      case "mime": specs.append(.mime(type: value, file: occurrence.values.last ?? ""))
      case "poster": specs.append(.smartPoster(NDEFCommand.SmartPosterSpec(uri: value)))
      case "lang":
        if afterTitle, case .smartPoster(var poster) = specs.last, !poster.titles.isEmpty {
          poster.titles[poster.titles.count - 1].language = value
          specs[specs.count - 1] = .smartPoster(poster)
        } else if case .text(let text, _) = specs.last {
          specs[specs.count - 1] = .text(text, language: value)
        } else {
          throw UsageError("--lang must follow a --text or a --title")
        }
      case "title", "action", "resource-size", "resource-type":
        guard case .smartPoster(var poster) = specs.last else { throw UsageError("--\(name) must follow a --poster") }
        switch name {
        case "title": poster.titles.append(.init(text: value, language: "en"))
        case "action":
          guard let action = SmartPosterRecord.Action.allCases.first(where: { $0.description == value }) else {
            throw UsageError("--action must be exec, save or edit, not '\(value)'")
          }
          poster.action = action
        case "resource-size":
          guard let size = UInt32(value) else {
            throw UsageError("--resource-size must be a whole number from 0 to \(UInt32.max), not '\(value)'")
          }
          poster.size = size
        default: poster.resourceType = value
        }
        specs[specs.count - 1] = .smartPoster(poster)
      default: break
      }
    }
    return specs
  }
}
