internal import PCSCKit
internal import ReaderCore

/// How the PC/SC radio reports what went wrong, in the radio contract's terms, with the status word or
/// PC/SC code as the error's `cause` and the step, reader or limit in its `context`.
enum PCSCRadioFailure {
  /// A tag procedure's failure.
  static func tag(_ failure: TagFailure) -> NFCRadioFailure {
    switch failure {
    case .tagLost(let step):
      return .detailed(
        .tagLost, message: "the tag left the field during \(step)", cause: nil,
        context: ["step": step, "reason": "tagLost"])
    case .notNDEFFormatted(let why):
      return .detailed(
        .notNDEFFormatted, message: "the tag is not NDEF-formatted: \(why)", cause: nil, context: ["detail": why])
    case .notWritable:
      return .notWritable
    case .capacityExceeded(let size, let capacity):
      return .detailed(
        .capacityExceeded, message: "the \(size)-byte message is larger than the \(capacity) bytes the tag holds",
        cause: nil, context: ["size": String(size), "capacity": String(capacity)])
    case .statusWord(let word, let step):
      let hex = ResponseAPDU.hex(word)
      return .detailed(
        .tagResponse(detail: "\(step) answered SW \(hex)"), message: nil, cause: .statusWord(word),
        context: ["step": step, "statusWord": hex])
    case .updateFailed(let word, let step):
      let hex = ResponseAPDU.hex(word)
      return .detailed(
        .updateFailed, message: "the tag refused \(step) with SW \(hex)", cause: .statusWord(word),
        context: ["step": step, "statusWord": hex])
    case .malformed(let why):
      return .detailed(.tagResponse(detail: why), message: nil, cause: nil, context: ["reason": "malformedTag"])
    }
  }

  /// A PC/SC call on a tag that failed: the tag is gone when the code says so.
  static func call(_ error: PCSCError) -> NFCRadioFailure {
    let cause = ErrorCause.pcsc(error.code.rawValue)
    if error.code.meansCardGone {
      return .detailed(
        .tagLost, message: "the tag left the field (\(error))", cause: cause, context: ["call": error.call])
    }
    if error.code.meansServiceGone { return service(error, afterAnswering: true) }
    return .detailed(
      .tagResponse(detail: error.description), message: nil, cause: cause, context: ["call": error.call])
  }

  /// The PC/SC service could not be reached, or went away after it had answered.
  static func service(_ error: PCSCError, afterAnswering: Bool) -> NFCRadioFailure {
    let cause = ErrorCause.pcsc(error.code.rawValue)
    if error.code == .noService && !afterAnswering {
      return .detailed(
        .unsupported, message: "the PC/SC service (pcscd) is not running", cause: cause,
        context: ["call": error.call, "reason": "noService"])
    }
    return .detailed(
      .terminated, message: "the PC/SC service (pcscd) stopped during the session", cause: cause,
      context: ["call": error.call, "reason": "serviceStopped"])
  }

  /// A tag that did not answer a command within the system's limit.
  static func stalled(after limit: Duration) -> NFCRadioFailure {
    .detailed(
      .tagLost, message: "the tag stopped answering (no answer within \(limit.formattedSeconds))", cause: nil,
      context: ["reason": "tagStoppedAnswering", "timeout": limit.contextSeconds])
  }

  /// Another program held the tag in `reader` past the system's limit.
  static func heldElsewhere(_ reader: String, after limit: Duration) -> NFCRadioFailure {
    .detailed(
      .busy, message: "another program held the tag in \(reader) for \(limit.formattedSeconds)",
      cause: .pcsc(PCSCCode.sharingViolation.rawValue), context: ["reader": reader, "reason": "tagHeldElsewhere"])
  }

  /// Another process's reader session runs, on a system that refuses a second session.
  static func sessionElsewhere(holder: String) -> NFCRadioFailure {
    .detailed(
      .busy, message: "another process (\(holder)) runs a reader session", cause: nil,
      context: ["reason": "sessionInAnotherProcess", "process": holder])
  }

  /// The cross-process line could not be joined.
  static func lockFailed(_ cause: ErrorCause, path: String) -> NFCRadioFailure {
    .detailed(
      .unsupported, message: "the reader session line at \(path) cannot be used (\(cause))", cause: cause,
      context: ["reason": "sessionLock", "path": path])
  }
}
