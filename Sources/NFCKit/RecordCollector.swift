/// Where ``MessageParser`` puts each record once it and its typed view have been handed on: an array, or
/// the reader of a Smart Poster, which takes the records apart as they come.
protocol RecordCollector {
  /// The records there is room for; when that many have come, the parser calls ``reserveCapacity(_:)`` with
  /// the number it expects in all.
  var capacity: Int { get }
  /// Makes room for `count` records in all.
  mutating func reserveCapacity(_ count: Int)
  /// The next record, in order: `fields` are its TYPE, ID and PAYLOAD where they lie, `header` its (first)
  /// header, and ``RecordHeader/record(joined:in:)`` makes the ``NDEFRecord`` of them, for a collector that keeps
  /// it, from `joined`, the record joined from chunks (`nil` when it was not chunked), or `input`.
  mutating func append(
    _ fields: Span<UInt8>, header: RecordHeader, joined: NDEFRecord?, in input: ArraySlice<UInt8>)
}

/// The records of a message in an array, and their values handed to another sink.
struct RecordsAndValues<Values: RecordValueSink>: RecordValueSink, RecordCollector {
  var records: [NDEFRecord] = []
  var values: Values

  init(values: Values) { self.values = values }

  var capacity: Int { records.capacity }
  mutating func reserveCapacity(_ count: Int) { records.reserveCapacity(count) }
  mutating func append(
    _ fields: Span<UInt8>, header: RecordHeader, joined: NDEFRecord?, in input: ArraySlice<UInt8>
  ) {
    records.append(header.record(joined: joined, in: input))
  }
  mutating func reserve(_ count: Int) { values.reserve(count) }
  mutating func take(text: consuming TextRecord) { values.take(text: text) }
  mutating func take(uri: consuming URIRecord) { values.take(uri: uri) }
  mutating func take(smartPoster: consuming SmartPosterRecord) { values.take(smartPoster: smartPoster) }
  mutating func takeNone() { values.takeNone() }
}
