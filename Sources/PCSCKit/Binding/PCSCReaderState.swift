/// One reader as `SCardGetStatusChange` sees it: what the caller believes (`currentState`) and what the
/// service reports (`eventState`, `atr`).
package struct PCSCReaderState: Sendable, Hashable {
  /// The pseudo reader whose state changes when readers are added or removed.
  package static let plugAndPlay = "\\\\?PnP?\\Notification"

  /// `SCARD_STATE_*` bits.
  package static let unaware: UInt32 = 0x0000
  package static let ignore: UInt32 = 0x0001
  package static let changed: UInt32 = 0x0002
  package static let unknown: UInt32 = 0x0004
  package static let unavailable: UInt32 = 0x0008
  package static let empty: UInt32 = 0x0010
  package static let present: UInt32 = 0x0020
  package static let exclusive: UInt32 = 0x0080
  package static let inUse: UInt32 = 0x0100
  package static let mute: UInt32 = 0x0200

  /// The reader's name.
  package var name: String
  /// The state the caller last saw (`dwCurrentState`), counter included.
  package var currentState: UInt32
  /// The state the service reports (`dwEventState`): flags in the low 16 bits, an event counter in
  /// the high 16 bits that moves with every card insertion and removal.
  package var eventState: UInt32
  /// The card's ATR, when one is present.
  package var atr: [UInt8]

  package init(name: String, currentState: UInt32 = unaware, eventState: UInt32 = 0, atr: [UInt8] = []) {
    self.name = name
    self.currentState = currentState
    self.eventState = eventState
    self.atr = atr
  }

  /// The flags of `eventState`, without the counter.
  package var flags: UInt32 { eventState & 0xFFFF }
  /// The event counter of `eventState`.
  package var counter: UInt32 { eventState >> 16 }

  /// Whether a card is in the reader and answers (present, not mute).
  package var hasCard: Bool { flags & Self.present != 0 && flags & Self.mute == 0 }

  /// Whether another program holds the card exclusively.
  package var isHeldExclusively: Bool { flags & Self.exclusive != 0 }

  /// Whether the reader is gone or unusable.
  package var isGone: Bool { flags & (Self.unknown | Self.unavailable) != 0 }
}

/// A card connected through a `PCSCService`.
package struct PCSCCard: Sendable, Hashable {
  /// `SCARDHANDLE`.
  package var handle: Int
  /// The protocol negotiated (`SCARD_PROTOCOL_T0` 1 or `_T1` 2).
  package var activeProtocol: UInt
  /// Which of the service's card lanes connected it: a card of an abandoned lane is not usable.
  package var lane: UInt64

  package init(handle: Int, activeProtocol: UInt, lane: UInt64) {
    self.handle = handle
    self.activeProtocol = activeProtocol
    self.lane = lane
  }
}
