/// The typed view of an NFC Forum well-known Smart Poster record (`Sp`): a URI with titles and hints.
///
/// The payload of a Smart Poster is itself an NDEF message holding exactly one URI record, any number of
/// Text records as titles (at most one per language), and optionally one action record (`act`), one size
/// record (`s`), one type record (`t`), icons (media records of type `image/…` or `video/…`) and other
/// records, which are kept in ``additionalRecords``. `act`, `s` and `t` are local types: they mean
/// something only inside a Smart Poster.
///
/// ```swift
/// let poster = SmartPosterRecord(
///   uri: URIRecord(uri: "https://www.example.com"),
///   titles: [TextRecord(text: "Example", languageCode: "en"), TextRecord(text: "Beispiel", languageCode: "de")],
///   action: .execute)
/// let message = NDEFMessage(try poster.record())
/// ```
public struct SmartPosterRecord: Hashable, Sendable {
  /// The recommended action (`act` record).
  public enum Action: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// 0: do the action (open the URI, send the message, make the call).
    case execute = 0
    /// 1: save for later.
    case save = 1
    /// 2: open for editing.
    case edit = 2

    /// `"exec"`, `"save"` or `"edit"`.
    public var description: String {
      switch self {
      case .execute: "exec"
      case .save: "save"
      case .edit: "edit"
      }
    }
  }

  /// The resource.
  public var uri: URIRecord
  /// Titles, at most one per language code.
  public var titles: [TextRecord]
  /// What to do with the resource, if said.
  public var action: Action?
  /// The size of the resource in bytes (`s` record), if said.
  public var size: UInt32?
  /// The MIME type of the resource (`t` record), if said.
  public var resourceType: String?
  /// Icon records (media records of type `image/…` or `video/…`).
  public var icons: [NDEFRecord]
  /// Any other records of the nested message, kept as they are.
  public var additionalRecords: [NDEFRecord]

  /// Creates a Smart Poster value.
  public init(
    uri: URIRecord, titles: [TextRecord] = [], action: Action? = nil, size: UInt32? = nil,
    resourceType: String? = nil, icons: [NDEFRecord] = [], additionalRecords: [NDEFRecord] = []
  ) {
    self.uri = uri
    self.titles = titles
    self.action = action
    self.size = size
    self.resourceType = resourceType
    self.icons = icons
    self.additionalRecords = additionalRecords
  }

  /// Reads a Smart Poster record, decoding its nested message with `options`.
  ///
  /// - Throws: ``NDEFError/Code/typeMismatch`` when `record` is not a well-known `Sp` record; any decoding
  ///   error of the nested message; ``NDEFError/Code/invalidSmartPoster`` when the nested message breaks
  ///   the Smart Poster rules. Offsets are relative to the record's payload.
  public init(_ record: NDEFRecord, options: NDEFDecodingOptions = NDEFDecodingOptions()) throws(NDEFError) {
    guard record.isWellKnown(UInt8(ascii: "S"), UInt8(ascii: "p")) else {
      throw mismatch(record, expected: "a well-known Smart Poster record (TNF 1, type Sp)")
    }
    var budget = options.effectiveMaxRecords
    let parsed = try parsingOnItsOwn { () throws(NDEFError) in
      try SmartPosterRecord.parse(record.payload, options: options, depth: 1, budget: &budget, offset: .identity)
    }
    // Parsing with `building` (the default) always returns a value.
    self = parsed!
  }

  /// The title in the given language (compared without regard to case), if there is one.
  public func title(languageCode: String) -> String? {
    titles.first { $0.languageCode.lowercased() == languageCode.lowercased() }?.text
  }

  /// The nested message, in the order URI, titles, action, icons, size, type, additional records.
  ///
  /// - Throws: ``NDEFError/Code/invalidArgument`` for an invalid title or URI, or two titles in one language.
  public func message() throws(NDEFError) -> NDEFMessage {
    var seen: Set<String> = []
    for title in titles where !seen.insert(title.languageCode.lowercased()).inserted {
      throw NDEFError(
        .invalidArgument, "two titles have the language code \"\(title.languageCode)\"", offset: 0,
        expected: "at most one title per language", context: ["field": "titles"])
    }
    var records = [try uri.record()]
    for title in titles { records.append(try title.record()) }
    if let action {
      records.append(
        try NDEFRecord(typeNameFormat: .nfcWellKnown, type: NDEFBytes(utf8: "act"), payload: [action.rawValue]))
    }
    records += icons
    if let size {
      let bytes: NDEFBytes = [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
      records.append(try NDEFRecord(typeNameFormat: .nfcWellKnown, type: NDEFBytes(utf8: "s"), payload: bytes))
    }
    if let resourceType {
      records.append(
        try NDEFRecord(
          typeNameFormat: .nfcWellKnown, type: NDEFBytes(utf8: "t"), payload: NDEFBytes(utf8: resourceType)))
    }
    records += additionalRecords
    return try NDEFMessage(records: records)
  }

  /// The well-known `Sp` record whose payload is the canonical encoding of ``message()``.
  ///
  /// - Throws: as ``message()``.
  public func record(identifier: NDEFBytes = []) throws(NDEFError) -> NDEFRecord {
    let payload = NDEFBytes(try message().encoded())
    return try NDEFRecord(
      typeNameFormat: .nfcWellKnown, type: NDEFBytes(utf8: "Sp"), identifier: identifier, payload: payload)
  }

  /// Parses a Smart Poster payload as a nested message at `depth`; `offset` maps payload indices to the
  /// offsets reported in errors. With `building` false it only checks (the decoder's check) and returns nil.
  ///
  /// With the well-known checks on, the parse of the nested message that checks its URI and Text payloads
  /// also builds their values, once; the rules of a Smart Poster are checked after the whole nested message
  /// has parsed, so its structural errors come first.
  static func parse(
    _ payload: NDEFBytes, options: NDEFDecodingOptions, depth: Int, budget: inout Int, offset: ErrorOffsets,
    building: Bool = true
  ) throws(NDEFError) -> SmartPosterRecord? {
    // With the well-known checks on, the parser has checked the Text and URI payloads already.
    let checked = options.validatesWellKnownPayloads
    let parser = MessageParser(
      input: payload.storage, options: options, depth: depth, absolute: offset,
      building: building && checked ? .textAndURI : .nothing)
    var parts = Parts()
    let records = try parser.parseMessage(budget: &budget, values: &parts)

    func violation(_ message: String, record index: Int, expected: String) -> NDEFError {
      NDEFError(
        .invalidSmartPoster, message, offset: offset(parser.start(ofRecord: index)), expected: expected,
        context: ["record": String(index), "depth": String(depth)])
    }

    var poster = SmartPosterRecord(uri: .init(prefix: .none, remainder: ""))
    var seenURI = false
    var seenAction = false
    var seenSize = false
    var seenType = false
    var languages = TitleLanguages()
    /// An error of a typed payload check, which reports offsets in the payload, as the decoder reports it.
    func failure(_ error: NDEFError, record index: Int) -> NDEFError {
      error.mappingOffset { parser.offset(ofPayloadByte: $0, record: index) }.naming(record: index, depth: depth)
    }

    for index in records.indices {
      let record = records[index]
      if record.isWellKnown(UInt8(ascii: "U")) {
        guard !seenURI else {
          throw violation("the Smart Poster has a second URI record", record: index, expected: "exactly one URI record")
        }
        seenURI = true
        do {
          if building && !checked {
            poster.uri = try URIRecord.parse(record.payload) { $0 }
          } else if !checked {
            try URIRecord.check(record.payload) { $0 }
          }
        } catch {
          throw failure(error, record: index)
        }
      } else if record.isWellKnown(UInt8(ascii: "T")) {
        do {
          if building && !checked {
            poster.titles.append(try TextRecord.parse(record.payload) { $0 })
          } else if !checked {
            try TextRecord.check(record.payload) { $0 }
          }
        } catch {
          throw failure(error, record: index)
        }
        guard languages.insert(titleAt: index, of: records) else {
          let language = String(decoding: TitleLanguages.key(of: record), as: UTF8.self)
          throw violation(
            "the Smart Poster has a second title in \"\(language)\"", record: index,
            expected: "at most one title per language")
        }
      } else if record.isWellKnown(UInt8(ascii: "a"), UInt8(ascii: "c"), UInt8(ascii: "t")) {
        guard !seenAction else {
          throw violation(
            "the Smart Poster has a second action record", record: index, expected: "at most one act record")
        }
        seenAction = true
        guard record.payload.count == 1, let value = Action(rawValue: record.payload[0]) else {
          throw violation(
            "the action record's payload is \(record.payload.hex)", record: index,
            expected: "a 1-byte action: 00 exec, 01 save or 02 edit")
        }
        poster.action = value
      } else if record.isWellKnown(UInt8(ascii: "s")) {
        guard !seenSize else {
          throw violation("the Smart Poster has a second size record", record: index, expected: "at most one s record")
        }
        seenSize = true
        guard record.payload.count == 4 else {
          throw violation(
            "the size record's payload has \(record.payload.count) bytes", record: index,
            expected: "a 4-byte big-endian size")
        }
        poster.size = record.payload.reduce(0) { $0 << 8 | UInt32($1) }
      } else if record.isWellKnown(UInt8(ascii: "t")) {
        guard !seenType else {
          throw violation("the Smart Poster has a second type record", record: index, expected: "at most one t record")
        }
        seenType = true
        let invalid = UnicodeValidation.firstInvalidUTF8(record.payload)
        guard invalid == record.payload.count else {
          throw NDEFError(
            .invalidUTF8, "the type record is not valid UTF-8",
            offset: parser.offset(ofPayloadByte: invalid, record: index),
            expected: UnicodeValidation.utf8Expectation, context: ["record": String(index), "depth": String(depth)])
        }
        if building { poster.resourceType = String(decoding: record.payload.storage, as: UTF8.self) }
      } else if building {
        if let media = record.mediaType, media.hasPrefix("image/") || media.hasPrefix("video/") {
          poster.icons.append(record)
        } else {
          poster.additionalRecords.append(record)
        }
      }
    }
    guard seenURI else {
      throw NDEFError(
        .invalidSmartPoster, "the Smart Poster has no URI record", offset: offset(0),
        expected: "exactly one URI record", context: ["depth": String(depth)])
    }
    guard building else { return nil }
    if checked, let uri = parts.uri {
      // The values the parser built: the only URI, and every title in order.
      poster.uri = uri
      poster.titles = parts.titles
    }
    return poster
  }

  /// The URI and Text values the parser of the nested message builds as it checks their payloads.
  private struct Parts: RecordValueSink {
    var uri: URIRecord?
    var titles: [TextRecord] = []
    /// Room for this many titles is made at the first one.
    private var roomForTitles = 0

    mutating func reserve(_ count: Int) { roomForTitles = count }

    mutating func take(_ value: NDEFRecordValue) {
      switch value {
      case .uri(let value):
        if uri == nil { uri = value }
      case .text(let value):
        if titles.isEmpty { titles.reserveCapacity(roomForTitles) }
        titles.append(value)
      case .smartPoster, .none:
        break
      }
    }
  }
}

/// The language codes of a Smart Poster's titles, to find a second title in one language (compared without
/// regard to ASCII case): compared one by one with the earlier titles while there are few, in a set once
/// there are many (a poster may hold thousands of titles).
private struct TitleLanguages {
  /// Titles compared one by one before the set is built.
  private static let fewTitles = 16
  private var count = 0
  private var many: Set<[UInt8]> = []

  /// Adds the language of the title `records[index]`, whose payload and those of the earlier titles are valid
  /// Text payloads; returns false when an earlier title has the same language.
  mutating func insert(titleAt index: Int, of records: [NDEFRecord]) -> Bool {
    count += 1
    let language = Self.language(of: records[index])
    if count <= Self.fewTitles {
      for earlier in 0..<index where records[earlier].isWellKnown(UInt8(ascii: "T")) {
        if Self.sameIgnoringCase(Self.language(of: records[earlier]), language) { return false }
      }
      return true
    }
    if count == Self.fewTitles + 1 {
      for earlier in 0..<index where records[earlier].isWellKnown(UInt8(ascii: "T")) {
        many.insert(Self.key(of: records[earlier]))
      }
    }
    return many.insert(Self.key(of: records[index])).inserted
  }

  /// The language code of a valid Text payload: after the status byte, as long as its low six bits say.
  private static func language(of title: NDEFRecord) -> NDEFBytes {
    title.payload[1..<(1 + Int(title.payload[0] & 0x3F))]
  }

  /// The language code of a title in lower case.
  static func key(of title: NDEFRecord) -> [UInt8] {
    language(of: title).map(lowercased)
  }

  private static func lowercased(_ byte: UInt8) -> UInt8 {
    (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
  }

  private static func sameIgnoringCase(_ first: NDEFBytes, _ second: NDEFBytes) -> Bool {
    guard first.count == second.count else { return false }
    for index in 0..<first.count where lowercased(first[index]) != lowercased(second[index]) { return false }
    return true
  }
}
