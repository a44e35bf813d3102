/// Where ``MessageParser`` puts each record once it and its typed view have been handed on: an array, or
/// the reader of a Smart Poster, which takes the records apart as they come.
protocol RecordCollector {
  /// The records there is room for; when that many have come, the parser calls ``reserveCapacity(_:)`` with
  /// the number it expects in all.
  var capacity: Int { get }
  /// Makes room for `count` records in all.
  mutating func reserveCapacity(_ count: Int)
  /// The next record, in order.
  mutating func append(_ record: consuming NDEFRecord)
}

extension Array: RecordCollector where Element == NDEFRecord {}

/// The records of a message in an array, and their values handed to another sink.
struct RecordsAndValues<Values: RecordValueSink>: RecordValueSink, RecordCollector {
  var records: [NDEFRecord] = []
  var values: Values

  init(values: Values) { self.values = values }

  var capacity: Int { records.capacity }
  mutating func reserveCapacity(_ count: Int) { records.reserveCapacity(count) }
  mutating func append(_ record: consuming NDEFRecord) { records.append(record) }
  mutating func reserve(_ count: Int) { values.reserve(count) }
  mutating func take(text: consuming TextRecord) { values.take(text: text) }
  mutating func take(uri: consuming URIRecord) { values.take(uri: uri) }
  mutating func take(smartPoster: consuming SmartPosterRecord) { values.take(smartPoster: smartPoster) }
  mutating func takeNone() { values.takeNone() }
}
