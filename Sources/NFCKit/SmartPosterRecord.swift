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
      try SmartPosterRecord.parse(
        record.payload.storage, options: options, depth: 1, budget: &budget, offset: .identity)
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
  /// Each record of the nested message is read as the parser hands it on, so no list of them is kept; with
  /// the well-known checks on, the parse that checks its URI and Text payloads also builds their values, once.
  /// The rules of a Smart Poster are checked in record order, but the first one broken is reported only once
  /// the whole nested message has parsed, so that its structural errors come first.
  @inline(__always)
  static func parse(
    _ payload: ArraySlice<UInt8>, options: NDEFDecodingOptions, depth: Int, budget: inout Int, offset: ErrorOffsets,
    building: Bool = true
  ) throws(NDEFError) -> SmartPosterRecord? {
    // With the well-known checks on, the parser checks (and builds) the Text and URI payloads itself.
    let checked = options.validatesWellKnownPayloads
    let parser = MessageParser(
      input: payload, options: options, depth: depth, absolute: offset,
      building: building && checked ? .textAndURI : .nothing)
    var reader = Reader(building: building, checked: checked)
    try parser.parseMessage(budget: &budget, into: &reader)

    if let broken = reader.broken {
      switch broken {
      case .rule(let message, let index, let expected):
        throw NDEFError(
          .invalidSmartPoster, message, offset: offset(parser.start(ofRecord: index)), expected: expected,
          context: ["record": String(index), "depth": String(depth)])
      case .payload(let error, let index):
        // A typed payload check reports offsets in the payload; the decoder reports them in its input.
        throw error.mappingOffset { parser.offset(ofPayloadByte: $0, record: index) }.naming(
          record: index, depth: depth)
      case .resourceTypeUTF8(let invalid, let index):
        throw NDEFError(
          .invalidUTF8, "the type record is not valid UTF-8",
          offset: parser.offset(ofPayloadByte: invalid, record: index),
          expected: UnicodeValidation.utf8Expectation, context: ["record": String(index), "depth": String(depth)])
      }
    }
    guard reader.seenURI else {
      throw NDEFError(
        .invalidSmartPoster, "the Smart Poster has no URI record", offset: offset(0),
        expected: "exactly one URI record", context: ["depth": String(depth)])
    }
    guard building else { return nil }
    // Moved out of the reader, not copied.
    return reader.poster.take()
  }

  /// Reads the records of a Smart Poster's nested message as the parser hands them on: the URI and Text
  /// values it builds (with the well-known checks on), then each record, checked against the rules.
  private struct Reader: RecordValueSink, RecordCollector {
    /// A broken rule, kept until the whole nested message has parsed.
    enum Broken {
      /// A Smart Poster rule, at a record.
      case rule(String, record: Int, expected: String)
      /// A Text or URI payload that does not parse (checked here only with the well-known checks off),
      /// with offsets in the payload.
      case payload(NDEFError, record: Int)
      /// A type record whose payload is not UTF-8 at byte `invalid`.
      case resourceTypeUTF8(invalid: Int, record: Int)
    }

    /// Whether the value is built (otherwise only checked).
    let building: Bool
    /// Whether the parser checked (and, building, built) the Text and URI payloads.
    let checked: Bool
    /// The value being built; `nil` only once ``parse(_:options:depth:budget:offset:building:)`` has taken it.
    var poster: SmartPosterRecord? = Reader.emptyPoster

    /// What ``poster`` starts as, made once: a copy of it costs less than a new value.
    private static let emptyPoster = SmartPosterRecord(uri: .empty)

    /// The first rule broken; nothing more is read after it.
    var broken: Broken?
    var seenURI = false
    private var seenAction = false
    private var seenSize = false
    private var seenType = false
    private var languages = TitleLanguages()
    /// The records read so far.
    private var index = 0
    /// The records the parser has made room for (nothing is stored: only what it asks of a collector).
    private(set) var capacity = 0
    /// Room for this many titles is made at the first one.
    private var roomForTitles = 0
    /// Whether the parser's URI value was taken (the first one: a second URI breaks a rule).
    private var tookURI = false

    @inline(__always)
    init(building: Bool, checked: Bool) {
      self.building = building
      self.checked = checked
    }

    mutating func reserve(_ count: Int) { roomForTitles = count }

    mutating func reserveCapacity(_ count: Int) { capacity = count }

    mutating func take(uri value: consuming URIRecord) {
      guard !tookURI else { return }
      tookURI = true
      poster!.uri = value
    }

    @inline(__always)
    mutating func take(text: consuming TextRecord) {
      if poster!.titles.isEmpty { poster!.titles.reserveCapacity(roomForTitles) }
      poster!.titles.append(text)
    }

    mutating func take(smartPoster: consuming SmartPosterRecord) {}

    mutating func takeNone() {}

    mutating func append(_ fields: Span<UInt8>, header: RecordHeader, joined: NDEFRecord?, in input: ArraySlice<UInt8>)
    {
      defer { index &+= 1 }
      guard broken == nil else { return }
      if header.isWellKnown(UInt8(ascii: "U"), fields: fields) {
        guard !seenURI else {
          return breaks("the Smart Poster has a second URI record", expected: "exactly one URI record")
        }
        seenURI = true
        guard !checked else { return }
        do {
          if building {
            poster!.uri = try header.withPayload(in: fields) { (payload) throws(NDEFError) in
              try URIRecord.parse(payload) { $0 }
            }
          } else {
            _ = try header.withPayload(in: fields) { (payload) throws(NDEFError) in try URIRecord.check(payload) { $0 }
            }
          }
        } catch {
          broken = .payload(error, record: index)
        }
      } else if header.isWellKnown(UInt8(ascii: "T"), fields: fields) {
        if !checked {
          do {
            if building {
              let title = try header.withPayload(in: fields) { (payload) throws(NDEFError) in
                try TextRecord.parse(payload) { $0 }
              }
              if poster!.titles.isEmpty { poster!.titles.reserveCapacity(roomForTitles) }
              poster!.titles.append(title)
            } else {
              try header.withPayload(in: fields) { (payload) throws(NDEFError) in try TextRecord.check(payload) { $0 } }
            }
          } catch {
            broken = .payload(error, record: index)
            return
          }
        }
        guard header.withPayload(in: fields, { languages.insert(titleOf: $0) }) else {
          let language = String(decoding: header.withPayload(in: fields, TitleLanguages.key), as: UTF8.self)
          return breaks(
            "the Smart Poster has a second title in \"\(language)\"", expected: "at most one title per language")
        }
      } else if header.isWellKnown(UInt8(ascii: "a"), UInt8(ascii: "c"), UInt8(ascii: "t"), fields: fields) {
        guard !seenAction else {
          return breaks("the Smart Poster has a second action record", expected: "at most one act record")
        }
        seenAction = true
        guard let value = header.withPayload(in: fields, { $0.count == 1 ? Action(rawValue: $0[0]) : nil }) else {
          return breaks(
            "the action record's payload is \(header.withPayload(in: fields) { NDEFBytes(Array($0)).hex })",
            expected: "a 1-byte action: 00 exec, 01 save or 02 edit")
        }
        poster!.action = value
      } else if header.isWellKnown(UInt8(ascii: "s"), fields: fields) {
        guard !seenSize else {
          return breaks("the Smart Poster has a second size record", expected: "at most one s record")
        }
        seenSize = true
        guard
          let value = header.withPayload(in: fields, { $0.count == 4 ? $0.reduce(0) { $0 << 8 | UInt32($1) } : nil })
        else {
          return breaks(
            "the size record's payload has \(fields.count - header.typeLength - header.idLength) bytes",
            expected: "a 4-byte big-endian size")
        }
        poster!.size = value
      } else if header.isWellKnown(UInt8(ascii: "t"), fields: fields) {
        guard !seenType else {
          return breaks("the Smart Poster has a second type record", expected: "at most one t record")
        }
        seenType = true
        let building = building
        let (invalid, value) = header.withPayload(in: fields) { payload in
          // A MIME type is US-ASCII: one quick look, and the full UTF-8 check only for anything else.
          let isASCII = UnicodeValidation.isASCII(payload)
          let invalid = isASCII ? payload.count : UnicodeValidation.firstInvalidUTF8(payload)
          guard invalid == payload.count, building else { return (invalid, String?.none) }
          return (invalid, UnicodeValidation.string(checkedUTF8: payload, isASCII: isASCII))
        }
        guard invalid == fields.count &- header.typeLength &- header.idLength else {
          broken = .resourceTypeUTF8(invalid: invalid, record: index)
          return
        }
        if building { poster!.resourceType = value }
      } else if building {
        let record = header.record(joined: joined, in: input)
        if let media = record.mediaType, media.hasPrefix("image/") || media.hasPrefix("video/") {
          poster!.icons.append(record)
        } else {
          poster!.additionalRecords.append(record)
        }
      }
    }

    /// Keeps the first broken rule, at the record being read.
    private mutating func breaks(_ message: String, expected: String) {
      broken = .rule(message, record: index, expected: expected)
    }
  }
}

/// The language codes of a Smart Poster's titles, to find a second title in one language (compared without
/// regard to ASCII case): the first few codes of at most eight bytes packed into integers kept inline, the
/// others in a set (a poster may hold thousands of titles), so that a poster with a few titles allocates
/// nothing here.
private struct TitleLanguages {
  /// The packed codes kept inline: a code of 1 to 8 printable bytes, lower-cased, little-endian, zero-padded
  /// (so two packed codes are equal exactly when the codes are).
  private var first: UInt64 = 0
  private var second: UInt64 = 0
  private var third: UInt64 = 0
  private var fourth: UInt64 = 0
  /// How many of `first` to `fourth` are in use.
  private var packed = 0
  /// The codes not packed; `nil` until there is one (an empty set would still be a reference to retain and
  /// release with each poster).
  private var many: Set<[UInt8]>?

  /// Adds the language of a title whose payload, `title`, is a valid Text payload; returns false when an
  /// earlier title has the same language.
  @inline(__always)
  mutating func insert(titleOf title: UnsafeBufferPointer<UInt8>) -> Bool {
    if let key = Self.packedKey(title) {
      if (packed > 0 && first == key) || (packed > 1 && second == key) || (packed > 2 && third == key)
        || (packed > 3 && fourth == key)
      {
        return false
      }
      switch packed {
      case 0: first = key
      case 1: second = key
      case 2: third = key
      case 3: fourth = key
      default:
        return many.insert(Self.key(of: title))
      }
      packed += 1
      // A code packed now may be in the set already (the set holds codes packed ones could not fit beside).
      return !(many?.contains(Self.key(of: title)) ?? false)
    }
    return many.insert(Self.key(of: title))
  }

  /// The language code of a Text payload packed into an integer, or nil when it has more than eight bytes
  /// (or does not fit in the payload).
  @inline(__always)
  private static func packedKey(_ payload: UnsafeBufferPointer<UInt8>) -> UInt64? {
    guard let status = payload.first else { return nil }
    let length = Int(status & 0x3F)
    guard length <= 8, length < payload.count else { return nil }
    var key: UInt64 = 0
    for index in 0..<length { key |= UInt64(lowercased(payload[1 + index])) << (8 * index) }
    return key
  }

  /// The language code of a valid Text payload: after the status byte, as long as its low six bits say.
  private static func language(of title: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(rebasing: title[1..<(1 + Int(title[0] & 0x3F))])
  }

  /// The language code of a title (its valid Text payload) in lower case.
  static func key(of title: UnsafeBufferPointer<UInt8>) -> [UInt8] {
    language(of: title).map(lowercased)
  }

  private static func lowercased(_ byte: UInt8) -> UInt8 {
    (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
  }
}

extension Optional where Wrapped == Set<[UInt8]> {
  /// Inserts `key` into the set, made at the first insertion; returns whether it was not there already.
  fileprivate mutating func insert(_ key: [UInt8]) -> Bool {
    guard self != nil else {
      self = [key]
      return true
    }
    return self!.insert(key).inserted
  }
}
