import ReaderCore

/// A connection an HTTP request is written to and its answer read from: a plain TCP socket
/// (`TCPByteStream`) or TLS over one (`TLSByteStream`). `SocketHTTPFetch` holds the HTTP logic once,
/// over either.
///
/// A stream owns everything about waiting: its deadlines, its stall timeout and its cancellation, whose
/// errors the fetch passes on unchanged.
protocol HTTPByteStream: HTTPByteSource {
  /// Sends all of `bytes`, waiting for room as reads wait for bytes.
  /// - Throws: the stream's own `ReaderError`s: a failed connection, a timeout, a cancellation.
  mutating func write(_ bytes: [UInt8]) throws(ReaderError)

  /// Releases the connection (called once, when the fetch is over, whatever its outcome).
  func close()
}
