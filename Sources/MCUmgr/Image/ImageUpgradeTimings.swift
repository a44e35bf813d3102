/// How long each step of an SMP image update may take, and how requests are sized.
public struct ImageUpgradeTimings: Sendable, Hashable {
  /// How long the reader has to answer an ordinary request (state, parameters, confirm).
  public var request: Duration
  /// How long the reader has to answer the first upload chunk, which makes Zephyr erase the slot.
  public var firstChunk: Duration
  /// How long the reader has to answer any other chunk.
  public var chunk: Duration
  /// How many times a chunk that got no answer is sent again before the update fails.
  public var chunkRetries: Int
  /// How long the reader has, after it accepted the reset, to drop the link, boot (MCUboot swaps the
  /// images first) and be reachable again. Keep it under the terminal's install stall timeout (60 s).
  public var restart: Duration
  /// Below this many bytes per write, requests are sized by the reader's SMP buffer instead and sent in
  /// several writes (the reader reassembles them, as Zephyr's SMP Bluetooth transport does).
  public var minimumSingleWriteFrame: Int
  /// The reader's SMP buffer when it does not say (Zephyr's default `MCUMGR_TRANSPORT_NETBUF_SIZE`).
  public var defaultBufferSize: Int

  /// Timings that suit Zephyr readers over Bluetooth LE.
  public init(
    request: Duration = .seconds(5), firstChunk: Duration = .seconds(30), chunk: Duration = .seconds(5),
    chunkRetries: Int = 3, restart: Duration = .seconds(45), minimumSingleWriteFrame: Int = 96,
    defaultBufferSize: Int = 384
  ) {
    self.request = request
    self.firstChunk = firstChunk
    self.chunk = chunk
    self.chunkRetries = chunkRetries
    self.restart = restart
    self.minimumSingleWriteFrame = minimumSingleWriteFrame
    self.defaultBufferSize = defaultBufferSize
  }
}
