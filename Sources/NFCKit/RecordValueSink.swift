/// Where ``MessageParser`` hands the typed view of each record it has checked, as it goes: the decoder's list
/// of values, the parts of a Smart Poster being read, or nowhere.
protocol RecordValueSink {
  /// Called once before the first record, with the number of records the message has room for.
  mutating func reserve(_ count: Int)
  /// The value of the record just checked, in order (``NDEFRecordValue/none`` when it has no view or the
  /// parser does not build one).
  mutating func take(_ value: NDEFRecordValue)
}

/// Drops every value (the parser then builds none).
struct DiscardedRecordValues: RecordValueSink {
  // One stored byte: an `inout` access to a value of size zero hands ThreadSanitizer an address outside
  // the program's memory, and its shadow write then crashes the process.
  private var unused: UInt8 = 0

  mutating func reserve(_ count: Int) {}
  mutating func take(_ value: NDEFRecordValue) {}
}

extension Array: RecordValueSink where Element == NDEFRecordValue {
  mutating func reserve(_ count: Int) { reserveCapacity(count) }
  mutating func take(_ value: NDEFRecordValue) { append(value) }
}
