/// The management groups ReaderKit uses (`mcumgr_group_t`).
public enum SMPGroup {
  /// OS management: echo (0), reset (5), MCUmgr parameters (6).
  public static let os: UInt16 = 0
  /// Application image management: state (0), upload (1).
  public static let image: UInt16 = 1
}

/// One request to a reader's SMP server: where it goes, its CBOR body, and how long the reader has to
/// answer it. The constructors below build the commands of Zephyr's OS (group 0) and image (group 1)
/// management pages, field for field.
public struct SMPRequest: Sendable, Hashable {
  /// `read` or `write`.
  public var operation: SMPHeader.Operation
  /// The management group.
  public var group: UInt16
  /// The command within the group.
  public var command: UInt8
  /// The body, a CBOR map.
  public var body: CBORValue
  /// How long the reader has to answer, from the moment the request is sent.
  public var timeout: Duration

  /// Creates a request.
  public init(operation: SMPHeader.Operation, group: UInt16, command: UInt8, body: CBORValue, timeout: Duration) {
    self.operation = operation
    self.group = group
    self.command = command
    self.body = body
    self.timeout = timeout
  }

  /// OS group, command 0: the reader answers `{"r": text}`.
  public static func echo(_ text: String, timeout: Duration) -> SMPRequest {
    SMPRequest(operation: .write, group: SMPGroup.os, command: 0, body: ["d": .text(text)], timeout: timeout)
  }

  /// OS group, command 5: the reader answers, then resets. `force` asks it to reset even where an
  /// application hook would refuse (Zephyr decodes it as a boolean in `os_mgmt_reset`); it is only sent
  /// when set.
  public static func reset(force: Bool = false, timeout: Duration) -> SMPRequest {
    SMPRequest(operation: .write, group: SMPGroup.os, command: 5, body: force ? ["force": true] : [:], timeout: timeout)
  }

  /// OS group, command 6 (MCUmgr parameters): the reader answers `{"buf_size": n, "buf_count": n}`,
  /// the size of the buffer one request must fit in.
  public static func parameters(timeout: Duration) -> SMPRequest {
    SMPRequest(operation: .read, group: SMPGroup.os, command: 6, body: [:], timeout: timeout)
  }

  /// Image group, command 0, read: the state of the images (`{"images": [{slot, version, hash, …}]}`).
  public static func imageState(timeout: Duration) -> SMPRequest {
    SMPRequest(operation: .read, group: SMPGroup.image, command: 0, body: [:], timeout: timeout)
  }

  /// Image group, command 0, write with `confirm: false`: marks the image with `hash` (its MCUboot
  /// SHA-256 TLV) for a test boot at the next reset. The hash is a byte string, as Zephyr's
  /// `img_mgmt_state_write` decodes it.
  public static func imageTest(hash: [UInt8], timeout: Duration) -> SMPRequest {
    SMPRequest(
      operation: .write, group: SMPGroup.image, command: 0, body: ["hash": .bytes(hash), "confirm": false],
      timeout: timeout)
  }

  /// Image group, command 0, write with `confirm: true`: makes the running image with `hash` permanent
  /// (without a hash: whatever image runs).
  public static func imageConfirm(hash: [UInt8]?, timeout: Duration) -> SMPRequest {
    let body: CBORValue = hash.map { ["hash": .bytes($0), "confirm": true] } ?? ["confirm": true]
    return SMPRequest(operation: .write, group: SMPGroup.image, command: 0, body: body, timeout: timeout)
  }

  /// Image group, command 1: one chunk of an upload at `offset`. The first chunk (offset 0) also
  /// carries the image's total `length`, the SHA-256 of the whole file (`sha`, which lets the reader
  /// resume an interrupted upload of the same file from its own offset) and, when set, `upgrade` (refuse
  /// an image not newer than the running one). The reader answers `{"off": next offset}`, and
  /// `"match"` after the last chunk where it checks the file's hash.
  public static func imageUpload(
    offset: Int, data: [UInt8], length: Int? = nil, sha: [UInt8]? = nil, upgrade: Bool = false, timeout: Duration
  ) -> SMPRequest {
    var entries: [CBORMapEntry] = []
    func add(_ key: String, _ value: CBORValue) { entries.append(CBORMapEntry(key: .text(key), value: value)) }
    if offset == 0 {
      add("image", 0)
      if let length { add("len", .int(length)) }
      if let sha { add("sha", .bytes(sha)) }
      if upgrade { add("upgrade", true) }
    }
    add("off", .int(offset))
    add("data", .bytes(data))
    return SMPRequest(operation: .write, group: SMPGroup.image, command: 1, body: .map(entries), timeout: timeout)
  }

  /// The frame of this request with sequence number `sequence`.
  public func frame(sequence: UInt8) -> SMPFrame {
    SMPFrame(operation: operation, group: group, command: command, sequence: sequence, body: body)
  }
}
