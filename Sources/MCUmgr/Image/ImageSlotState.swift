/// One image slot as a reader's image state response lists it (image group, command 0).
public struct ImageSlotState: Sendable, Hashable {
  /// The image number (0 when the response leaves it out: a single-image application).
  public var image: Int
  /// The slot within the image: 0 the primary (running) one, 1 the secondary (upload) one.
  public var slot: Int
  /// The version text.
  public var version: String?
  /// The image's MCUboot SHA-256 TLV.
  public var hash: [UInt8]?
  /// Set for the next swap (marked for test, or confirmed for a permanent swap).
  public var pending: Bool
  /// Confirmed: kept across resets.
  public var confirmed: Bool
  /// The running application.
  public var active: Bool
  /// Stays in the primary slot after the next boot.
  public var permanent: Bool

  /// Creates a slot state.
  public init(
    image: Int = 0, slot: Int, version: String? = nil, hash: [UInt8]? = nil, pending: Bool = false,
    confirmed: Bool = false, active: Bool = false, permanent: Bool = false
  ) {
    self.image = image
    self.slot = slot
    self.version = version
    self.hash = hash
    self.pending = pending
    self.confirmed = confirmed
    self.active = active
    self.permanent = permanent
  }

  /// The slots of an image state response (`{"images": [...]}`), or `nil` when the body does not have
  /// that shape (no `images` array, an entry without a `slot`, a field of the wrong type). Flags the
  /// reader leaves out are false, as the specification allows.
  public static func slots(in body: CBORValue) -> [ImageSlotState]? {
    guard let images = body["images"]?.arrayValue else { return nil }
    var slots: [ImageSlotState] = []
    for entry in images {
      guard case .map = entry, let slot = entry["slot"]?.intValue else { return nil }
      var state = ImageSlotState(slot: slot)
      if let image = entry["image"] {
        guard let number = image.intValue else { return nil }
        state.image = number
      }
      if let version = entry["version"] {
        guard let text = version.textValue else { return nil }
        state.version = text
      }
      if let hash = entry["hash"] {
        guard let bytes = hash.bytesValue else { return nil }
        state.hash = bytes
      }
      for (key, path) in [
        ("pending", \ImageSlotState.pending), ("confirmed", \.confirmed), ("active", \.active),
        ("permanent", \.permanent),
      ] {
        guard let flag = entry[key] else { continue }
        guard let value = flag.boolValue else { return nil }
        state[keyPath: path] = value
      }
      slots.append(state)
    }
    return slots
  }

  /// The slots as the image state body a reader sends.
  public static func body(_ slots: [ImageSlotState]) -> CBORValue {
    .map([
      CBORMapEntry(
        key: "images",
        value: .array(
          slots.map { slot in
            var entries: [CBORMapEntry] = [
              CBORMapEntry(key: "image", value: .int(slot.image)), CBORMapEntry(key: "slot", value: .int(slot.slot)),
            ]
            if let version = slot.version { entries.append(CBORMapEntry(key: "version", value: .text(version))) }
            if let hash = slot.hash { entries.append(CBORMapEntry(key: "hash", value: .bytes(hash))) }
            for (key, flag) in [
              ("pending", slot.pending), ("confirmed", slot.confirmed), ("active", slot.active),
              ("permanent", slot.permanent),
            ] where flag {
              entries.append(CBORMapEntry(key: .text(key), value: true))
            }
            return .map(entries)
          }))
    ])
  }
}
