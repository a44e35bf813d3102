import NFCKit
import PCSCKit
import ReaderCore
import ReaderSimulator
import TestSupport
import Testing

/// A cross-process session line held in memory: each `MemorySessionLock` on the same line stands for a
/// process.
final class MemoryLine: Sendable {
  let holders = Locked<[ObjectIdentifier]>([])
}

final class MemorySessionLock: NFCSessionLock {
  let line: MemoryLine
  let name: String

  init(line: MemoryLine = MemoryLine(), name: String = "1") {
    self.line = line
    self.name = name
  }

  func tryAcquire() -> NFCSessionLockAttempt {
    line.holders.withLock { holders in
      if !holders.contains(ObjectIdentifier(self)) { holders.append(ObjectIdentifier(self)) }
      return holders.first == ObjectIdentifier(self) ? .acquired : .heldElsewhere(holder: "process")
    }
  }

  func release() {
    line.holders.withLock { $0.removeAll { $0 == ObjectIdentifier(self) } }
  }

  var isHolding: Bool { line.holders.withLock { $0.first == ObjectIdentifier(self) } }
}

/// A reader system on the PC/SC radio, over a simulated PC/SC service on a virtual clock.
struct PCSCHarness {
  static let reader = "Virtual PCD 00 00"
  static let second = "Virtual PCD 00 01"
  static var hello: NDEFMessage { fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .text("hello")) } }
  static var poster: NDEFMessage {
    fixture(or: NDEFMessage(.empty)) { NDEFMessage(try .uri("https://example.com/poster")) }
  }

  let clock: VirtualClock
  let service: SimulatedPCSCService
  let radio: PCSCNFCRadio
  let system: NFCReaderSystem
  let events = Box<NFCReaderEvent>()

  init(
    clock: VirtualClock = VirtualClock(), service: SimulatedPCSCService? = nil,
    configuration: NFCSystemConfiguration = PCSCHarness.configuration(), lock: any NFCSessionLock = MemorySessionLock()
  ) {
    self.clock = clock
    let service = service ?? SimulatedPCSCService(clock: clock)
    self.service = service
    radio = PCSCNFCRadio(service: service, lock: lock, configuration: configuration, scheduler: clock)
    system = NFCReaderSystem(radio: radio, scheduler: clock)
    system.addEventObserver { [events] in events.put($0) }
  }

  static func configuration(
    timeout: Duration? = .seconds(60), whenBusy: NFCSystemPolicy.BusyBehavior = .queue, reader: String? = nil
  ) -> NFCSystemConfiguration {
    var configuration = NFCSystemConfiguration(environment: [:])
    configuration.sessionTimeout = timeout
    configuration.whenBusy = whenBusy
    configuration.reader = reader
    return configuration
  }

  func readSession(_ delegate: ReadDelegate, firstReadOnly: Bool = true) -> NFCNDEFReaderSession {
    NFCNDEFReaderSession(delegate: delegate, queue: nil, invalidateAfterFirstRead: firstReadOnly, system: system)
  }

  func tagSession(_ delegate: TagDelegate) -> NFCNDEFReaderSession {
    NFCNDEFReaderSession(delegate: delegate, queue: nil, invalidateAfterFirstRead: false, system: system)
  }

  func run(_ duration: Duration) { clock.advance(by: duration) }

  /// A reader with a Type 4 tag holding `message`.
  func readerWithTag(_ message: NDEFMessage? = PCSCHarness.hello, name: String = PCSCHarness.reader) {
    service.plug(name)
    service.present(SimulatedType4Tag(message: message?.encoded() ?? []), in: name)
  }
}

/// The message a Type 4 card holds now.
func type4Message(_ card: (any SimulatedSmartCard)?) -> [UInt8]? {
  (card as? SimulatedType4Tag)?.message
}
