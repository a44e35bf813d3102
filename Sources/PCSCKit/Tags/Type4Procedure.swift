/// An NDEF operation on an NFC Forum Type 4 tag (ISO-DEP), as the Type 4 Tag specification orders it:
/// select the NDEF application (version 2 AID, then version 1's when the tag does not know it), select
/// and read the capability container, select the NDEF file, then read NLEN and the message in chunks
/// of at most MLe, or write with NLEN cleared first, the message in chunks of at most MLc, and NLEN
/// last, so that a write torn by the tag leaving never leaves a half message behind a valid length.
///
/// A read asks for NLEN and the first bytes of the message in one command. A lock sets the write
/// access byte of the capability container to `FF`, which a tag allows or refuses.
package struct Type4Procedure: Sendable {
  private enum Phase: Sendable {
    case selectingApplication(version2: Bool)
    case selectingContainer
    case readingContainer
    case selectingFile(Type4CapabilityContainer)
    /// `length` is NLEN once known; `asked` the length of the READ BINARY in flight.
    case reading(Type4CapabilityContainer, length: Int?, asked: Int)
    /// `next` is the file offset of the next message byte to write.
    case writing(Type4CapabilityContainer, next: Int)
    case settingLength
    case locking
    case finished
  }

  private let operation: TagOperation
  private var phase = Phase.selectingApplication(version2: true)
  private var message: [UInt8] = []

  package init(_ operation: TagOperation) { self.operation = operation }

  package mutating func start() -> TagStep {
    phase = .selectingApplication(version2: true)
    return .transmit(CommandAPDU.selectApplication(CommandAPDU.ndefApplicationV2))
  }

  package mutating func receive(_ bytes: [UInt8]) -> TagStep {
    let step = stepName
    guard let response = ResponseAPDU(bytes) else { return finish(.failure(.tagLost(step: step))) }
    switch phase {
    case .selectingApplication(let version2):
      if response.statusWord == 0x6A82 && version2 {
        phase = .selectingApplication(version2: false)
        return .transmit(CommandAPDU.selectApplication(CommandAPDU.ndefApplicationV1))
      }
      if [0x6A82, 0x6A86, 0x6D00, 0x6E00].contains(response.statusWord) {
        return notFormatted("the tag has no NDEF application (SW \(ResponseAPDU.hex(response.statusWord)))")
      }
      guard response.isSuccess else { return refused(response, step) }
      phase = .selectingContainer
      return .transmit(CommandAPDU.selectFile(CommandAPDU.capabilityContainerFile))
    case .selectingContainer:
      if response.statusWord == 0x6A82 { return notFormatted("the NDEF application has no capability container") }
      guard response.isSuccess else { return refused(response, step) }
      phase = .readingContainer
      return .transmit(CommandAPDU.readBinary(offset: 0, length: Type4CapabilityContainer.length))
    case .readingContainer:
      guard response.isSuccess else { return refused(response, step) }
      guard response.data.count <= Type4CapabilityContainer.length else { return tooLong(response, step) }
      let container: Type4CapabilityContainer
      do {
        container = try Type4CapabilityContainer(response.data)
      } catch {
        if case .notNDEFFormatted = error, operation == .queryStatus { return status(formatted: false) }
        return finish(.failure(error))
      }
      return proceed(with: container)
    case .selectingFile(let container):
      if response.statusWord == 0x6A82 {
        return finish(
          .failure(
            .malformed("the NDEF file \(ResponseAPDU.hex(container.fileID)) of the capability container is missing")))
      }
      guard response.isSuccess else { return refused(response, step) }
      if case .write(let bytes) = operation {
        // NLEN = 0 and the first part of the message in one command: the length stays 0 until the end.
        let first = Array(bytes.prefix(container.writeChunk - 2))
        phase = .writing(container, next: 2 + first.count)
        return .transmit(CommandAPDU.updateBinary(offset: 0, [0x00, 0x00] + first))
      }
      let asked = min(container.readChunk, container.maxFileSize)
      phase = .reading(container, length: nil, asked: asked)
      return .transmit(CommandAPDU.readBinary(offset: 0, length: asked))
    case .reading(let container, let known, let asked):
      guard response.isSuccess else { return refused(response, step) }
      guard response.data.count <= asked else { return tooLong(response, step) }
      guard !response.data.isEmpty else {
        return finish(.failure(.malformed("a READ BINARY of the NDEF file returned no data")))
      }
      var data = response.data[...]
      let length: Int
      if let known {
        length = known
      } else {
        guard data.count >= 2 else { return finish(.failure(.malformed("the NDEF file's first read returned 1 byte"))) }
        length = Int(data[data.startIndex]) << 8 | Int(data[data.startIndex + 1])
        guard length <= container.capacity else {
          return finish(
            .failure(.malformed("NLEN \(length) is past the end of the \(container.maxFileSize)-byte NDEF file")))
        }
        data = data.dropFirst(2)
        message.reserveCapacity(length)
      }
      message += data.prefix(length - message.count)
      guard message.count < length else { return finish(.success(.read(message))) }
      let offset = 2 + message.count
      guard offset <= 0x7FFF else {
        return finish(.failure(.malformed("a message past offset 32767 needs READ BINARY with an offset data object")))
      }
      let next = min(container.readChunk, length - message.count)
      phase = .reading(container, length: length, asked: next)
      return .transmit(CommandAPDU.readBinary(offset: offset, length: next))
    case .writing(let container, let next):
      guard response.isSuccess else { return finish(.failure(.updateFailed(response.statusWord, step: step))) }
      guard case .write(let bytes) = operation else { return finish(.failure(.malformed("internal: not a write"))) }
      let written = next - 2
      guard written < bytes.count else {
        guard !bytes.isEmpty else { return finish(.success(.written)) }
        phase = .settingLength
        return .transmit(CommandAPDU.updateBinary(offset: 0, [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)]))
      }
      guard next <= 0x7FFF else {
        return finish(
          .failure(.malformed("a message past offset 32767 needs UPDATE BINARY with an offset data object")))
      }
      let chunk = bytes[written..<min(bytes.count, written + container.writeChunk)]
      phase = .writing(container, next: next + chunk.count)
      return .transmit(CommandAPDU.updateBinary(offset: next, chunk))
    case .settingLength:
      guard response.isSuccess else { return finish(.failure(.updateFailed(response.statusWord, step: step))) }
      return finish(.success(.written))
    case .locking:
      guard response.isSuccess else { return finish(.failure(.updateFailed(response.statusWord, step: step))) }
      return finish(.success(.locked))
    case .finished:
      return .finished(.failure(.malformed("a response after the operation ended")))
    }
  }

  /// What follows reading the capability container, for each operation.
  private mutating func proceed(with container: Type4CapabilityContainer) -> TagStep {
    switch operation {
    case .queryStatus:
      return finish(
        .success(.status(formatted: true, writable: container.isWritable, capacity: container.capacity)))
    case .lock:
      guard container.isWritable else { return finish(.failure(.notWritable)) }
      phase = .locking
      return .transmit(CommandAPDU.updateBinary(offset: Type4CapabilityContainer.writeAccessOffset, [0xFF]))
    case .read, .write:
      guard container.readChunk >= 2 else {
        return finish(.failure(.malformed("MLe \(container.maxResponseData) cannot carry NLEN")))
      }
      guard container.readAccess == 0x00 else {
        return notFormatted("the NDEF file's read access is \(ResponseAPDU.hex(UInt16(container.readAccess)))")
      }
      if case .write(let bytes) = operation {
        guard container.isWritable else { return finish(.failure(.notWritable)) }
        guard bytes.count <= container.capacity else {
          return finish(.failure(.capacityExceeded(size: bytes.count, capacity: container.capacity)))
        }
        guard container.writeChunk >= 3 else {
          return finish(.failure(.malformed("MLc \(container.maxCommandData) cannot carry NLEN and data")))
        }
      }
      phase = .selectingFile(container)
      return .transmit(CommandAPDU.selectFile(container.fileID))
    }
  }

  private var stepName: String {
    switch phase {
    case .selectingApplication: "SELECT NDEF application"
    case .selectingContainer: "SELECT capability container"
    case .readingContainer: "READ BINARY capability container"
    case .selectingFile: "SELECT NDEF file"
    case .reading: "READ BINARY NDEF file"
    case .writing: "UPDATE BINARY NDEF file"
    case .settingLength: "UPDATE BINARY NLEN"
    case .locking: "UPDATE BINARY write access"
    case .finished: "after the end"
    }
  }

  private mutating func finish(_ result: Result<TagOutcome, TagFailure>) -> TagStep {
    phase = .finished
    return .finished(result)
  }

  private mutating func status(formatted: Bool) -> TagStep {
    finish(.success(.status(formatted: formatted, writable: false, capacity: 0)))
  }

  private mutating func notFormatted(_ why: String) -> TagStep {
    operation == .queryStatus ? status(formatted: false) : finish(.failure(.notNDEFFormatted(why)))
  }

  private mutating func refused(_ response: ResponseAPDU, _ step: String) -> TagStep {
    finish(.failure(.statusWord(response.statusWord, step: step)))
  }

  private mutating func tooLong(_ response: ResponseAPDU, _ step: String) -> TagStep {
    finish(.failure(.malformed("\(step) returned \(response.data.count) bytes, more than it asked for")))
  }
}
