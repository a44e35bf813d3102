#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A reader software version such as `2.01.00.17`: a dotted list of decimal numbers, compared number
/// by number.
///
/// Leading zeros are kept in `description` (so a version prints as it was written) but do not count
/// when comparing, and missing trailing numbers count as zeros: `2.1` == `2.01.0`, `2.01.00.17` <
/// `2.01.00.18` < `2.02`.
///
/// ```swift
/// let installed = try SoftwareVersion("2.01.00.17")
/// installed < (try SoftwareVersion("2.01.01.00"))  // true
/// try SoftwareVersion("2.01-beta")  // throws invalidSoftwareVersion, context["value"] == "2.01-beta"
/// ```
public struct SoftwareVersion: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
  /// The longest text accepted, in bytes.
  public static let maximumLength = 64
  /// The most digits one number may have, so every number fits an `Int` on every platform.
  public static let maximumDigits = 9

  /// The numbers, in order, as written (trailing zeros included).
  public let components: [Int]
  /// The version as it was written, e.g. `2.01.00.17`.
  public let description: String

  /// Parses a dotted numeric version.
  /// - Throws: `invalidSoftwareVersion` when `text` is empty, longer than `maximumLength` bytes, or not
  ///   numbers of 1 to `maximumDigits` ASCII digits separated by single dots (no spaces, signs or
  ///   suffixes). `context["value"]` holds the text (its first `maximumLength` characters) and
  ///   `context["reason"]` says what is wrong.
  public init(_ text: String) throws(ReaderError) {
    func invalid(_ reason: String) -> ReaderError {
      let shown = text.utf8.count > Self.maximumLength ? String(text.prefix(Self.maximumLength)) + "…" : text
      return ReaderError(
        .invalidSoftwareVersion, "\"\(shown)\" is not a software version: \(reason)",
        context: ["value": shown, "reason": reason])
    }
    guard !text.isEmpty else { throw invalid("it is empty") }
    guard text.utf8.count <= Self.maximumLength else {
      throw invalid("it is longer than \(Self.maximumLength) bytes")
    }
    var components: [Int] = []
    var current = 0
    var digits = 0
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"):
        guard digits < Self.maximumDigits else {
          throw invalid("a number has more than \(Self.maximumDigits) digits")
        }
        current = current * 10 + Int(byte - UInt8(ascii: "0"))
        digits += 1
      case UInt8(ascii: "."):
        guard digits > 0 else { throw invalid("a number is missing before a dot") }
        components.append(current)
        current = 0
        digits = 0
      default:
        throw invalid("only digits and dots are allowed")
      }
    }
    guard digits > 0 else { throw invalid("a number is missing after the last dot") }
    components.append(current)
    self.components = components
    self.description = text
  }

  /// The numbers without trailing zeros: what equality, hashing and ordering look at.
  private var significant: ArraySlice<Int> {
    var end = components.endIndex
    while end > components.startIndex, components[end - 1] == 0 { end -= 1 }
    return components[..<end]
  }

  public static func == (lhs: SoftwareVersion, rhs: SoftwareVersion) -> Bool {
    lhs.significant.elementsEqual(rhs.significant)
  }

  public func hash(into hasher: inout Hasher) {
    for component in significant { hasher.combine(component) }
  }

  public static func < (lhs: SoftwareVersion, rhs: SoftwareVersion) -> Bool {
    let count = max(lhs.components.count, rhs.components.count)
    for index in 0..<count {
      let left = index < lhs.components.count ? lhs.components[index] : 0
      let right = index < rhs.components.count ? rhs.components[index] : 0
      if left != right { return left < right }
    }
    return false
  }

  /// Decodes a version from its string form.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    do {
      try self.init(text)
    } catch {
      throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
    }
  }

  /// Encodes the version as written.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }
}
