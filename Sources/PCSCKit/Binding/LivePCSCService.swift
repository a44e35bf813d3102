import ReaderCore
import Dispatch
import Synchronization

#if os(Linux)
  import Glibc
#endif

/// The PC/SC service of this host, through pcsc-lite: `PCSCService`'s calls as C calls, on lanes of
/// its own (a serial queue and a PC/SC context each), with completions on `scheduler`.
///
/// A lane establishes its context when it first needs one and drops it when the service goes away
/// (`SCARD_E_NO_SERVICE`, `SCARD_E_SERVICE_STOPPED`, `SCARD_F_COMM_ERROR`), so a restarted pcscd is
/// found again by the next call. A card lane that a call blocks for good (a tag that stopped
/// answering) is abandoned on request: its thread is left to return whenever the call does, and a new
/// lane takes the next calls.
package final class LivePCSCService: PCSCService {
  private let library: PCSCLibrary
  private let scheduler: any Scheduler
  private let monitor: Lane
  private let cards: Locked<Lane>
  private let laneCount = Atomic<UInt64>(1)
  /// Raised by `cancelWait()`; a wait that starts after a raise it was not submitted under ends at once.
  private let cancelGeneration = Atomic<UInt64>(0)

  /// A service over `library`, answering on `scheduler`.
  package init(library: PCSCLibrary, scheduler: any Scheduler) {
    self.library = library
    self.scheduler = scheduler
    monitor = Lane(library: library, id: 0, label: "PCSCKit.monitor")
    cards = Locked(Lane(library: library, id: 1, label: "PCSCKit.cards.1"))
  }

  /// The service over the system's pcsc-lite, when it can be loaded.
  package static func system(scheduler: any Scheduler) -> Result<LivePCSCService, PCSCLibrary.LoadError> {
    PCSCLibrary.load().map { LivePCSCService(library: $0, scheduler: scheduler) }
  }

  package func listReaders(_ completion: @escaping @Sendable (Result<[String], PCSCError>) -> Void) {
    monitor.run(deliver: completion, on: scheduler) { lane in lane.listReaders() }
  }

  package func waitForChange(
    _ readers: [PCSCReaderState], timeout: Duration,
    _ completion: @escaping @Sendable (Result<[PCSCReaderState], PCSCError>) -> Void
  ) {
    let generation = cancelGeneration.load(ordering: .acquiring)
    monitor.run(deliver: completion, on: scheduler) { [self] lane in
      guard cancelGeneration.load(ordering: .acquiring) == generation else {
        return .failure(PCSCError("SCardGetStatusChange", .cancelled))
      }
      return lane.waitForChange(readers, timeout: timeout)
    }
  }

  package func cancelWait() {
    cancelGeneration.add(1, ordering: .releasing)
    monitor.cancel()
  }

  package func connect(_ reader: String, _ completion: @escaping @Sendable (Result<PCSCCard, PCSCError>) -> Void) {
    let lane = cards.withLock { $0 }
    lane.run(deliver: completion, on: scheduler) { lane in lane.connect(reader) }
  }

  package func transmit(
    _ apdu: [UInt8], to card: PCSCCard, _ completion: @escaping @Sendable (Result<[UInt8], PCSCError>) -> Void
  ) {
    let lane = cards.withLock { $0 }
    guard card.lane == lane.id else {
      scheduler.execute { completion(.failure(PCSCError("SCardTransmit", .invalidHandle))) }
      return
    }
    lane.run(deliver: completion, on: scheduler) { lane in lane.transmit(apdu, to: card) }
  }

  package func disconnect(_ card: PCSCCard) {
    let lane = cards.withLock { $0 }
    guard card.lane == lane.id else { return }
    lane.run(deliver: { (_: Void) in }, on: scheduler) { lane in lane.disconnect(card) }
  }

  package func abandonCardLane() {
    let id = laneCount.add(1, ordering: .relaxed).newValue
    let old = cards.withLock { lane in
      defer { lane = Lane(library: library, id: id, label: "PCSCKit.cards.\(id)") }
      return lane
    }
    old.retire()
  }

  package func probe() -> Result<[PCSCReaderState], PCSCError> {
    Lane(library: library, id: UInt64.max, label: "PCSCKit.probe").probe()
  }
}

/// A serial queue and the PC/SC context its calls use. The context is touched only on the queue,
/// except by `cancel()`, which is made for calling from another thread.
private final class Lane: @unchecked Sendable {
  let id: UInt64
  private let library: PCSCLibrary
  private let queue: DispatchQueue
  /// The context, readable by `cancel()` from any thread; 0 when none is established.
  private let context = Atomic<Int>(0)
  private let retired = Atomic<Bool>(false)

  init(library: PCSCLibrary, id: UInt64, label: String) {
    self.library = library
    self.id = id
    queue = DispatchQueue(label: label)
  }

  func run<T: Sendable>(
    deliver: @escaping @Sendable (T) -> Void, on scheduler: any Scheduler, _ call: @escaping @Sendable (Lane) -> T
  ) {
    queue.async { [self] in
      let result = call(self)
      scheduler.execute { deliver(result) }
    }
  }

  /// Ends a `waitForChange` in progress on this lane.
  func cancel() {
    #if os(Linux) && (arch(x86_64) || arch(arm64))
      let context = context.load(ordering: .acquiring)
      if context != 0 { _ = library.cancel(context) }
    #endif
  }

  /// Releases the context once the call in progress (if any) has returned.
  func retire() {
    retired.store(true, ordering: .releasing)
    queue.async { [self] in dropContext() }
  }

  #if os(Linux) && (arch(x86_64) || arch(arm64))
    /// The lane's context, established if needed.
    private func established(_ call: String) -> Result<Int, PCSCError> {
      let current = context.load(ordering: .acquiring)
      if current != 0 { return .success(current) }
      var value = 0
      let code = PCSCCode(library.establishContext(2, nil, nil, &value))  // SCARD_SCOPE_SYSTEM
      guard code == .success else { return .failure(PCSCError("SCardEstablishContext", code)) }
      context.store(value, ordering: .releasing)
      return .success(value)
    }

    private func dropContext() {
      let value = context.exchange(0, ordering: .acquiringAndReleasing)
      if value != 0 { _ = library.releaseContext(value) }
    }

    /// The error for `code` from `call`; a code saying the service or the context is gone drops the
    /// context, so that the next call establishes a new one.
    private func failure(_ call: String, _ code: PCSCCode) -> PCSCError {
      if code.meansServiceGone || (code == .invalidHandle && call != "SCardTransmit") { dropContext() }
      return PCSCError(call, code)
    }

    func listReaders() -> Result<[String], PCSCError> {
      established("SCardListReaders").flatMap { context in
        var length: UInt = 0
        var code = PCSCCode(library.listReaders(context, nil, nil, &length))
        if code == .noReadersAvailable { return .success([]) }
        guard code == .success else { return .failure(failure("SCardListReaders", code)) }
        // A reader list is a few hundred bytes; pcsc-lite caps it far below this.
        guard length > 0, length <= 65_536 else { return .success([]) }
        var buffer = [CChar](repeating: 0, count: Int(length))
        code = PCSCCode(library.listReaders(context, nil, &buffer, &length))
        if code == .noReadersAvailable { return .success([]) }
        guard code == .success else { return .failure(failure("SCardListReaders", code)) }
        return .success(Self.names(buffer.prefix(Int(min(length, UInt(buffer.count))))))
      }
    }

    /// The strings of a multi-string (`a\0b\0\0`).
    private static func names(_ chars: ArraySlice<CChar>) -> [String] {
      chars.split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    }

    /// `SCARD_READERSTATE` on LP64: two pointers, three `DWORD`s, a 33-byte ATR, padded to 80 bytes.
    private static let stateSize = 80
    private static let atrOffset = 40
    private static let maxATR = 33

    func waitForChange(_ readers: [PCSCReaderState], timeout: Duration) -> Result<[PCSCReaderState], PCSCError> {
      established("SCardGetStatusChange").flatMap { context in
        let names = readers.map { strdup($0.name) }
        defer { names.forEach { free($0) } }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(1, readers.count) * Self.stateSize, alignment: 8)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: max(1, readers.count) * Self.stateSize)
        for (index, reader) in readers.enumerated() {
          let entry = buffer + index * Self.stateSize
          entry.storeBytes(of: UnsafePointer(names[index]), toByteOffset: 0, as: UnsafePointer<CChar>?.self)
          entry.storeBytes(of: UInt(reader.currentState), toByteOffset: 16, as: UInt.self)
        }
        let milliseconds = UInt(max(0, min((timeout.inSeconds * 1000).rounded(.up), 4_294_967_294)))
        let code = PCSCCode(library.getStatusChange(context, milliseconds, buffer, UInt(readers.count)))
        guard code == .success else { return .failure(failure("SCardGetStatusChange", code)) }
        return .success(
          readers.enumerated().map { index, reader in
            let entry = buffer + index * Self.stateSize
            var updated = reader
            updated.eventState = UInt32(truncatingIfNeeded: entry.load(fromByteOffset: 24, as: UInt.self))
            let length = min(Int(entry.load(fromByteOffset: 32, as: UInt.self)), Self.maxATR)
            updated.atr = (0..<length).map { entry.load(fromByteOffset: Self.atrOffset + $0, as: UInt8.self) }
            return updated
          })
      }
    }

    func connect(_ reader: String) -> Result<PCSCCard, PCSCError> {
      guard !retired.load(ordering: .acquiring) else { return .failure(PCSCError("SCardConnect", .invalidHandle)) }
      return established("SCardConnect").flatMap { context in
        var handle = 0
        var active: UInt = 0
        // SCARD_SHARE_EXCLUSIVE, SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1
        let code = PCSCCode(library.connect(context, reader, 1, 3, &handle, &active))
        guard code == .success else { return .failure(failure("SCardConnect", code)) }
        return .success(PCSCCard(handle: handle, activeProtocol: active, lane: id))
      }
    }

    func transmit(_ apdu: [UInt8], to card: PCSCCard) -> Result<[UInt8], PCSCError> {
      guard !retired.load(ordering: .acquiring) else { return .failure(PCSCError("SCardTransmit", .invalidHandle)) }
      let pci = card.activeProtocol == 1 ? library.pciT0 : library.pciT1
      // A short APDU's response: 256 bytes of data and the status word (pcsc-lite's MAX_BUFFER_SIZE is 264).
      var response = [UInt8](repeating: 0, count: 264)
      var length = UInt(response.count)
      let code = PCSCCode(library.transmit(card.handle, pci, apdu, UInt(apdu.count), nil, &response, &length))
      guard code == .success else { return .failure(failure("SCardTransmit", code)) }
      return .success(Array(response.prefix(Int(min(length, UInt(response.count))))))
    }

    func disconnect(_ card: PCSCCard) {
      _ = library.disconnect(card.handle, 0)  // SCARD_LEAVE_CARD
    }

    func probe() -> Result<[PCSCReaderState], PCSCError> {
      defer { dropContext() }
      return listReaders().flatMap { names in
        guard !names.isEmpty else { return .success([]) }
        return waitForChange(names.map { PCSCReaderState(name: $0) }, timeout: .zero)
      }
    }
  #else
    private func dropContext() {}
    private func unsupported<T>(_ call: String) -> Result<T, PCSCError> {
      .failure(PCSCError(call, .noService))
    }
    func listReaders() -> Result<[String], PCSCError> { unsupported("SCardListReaders") }
    func waitForChange(_ readers: [PCSCReaderState], timeout: Duration) -> Result<[PCSCReaderState], PCSCError> {
      unsupported("SCardGetStatusChange")
    }
    func connect(_ reader: String) -> Result<PCSCCard, PCSCError> { unsupported("SCardConnect") }
    func transmit(_ apdu: [UInt8], to card: PCSCCard) -> Result<[UInt8], PCSCError> { unsupported("SCardTransmit") }
    func disconnect(_ card: PCSCCard) {}
    func probe() -> Result<[PCSCReaderState], PCSCError> { unsupported("SCardListReaders") }
  #endif
}
