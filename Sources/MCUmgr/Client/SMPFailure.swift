import ReaderCore

/// Why an SMP request did not succeed.
public enum SMPFailure: Error, Sendable, Hashable, CustomStringConvertible {
  /// The reader answered with an error: a non-zero `rc` (the original protocol, or an SMP-level error
  /// under SMP version 2; `group` is nil), or a group error `err: {group, rc}` (SMP version 2).
  /// `reason` is the optional `rsn` text.
  case rejected(rc: Int, group: UInt16?, reason: String?)
  /// The reader answered this request (same sequence number, group and command) with a body that is
  /// not a well-formed CBOR map, or whose fields do not have the types the specification gives.
  case malformedResponse(String)
  /// No answer came within the request's timeout.
  case timedOut(Duration)
  /// The link went down before the answer came (or was down when the request was made).
  case linkDown
  /// A write of the request to the link failed, so the reader never got it; `cause` is the
  /// backend's error (for BlueZ, the D-Bus error `WriteValue` answered with).
  case writeFailed(ErrorCause)

  /// The fault as an `ErrorCause`: the SMP rc and group for a rejection.
  public var cause: ErrorCause {
    switch self {
    case .rejected(let rc, let group, _): .smp(rc: rc, group: group)
    case .malformedResponse(let text): .other(text)
    case .timedOut(let after): .other("no answer within \(after)")
    case .linkDown: .other("link down")
    case .writeFailed(let cause): cause
    }
  }

  /// A short sentence, e.g. `the reader refused it: IMG_MGMT_ERR_NO_FREE_SLOT (group 1 rc 9)`.
  public var description: String {
    switch self {
    case .rejected(let rc, let group, let reason):
      let name = SMPResultCode.name(rc: rc, group: group)
      let code = group.map { "group \($0) rc \(rc)" } ?? "rc \(rc)"
      return "the reader refused it: \(name) (\(code))" + (reason.map { ": \($0)" } ?? "")
    case .malformedResponse(let text): return "the reader's answer is malformed: \(text)"
    case .timedOut(let after): return "the reader did not answer within \(after.formattedSeconds)"
    case .linkDown: return "the link to the reader went down"
    case .writeFailed(let cause): return "the request could not be written to the reader: \(cause)"
    }
  }

  /// A `ReaderError` with `code` whose message says what failed (`operation`) and why, with this
  /// failure as its cause and `context["smp"]` naming it.
  public func readerError(_ code: ReaderError.Code, _ operation: String, context: [String: String] = [:])
    -> ReaderError
  {
    var context = context
    if case .rejected(let rc, let group, _) = self { context["smp"] = SMPResultCode.name(rc: rc, group: group) }
    return ReaderError(code, "\(operation) failed: \(description)", context: context, cause: cause)
  }
}

/// The names of SMP result codes, for messages: `mcumgr_err_t` for a plain `rc`, and the group codes
/// of the OS (`os_mgmt_err_code_t`) and image (`img_mgmt_err_code_t`) groups, from Zephyr's
/// `mgmt_defines.h`, `os_mgmt.h` and `img_mgmt.h`.
public enum SMPResultCode {
  static let plain = [
    "MGMT_ERR_EOK", "MGMT_ERR_EUNKNOWN", "MGMT_ERR_ENOMEM", "MGMT_ERR_EINVAL", "MGMT_ERR_ETIMEOUT", "MGMT_ERR_ENOENT",
    "MGMT_ERR_EBADSTATE", "MGMT_ERR_EMSGSIZE", "MGMT_ERR_ENOTSUP", "MGMT_ERR_ECORRUPT", "MGMT_ERR_EBUSY",
    "MGMT_ERR_EACCESSDENIED", "MGMT_ERR_UNSUPPORTED_TOO_OLD", "MGMT_ERR_UNSUPPORTED_TOO_NEW",
  ]
  static let os = [
    "OS_MGMT_ERR_OK", "OS_MGMT_ERR_UNKNOWN", "OS_MGMT_ERR_INVALID_FORMAT", "OS_MGMT_ERR_QUERY_YIELDS_NO_ANSWER",
    "OS_MGMT_ERR_RTC_NOT_SET", "OS_MGMT_ERR_RTC_COMMAND_FAILED", "OS_MGMT_ERR_QUERY_RESPONSE_VALUE_NOT_VALID",
  ]
  static let image = [
    "OK", "UNKNOWN", "FLASH_CONFIG_QUERY_FAIL", "NO_IMAGE", "NO_TLVS", "INVALID_TLV", "TLV_MULTIPLE_HASHES_FOUND",
    "TLV_INVALID_SIZE", "HASH_NOT_FOUND", "NO_FREE_SLOT", "FLASH_OPEN_FAILED", "FLASH_READ_FAILED",
    "FLASH_WRITE_FAILED", "FLASH_ERASE_FAILED", "INVALID_SLOT", "NO_FREE_MEMORY", "FLASH_CONTEXT_ALREADY_SET",
    "FLASH_CONTEXT_NOT_SET", "FLASH_AREA_DEVICE_NULL", "INVALID_PAGE_OFFSET", "INVALID_OFFSET", "INVALID_LENGTH",
    "INVALID_IMAGE_HEADER", "INVALID_IMAGE_HEADER_MAGIC", "INVALID_HASH", "INVALID_FLASH_ADDRESS",
    "VERSION_GET_FAILED", "CURRENT_VERSION_IS_NEWER", "IMAGE_ALREADY_PENDING", "INVALID_IMAGE_VECTOR_TABLE",
    "INVALID_IMAGE_TOO_LARGE", "INVALID_IMAGE_DATA_OVERRUN", "IMAGE_CONFIRMATION_DENIED",
    "IMAGE_SETTING_TEST_TO_ACTIVE_DENIED",
  ].map { "IMG_MGMT_ERR_" + $0 }

  /// The name of `rc` in `group` (nil: a plain `rc`), or `rc <n>` for one without a known name.
  public static func name(rc: Int, group: UInt16?) -> String {
    let names: [String]
    switch group {
    case nil: names = plain
    case SMPGroup.os?: names = os
    case SMPGroup.image?: names = image
    default: names = []
    }
    if names.indices.contains(rc) { return names[rc] }
    if group == nil, rc >= 256 { return "MGMT_ERR_EPERUSER+\(rc - 256)" }
    return group.map { "group \($0) rc \(rc)" } ?? "rc \(rc)"
  }
}
