/// Where ``MessageParser`` hands the typed view of each record it has checked, as it goes: the decoder's list
/// of values, the parts of a Smart Poster being read, or nowhere. One call per record, in order.
protocol RecordValueSink {
  /// Called once before the first record, with the number of records the message has room for.
  mutating func reserve(_ count: Int)
  /// The value of a Text record.
  mutating func take(text: consuming TextRecord)
  /// The value of a URI record.
  mutating func take(uri: consuming URIRecord)
  /// The value of a Smart Poster record.
  mutating func take(smartPoster: consuming SmartPosterRecord)
  /// A record without a value: not a Text, URI or Smart Poster record, or one the parser only checks.
  mutating func takeNone()
}

/// Drops every value (the parser then builds none).
struct DiscardedRecordValues: RecordValueSink {
  // One stored byte: an `inout` access to a value of size zero hands ThreadSanitizer an address outside
  // the program's memory, and its shadow write then crashes the process.
  private var unused: UInt8 = 0

  mutating func reserve(_ count: Int) {}
  mutating func take(text: consuming TextRecord) {}
  mutating func take(uri: consuming URIRecord) {}
  mutating func take(smartPoster: consuming SmartPosterRecord) {}
  mutating func takeNone() {}
}

extension Array: RecordValueSink where Element == NDEFRecordValue {
  mutating func reserve(_ count: Int) { reserveCapacity(count) }
  mutating func take(text: consuming TextRecord) { append(.text(text)) }
  mutating func take(uri: consuming URIRecord) { append(.uri(uri)) }
  mutating func take(smartPoster: consuming SmartPosterRecord) { append(.smartPoster(smartPoster)) }
  mutating func takeNone() { append(.none) }
}
