/// An NDEF operation on a tag, as a sequence of APDU exchanges.
package enum TagOperation: Sendable, Hashable {
  /// Whether the tag is NDEF-formatted, writable, and how large a message it takes.
  case queryStatus
  /// The bytes of the NDEF message (none for a blank tag).
  case read
  /// Replaces the NDEF message with these bytes.
  case write([UInt8])
  /// Makes the tag read-only for good.
  case lock

  /// `queryNDEFStatus`, `readNDEF`, `writeNDEF`, `writeLock`.
  package var name: String {
    switch self {
    case .queryStatus: "queryNDEFStatus"
    case .read: "readNDEF"
    case .write: "writeNDEF"
    case .lock: "writeLock"
    }
  }
}

/// How an operation on a tag ended well.
package enum TagOutcome: Sendable, Hashable {
  /// `queryStatus`: the tag's NDEF status.
  case status(formatted: Bool, writable: Bool, capacity: Int)
  /// `read`: the message bytes (empty for a blank tag).
  case read([UInt8])
  /// `write` stored the message.
  case written
  /// `lock` made the tag read-only.
  case locked
}

/// Why an operation on a tag failed, from the tag's answers alone.
package enum TagFailure: Error, Sendable, Hashable, CustomStringConvertible {
  /// A response shorter than a status word: the tag left during the command.
  case tagLost(step: String)
  /// The tag has no NDEF area this code can use.
  case notNDEFFormatted(String)
  /// The tag is read-only.
  case notWritable
  /// The message (`size` bytes) is larger than the tag takes (`capacity`).
  case capacityExceeded(size: Int, capacity: Int)
  /// The tag refused a command of `step` with a status word other than `90 00`.
  case statusWord(UInt16, step: String)
  /// The tag refused a write of `step`.
  case updateFailed(UInt16, step: String)
  /// What the tag holds or answered breaks its mapping (a capability container claiming more than
  /// the file holds, NLEN past the file, a TLV past the data area, an answer longer than asked).
  case malformed(String)

  package var description: String {
    switch self {
    case .tagLost(let step): "the tag left during \(step)"
    case .notNDEFFormatted(let why): "not NDEF-formatted: \(why)"
    case .notWritable: "the tag is read-only"
    case .capacityExceeded(let size, let capacity): "a \(size)-byte message does not fit in \(capacity) bytes"
    case .statusWord(let word, let step): "\(step) answered SW \(ResponseAPDU.hex(word))"
    case .updateFailed(let word, let step): "\(step) was refused with SW \(ResponseAPDU.hex(word))"
    case .malformed(let why): "malformed: \(why)"
    }
  }
}

/// What a procedure asks next: send a command APDU, or it has finished.
package enum TagStep: Sendable, Hashable {
  /// Send these bytes to the tag and feed back what it answers (`receive`).
  case transmit([UInt8])
  /// The operation is over.
  case finished(Result<TagOutcome, TagFailure>)
}

/// One NDEF operation on one tag, as a pure machine over APDU exchanges: `start()`, then `receive` of
/// each response, until it finishes. It never does I/O, never reads a clock, and bounds what it reads
/// by what the tag's own structures allow (and those by the mapping's limits), so a hostile tag can
/// make it fail but never loop, crash or allocate without bound.
package struct TagProcedure: Sendable {
  private enum Family: Sendable {
    case type4(Type4Procedure)
    case type2(Type2Procedure)
    /// A card without an NDEF mapping.
    case none
    /// Transient: the procedure is out being advanced, so its buffers are not copied.
    case advancing
  }

  private var family: Family
  private let operation: TagOperation
  /// APDUs sent so far.
  package private(set) var exchanges = 0

  /// The procedure for `operation` on a tag of `family`.
  package init(_ operation: TagOperation, on family: TagFamily) {
    self.operation = operation
    switch family {
    case .type4: self.family = .type4(Type4Procedure(operation))
    case .type2: self.family = .type2(Type2Procedure(operation))
    case .otherStorageCard: self.family = .none
    }
  }

  /// The first step.
  package mutating func start() -> TagStep {
    advance {
      $0.start()
    } type2: {
      $0.start()
    }
  }

  /// The next step, given the bytes the tag answered to the last `transmit`.
  package mutating func receive(_ bytes: [UInt8]) -> TagStep {
    advance {
      $0.receive(bytes)
    } type2: {
      $0.receive(bytes)
    }
  }

  private mutating func advance(
    type4: (inout Type4Procedure) -> TagStep, type2: (inout Type2Procedure) -> TagStep
  ) -> TagStep {
    let step: TagStep
    switch family {
    case .type4(var procedure):
      family = .advancing
      step = type4(&procedure)
      family = .type4(procedure)
    case .type2(var procedure):
      family = .advancing
      step = type2(&procedure)
      family = .type2(procedure)
    case .none, .advancing:
      if operation == .queryStatus {
        return .finished(.success(.status(formatted: false, writable: false, capacity: 0)))
      }
      return .finished(.failure(.notNDEFFormatted("the card has no NFC Forum NDEF mapping")))
    }
    if case .transmit = step { exchanges += 1 }
    return step
  }
}
