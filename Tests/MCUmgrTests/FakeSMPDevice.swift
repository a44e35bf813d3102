import MCUmgr
import ReaderCore

/// A deterministic Zephyr-like SMP server with MCUboot behind it, on the `VirtualClock`: the OS group
/// (echo, reset, parameters) and the image group (state read and write, upload with resume), image
/// slots that swap at boot as MCUboot's test/confirm/revert rules say, and scripted faults. It runs on
/// the clock's thread only (the tests drive the clock from one thread).
final class FakeSMPDevice: @unchecked Sendable {
  /// One image slot.
  struct Slot: Equatable {
    var hash: [UInt8]
    var version: String
    var confirmed = false
    var pending = false
  }

  /// Why the device ended its link.
  enum Drop: Equatable {
    /// It reset (BlueZ would say `org.bluez.Reason.Remote`).
    case reset
    /// It went out of range (`org.bluez.Reason.Timeout`).
    case outOfRange
  }

  static let oldHash = [UInt8](repeating: 0xAB, count: 32)

  let serialNumber: String
  let clock: VirtualClock
  /// The longest notification the link carries.
  var notificationLength = 244
  /// How long the device takes to answer.
  var latency = Duration.milliseconds(4)
  /// How long a reset keeps the device away (MCUboot's swap included).
  var bootTime = Duration.seconds(3)
  /// The SMP buffer it announces.
  var bufferSize = 1_024

  // Faults.
  /// Drop the link (out of range) once, when an upload reaches this fraction, instead of answering.
  var dropAtFraction: Double?
  /// Answer requests to (group, command) with this group error.
  var refusals: [UInt16: [UInt8: Int]] = [:]
  /// Answer everything this much later.
  var lateBy = Duration.zero
  /// Give this many answers a wrong sequence number.
  var wrongSequenceCount = 0
  /// Answer the next request to (group, command) with a body that is not CBOR.
  var malformedAnswer: (group: UInt16, command: UInt8)?
  /// Refuse every confirm (IMG_MGMT_ERR_IMAGE_CONFIRMATION_DENIED).
  var failConfirm = false
  /// MCUboot refuses the new image at boot: the device stays on its old one.
  var bootsOldImage = false

  private(set) var primary = Slot(hash: oldHash, version: "1.0.0", confirmed: true)
  private(set) var secondary: Slot?
  /// Whether the running image was booted for test and is not confirmed yet.
  private(set) var runningTest = false
  /// Whether the device is powered and booted (reachable).
  private(set) var isUp = true
  /// Every request taken, as (time, group, command, offset of an upload chunk).
  private(set) var requests: [(time: Duration, group: UInt16, command: UInt8, offset: Int?)] = []
  private(set) var resets = 0

  private var upload: (sha: [UInt8]?, length: Int, data: [UInt8])?
  private var reassembler = SMPReassembler(maximumBodyLength: 65_535)

  /// Where notifications go (the central's transport).
  var onNotify: (([UInt8]) -> Void)?
  /// Called when the device ends the link.
  var onDrop: ((Drop) -> Void)?

  init(serialNumber: String, clock: VirtualClock) {
    self.serialNumber = serialNumber
    self.clock = clock
  }

  /// The version the device runs.
  var runningVersion: String { primary.version }

  /// The link went down (a reset, out of range, the host let go): a partial request is lost.
  func linkClosed() { reassembler.reset() }

  /// One write without response from the host.
  func receive(_ bytes: [UInt8]) {
    guard isUp else { return }
    let (frames, _) = reassembler.append(bytes)
    for frame in frames { handle(frame) }
  }

  /// Puts the device out of range (or back), as the world would.
  func goOutOfRange() {
    onDrop?(.outOfRange)
  }

  // MARK: Requests

  private func handle(_ frame: SMPFrame) {
    let header = frame.header
    let body = (try? CBORDecoder().decode(frame.body)) ?? [:]
    requests.append((clock.elapsed, header.group, header.command, header.command == 1 ? body["off"]?.intValue : nil))
    guard let response = header.operation.response else { return }
    var answer: [UInt8]
    var then: (@Sendable () -> Void)?
    if let malformed = malformedAnswer, malformed.group == header.group, malformed.command == header.command {
      malformedAnswer = nil
      answer = [0xA1, 0x61, 0x61]
    } else if let rc = refusals[header.group]?[header.command] {
      answer = CBOREncoder.encode(error(rc, group: header.group, version: header.version))
    } else {
      guard let (value, after) = respond(header, body) else { return }
      answer = CBOREncoder.encode(value)
      then = after
    }
    let afterwards = then
    var sequence = header.sequence
    if wrongSequenceCount > 0 {
      wrongSequenceCount -= 1
      sequence &+= 1
    }
    let out = SMPFrame(
      header: SMPHeader(
        operation: response, version: header.version, length: UInt16(answer.count), group: header.group,
        sequence: sequence, command: header.command),
      body: answer)
    clock.schedule(after: latency + lateBy) { [self] in
      guard isUp else { return }
      for piece in out.fragments(maximumWriteLength: notificationLength) { onNotify?(piece) }
      afterwards?()
    }
  }

  private func error(_ rc: Int, group: UInt16, version: UInt8) -> CBORValue {
    version == SMPHeader.version2 ? ["err": ["group": .int(Int(group)), "rc": .int(rc)]] : ["rc": .int(rc)]
  }

  /// The answer to a request, and what to do once it is sent; nil to answer nothing.
  private func respond(_ header: SMPHeader, _ body: CBORValue) -> (CBORValue, (@Sendable () -> Void)?)? {
    switch (header.group, header.command, header.operation) {
    case (0, 0, _):
      return (["r": body["d"] ?? ""], nil)
    case (0, 5, .write):
      return ([:], { [self] in clock.schedule(after: .milliseconds(20)) { self.reset() } })
    case (0, 6, .read):
      return (["buf_size": .int(bufferSize), "buf_count": 4], nil)
    case (1, 0, .read):
      return (state(), nil)
    case (1, 0, .write):
      return (setState(body, version: header.version), nil)
    case (1, 1, .write):
      return upload(body, version: header.version)
    default:
      return (["rc": 8], nil)  // MGMT_ERR_ENOTSUP
    }
  }

  private func state() -> CBORValue {
    var slots = [
      ImageSlotState(
        slot: 0, version: primary.version, hash: primary.hash, confirmed: primary.confirmed, active: true)
    ]
    if let secondary {
      slots.append(
        ImageSlotState(
          slot: 1, version: secondary.version, hash: secondary.hash, pending: secondary.pending,
          confirmed: secondary.confirmed))
    }
    return ImageSlotState.body(slots)
  }

  private func setState(_ body: CBORValue, version: UInt8) -> CBORValue {
    let hash = body["hash"]?.bytesValue
    if body["confirm"]?.boolValue == true {
      guard hash == nil || hash == primary.hash else { return error(8, group: 1, version: version) }
      if failConfirm { return error(32, group: 1, version: version) }  // IMAGE_CONFIRMATION_DENIED
      primary.confirmed = true
      runningTest = false
      return state()
    }
    guard let hash, hash.count == 32 else { return error(24, group: 1, version: version) }  // INVALID_HASH
    guard secondary?.hash == hash else { return error(8, group: 1, version: version) }  // HASH_NOT_FOUND
    secondary?.pending = true
    return state()
  }

  private func upload(_ body: CBORValue, version: UInt8) -> (CBORValue, (@Sendable () -> Void)?)? {
    guard let offset = body["off"]?.intValue, let data = body["data"]?.bytesValue else {
      return (error(20, group: 1, version: version), nil)  // INVALID_OFFSET
    }
    if offset == 0 {
      let sha = body["sha"]?.bytesValue
      if let sha, let current = upload, current.sha == sha {
        return (["off": .int(current.data.count)], nil)  // Resume: Zephyr answers its own offset.
      }
      guard let length = body["len"]?.intValue else { return (error(21, group: 1, version: version), nil) }
      guard data.count >= 4, Array(data.prefix(4)) == [0x3D, 0xB8, 0xF3, 0x96] else {
        return (error(23, group: 1, version: version), nil)  // INVALID_IMAGE_HEADER_MAGIC
      }
      upload = (sha, length, [])
      secondary = nil  // The slot is erased.
    }
    guard var current = upload else { return (error(17, group: 1, version: version), nil) }
    guard offset == current.data.count else { return (["off": .int(current.data.count)], nil) }
    guard offset + data.count <= current.length else { return (error(31, group: 1, version: version), nil) }
    current.data += data
    upload = current
    let done = current.data.count == current.length
    if let fraction = dropAtFraction, Double(current.data.count) >= fraction * Double(current.length) {
      dropAtFraction = nil
      clock.execute { [self] in onDrop?(.outOfRange) }
      return nil
    }
    guard done else { return (["off": .int(current.data.count)], nil) }
    upload = nil
    guard let image = try? MCUbootImage(parsing: current.data) else {
      return (error(22, group: 1, version: version), nil)
    }
    secondary = Slot(hash: image.sha256, version: image.version.description)
    let match = current.sha.map { $0 == TestImages.sha256(current.data).bytes } ?? true
    return (["off": .int(current.data.count), "match": .bool(match)], nil)
  }

  // MARK: Boot

  private func reset() {
    guard isUp else { return }
    resets += 1
    isUp = false
    upload = nil  // The upload session lives in RAM.
    onDrop?(.reset)
    clock.schedule(after: bootTime) { [self] in boot() }
  }

  /// MCUboot's decision at boot (swap for test, revert an unconfirmed test, or nothing).
  private func boot() {
    if let candidate = secondary, candidate.pending {
      if bootsOldImage {
        secondary?.pending = false
      } else {
        secondary = Slot(hash: primary.hash, version: primary.version, confirmed: primary.confirmed)
        primary = Slot(hash: candidate.hash, version: candidate.version)
        runningTest = true
      }
    } else if runningTest, !primary.confirmed, let previous = secondary {
      secondary = Slot(hash: primary.hash, version: primary.version)
      primary = Slot(hash: previous.hash, version: previous.version, confirmed: true)
      runningTest = false
    }
    isUp = true
  }
}
