import ReaderCore

/// Where an `HTTPResponseReader` gets the bytes of an answer: a connected socket (`SocketHTTPFetch`),
/// or bytes already in memory cut into slices (`HTTPByteSlices`, for tests and fuzzing).
///
/// A source owns everything about waiting: its deadlines, its stall timeout and its cancellation, whose
/// errors the reader passes on unchanged.
package protocol HTTPByteSource {
  /// Reads at least one byte into `buffer`, and at most `buffer.count`, and returns how many; returns 0
  /// only at the end of the stream. `buffer` is never empty.
  /// - Throws: the source's own `ReaderError`s: a failed connection, a timeout, a cancellation.
  mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(ReaderError) -> Int
}
