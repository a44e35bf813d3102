/// An NDEF operation on an NFC Forum Type 2 tag (NTAG21x, MIFARE Ultralight) behind a PC/SC reader's
/// storage-card pseudo-APDUs: `FF B0` reads four pages, `FF D6` writes one.
///
/// Every operation reads pages 0–3 (the capability container in page 3), then the data area from
/// page 4, 16 bytes at a time, only as far as the TLV blocks need: Lock and Memory Control TLVs and
/// anything else before the NDEF Message TLV are stepped over, NULL TLVs skipped, a terminator ends
/// the search. Nothing past the data area the container declares is read, and no TLV may claim bytes
/// past it. A write puts the NDEF Message TLV where it was, with its length 0 first, then the message
/// and a terminator, then the real length (1 byte below 255, `FF` and 2 bytes from 255). A lock sets
/// the container's write access to `F`, the dynamic lock bits the Lock Control TLVs name, then the
/// static lock bytes of page 2 (without a Lock Control TLV, the dynamic lock bits are where the Type 2
/// Tag specification puts them by default: right after the data area).
package struct Type2Procedure: Sendable {
  /// A page to write, or to read and write back with bits set.
  private enum PageWrite: Sendable, Hashable {
    case write(page: Int, bytes: [UInt8])
    case setBits(page: Int, mask: [UInt8])

    var page: Int {
      switch self {
      case .write(let page, _), .setBits(let page, _): page
      }
    }
  }

  private enum Phase: Sendable {
    case readingHeader
    case readingArea(Type2Layout)
    /// Writing `writes[next]`; `reading` when its page was asked for first (a `setBits`).
    case programming(next: Int, reading: Bool)
    case finished
  }

  private let operation: TagOperation
  private var phase = Phase.readingHeader
  /// The data area's bytes read so far.
  private var area: [UInt8] = []
  private var writes: [PageWrite] = []
  private var outcome = TagOutcome.written

  package init(_ operation: TagOperation) { self.operation = operation }

  package mutating func start() -> TagStep {
    phase = .readingHeader
    return .transmit(CommandAPDU.readPages(from: 0))
  }

  package mutating func receive(_ bytes: [UInt8]) -> TagStep {
    let step = stepName
    guard let response = ResponseAPDU(bytes) else { return finish(.failure(.tagLost(step: step))) }
    switch phase {
    case .readingHeader:
      guard response.isSuccess else { return finish(.failure(.statusWord(response.statusWord, step: step))) }
      guard response.data.count <= 16 else { return tooLong(response, step) }
      do {
        let layout = try Type2Layout(header: response.data)
        area.reserveCapacity(layout.dataAreaSize)
        return scan(layout)
      } catch {
        if case .notNDEFFormatted = error, operation == .queryStatus {
          return finish(.success(.status(formatted: false, writable: false, capacity: 0)))
        }
        return finish(.failure(error))
      }
    case .readingArea(let layout):
      guard response.isSuccess else { return finish(.failure(.statusWord(response.statusWord, step: step))) }
      guard response.data.count <= 16 else { return tooLong(response, step) }
      guard !response.data.isEmpty else { return finish(.failure(.malformed("\(step) returned no data"))) }
      area += response.data.prefix(layout.dataAreaSize - area.count)
      return scan(layout)
    case .programming(let next, let reading):
      if reading {
        guard response.isSuccess else { return finish(.failure(.statusWord(response.statusWord, step: step))) }
        guard response.data.count >= 4, case .setBits(let page, let mask) = writes[next] else {
          return finish(.failure(.malformed("\(step) returned \(response.data.count) bytes, not 4")))
        }
        let bytes = zip(response.data.prefix(4), mask).map { $0 | $1 }
        phase = .programming(next: next, reading: false)
        return .transmit(CommandAPDU.writePage(page, bytes))
      }
      guard response.isSuccess else { return finish(.failure(.updateFailed(response.statusWord, step: step))) }
      return program(from: next + 1)
    case .finished:
      return .finished(.failure(.malformed("a response after the operation ended")))
    }
  }

  /// Scans the TLVs read so far: reads on when they need more, or does the operation.
  private mutating func scan(_ layout: Type2Layout) -> TagStep {
    let result = Type2TLVScan.scan(area, size: layout.dataAreaSize)
    switch result {
    case .needsBytes(let upTo):
      return readMore(layout, upTo: upTo)
    case .noNDEF(let why):
      if operation == .queryStatus { return finish(.success(.status(formatted: false, writable: false, capacity: 0))) }
      return finish(.failure(.notNDEFFormatted(why)))
    case .malformed(let why):
      return finish(.failure(.malformed(why)))
    case .ndef(let offset, let valueOffset, let length, let locks):
      switch operation {
      case .queryStatus:
        return finish(
          .success(.status(formatted: true, writable: layout.isWritable, capacity: layout.capacity(ofTLVAt: offset))))
      case .read:
        guard area.count >= valueOffset + length else { return readMore(layout, upTo: valueOffset + length) }
        return finish(.success(.read(Array(area[valueOffset..<valueOffset + length]))))
      case .write(let message):
        guard layout.isWritable else { return finish(.failure(.notWritable)) }
        let capacity = layout.capacity(ofTLVAt: offset)
        guard message.count <= capacity else {
          return finish(.failure(.capacityExceeded(size: message.count, capacity: capacity)))
        }
        writes = Self.messageWrites(message, at: offset, layout: layout, area: area)
        outcome = .written
        return program(from: 0)
      case .lock:
        guard layout.isWritable else { return finish(.failure(.notWritable)) }
        writes = Self.lockWrites(layout, locks: locks)
        outcome = .locked
        return program(from: 0)
      }
    }
  }

  private mutating func readMore(_ layout: Type2Layout, upTo: Int) -> TagStep {
    guard area.count < upTo, area.count < layout.dataAreaSize else {
      return finish(.failure(.malformed("the data area ends before its TLVs do")))
    }
    // Reads start at a page boundary: the area read so far is a whole number of pages.
    guard area.count % Type2Layout.pageSize == 0 else {
      return finish(.failure(.malformed("a read of the data area returned a part of a page")))
    }
    phase = .readingArea(layout)
    return .transmit(CommandAPDU.readPages(from: Type2Layout.firstDataPage + area.count / Type2Layout.pageSize))
  }

  private mutating func program(from index: Int) -> TagStep {
    guard index < writes.count else { return finish(.success(outcome)) }
    switch writes[index] {
    case .write(let page, let bytes):
      phase = .programming(next: index, reading: false)
      return .transmit(CommandAPDU.writePage(page, bytes))
    case .setBits(let page, _):
      phase = .programming(next: index, reading: true)
      return .transmit(CommandAPDU.readPages(from: page, length: Type2Layout.pageSize))
    }
  }

  /// The page writes that put `message` in an NDEF Message TLV at data area offset `offset`: the pages
  /// holding the TLV's length with length 0, then the other pages, then the length pages again with
  /// the real length. Bytes before the TLV in its first page are kept as read.
  private static func messageWrites(
    _ message: [UInt8], at offset: Int, layout: Type2Layout, area: [UInt8]
  ) -> [PageWrite] {
    let long = message.count > 254
    let lengthField: [UInt8] =
      long ? [0xFF, UInt8(message.count >> 8), UInt8(message.count & 0xFF)] : [UInt8(message.count)]
    let cleared: [UInt8] = long ? [0xFF, 0x00, 0x00] : [0x00]
    var tail = message
    if offset + 1 + lengthField.count + message.count < layout.dataAreaSize { tail.append(Type2TLVScan.terminator) }
    let firstPage = offset / Type2Layout.pageSize
    let kept = Array(area[firstPage * Type2Layout.pageSize..<offset])
    var final = kept + [Type2TLVScan.ndefMessage] + lengthField + tail
    var zero = kept + [Type2TLVScan.ndefMessage] + cleared + tail
    let padding = (Type2Layout.pageSize - final.count % Type2Layout.pageSize) % Type2Layout.pageSize
    final += repeatElement(0, count: padding)
    zero += repeatElement(0, count: padding)
    let lengthStart = kept.count + 1
    let lengthPages = Set(
      (lengthStart..<lengthStart + lengthField.count).map { $0 / Type2Layout.pageSize })
    func page(_ index: Int, of image: [UInt8]) -> PageWrite {
      let start = index * Type2Layout.pageSize
      return .write(
        page: Type2Layout.firstDataPage + firstPage + index, bytes: Array(image[start..<start + Type2Layout.pageSize]))
    }
    let pages = final.count / Type2Layout.pageSize
    let lengthFirst = lengthPages.sorted()
    var result = lengthFirst.map { page($0, of: zero) }
    result += (0..<pages).filter { !lengthPages.contains($0) }.map { page($0, of: final) }
    result += lengthFirst.map { page($0, of: final) }
    return result
  }

  /// The page writes that lock the tag: the container's write access, the dynamic lock bits, then the
  /// static lock bytes (which also lock the container's page, so they come last).
  private static func lockWrites(_ layout: Type2Layout, locks: [Type2LockControl]) -> [PageWrite] {
    let header = layout.header
    var writes: [PageWrite] = [.write(page: 3, bytes: [header[12], header[13], header[14], header[15] | 0x0F])]
    var masks: [Int: [UInt8]] = [:]
    let dynamic =
      locks.isEmpty ? Type2LockControl.defaultLocation(dataAreaSize: layout.dataAreaSize).map { [$0] } ?? [] : locks
    for lock in dynamic {
      for bit in 0..<lock.bitCount {
        let address = lock.byteAddress + bit / 8
        let page = address / Type2Layout.pageSize
        masks[page, default: [0, 0, 0, 0]][address % Type2Layout.pageSize] |= UInt8(1 << (bit % 8))
      }
    }
    writes += masks.keys.sorted().filter { $0 > 3 }.map { .setBits(page: $0, mask: masks[$0]!) }
    writes.append(.write(page: 2, bytes: [header[8], header[9], 0xFF, 0xFF]))
    return writes
  }

  private var stepName: String {
    switch phase {
    case .readingHeader: "READ pages 0-3"
    case .readingArea: "READ data area"
    case .programming(let next, let reading):
      next < writes.count ? "\(reading ? "READ" : "WRITE") page \(writes[next].page)" : "WRITE"
    case .finished: "after the end"
    }
  }

  private mutating func finish(_ result: Result<TagOutcome, TagFailure>) -> TagStep {
    phase = .finished
    return .finished(result)
  }

  private mutating func tooLong(_ response: ResponseAPDU, _ step: String) -> TagStep {
    finish(.failure(.malformed("\(step) returned \(response.data.count) bytes, more than it asked for")))
  }
}
