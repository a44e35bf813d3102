import Foundation
import ReaderCore

/// The saved reader's versioned JSON record, the one format both stores keep:
/// `FileReaderStore` writes these bytes to its file and `UserDefaultsReaderStore` stores the same bytes
/// under its key.
package enum SavedReaderRecord {
  /// The record version this build writes and reads.
  static let version = 1

  /// Read first, to tell an unknown version from a corrupt record. `Double`, so a fractional version
  /// is reported against its field rather than as a number that does not fit.
  private struct Envelope: Decodable {
    var version: Double
  }

  private struct RecordV1: Codable {
    var version: Int
    var serialNumber: String
    var locationId: String
    var deviceType: String?
    /// Written only for simulated readers, so a real reader's record reads as before.
    var simulated: Bool?
  }

  /// Why bytes are not a valid record.
  struct Failure: Error, Hashable {
    /// A sentence for people.
    var reason: String
    /// `reason` plus `offset`, `field` or `version` where known.
    var context: [String: String]
  }

  /// The record as JSON with sorted keys and a final newline.
  package static func encode(_ reader: SavedReader, path: String) throws(ReaderError) -> [UInt8] {
    let record = RecordV1(
      version: version, serialNumber: reader.serialNumber, locationId: reader.locationId,
      deviceType: reader.deviceType?.rawValue, simulated: reader.simulated ? true : nil)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    do {
      return Array(try encoder.encode(record)) + [UInt8(ascii: "\n")]
    } catch {
      throw ReaderError(
        .storeUnavailable, "cannot encode the reader: \(error)", context: ["path": path, "reason": "\(error)"])
    }
  }

  /// Decodes a record, or says precisely why the bytes are not one.
  static func decode(_ bytes: some Collection<UInt8>) -> Result<SavedReader, Failure> {
    if bytes.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
      let reason = bytes.isEmpty ? "the record is empty" : "the record holds only white space"
      return .failure(Failure(reason: reason, context: ["reason": reason, "offset": "\(bytes.count)"]))
    }
    let root: JSONValue
    do {
      root = try JSONReader.read(bytes, limits: limits)
    } catch {
      let reason =
        if case .tooDeep = error.kind {
          "the record nests arrays and objects deeper than \(maximumDepth) levels (at byte \(error.offset))"
        } else {
          "the record is not valid JSON (error at byte \(error.offset)): \(error.reason)"
        }
      return .failure(Failure(reason: reason, context: ["reason": reason, "offset": "\(error.offset)"]))
    }
    let decoder = JSONValueDecoder()
    let envelope: Envelope
    do {
      envelope = try decoder.decode(Envelope.self, from: root)
    } catch {
      return .failure(failure(error))
    }
    guard let found = Int(exactly: envelope.version) else {
      let reason = "the field version is not an integer"
      return .failure(Failure(reason: reason, context: ["reason": reason, "field": "version"]))
    }
    guard found == version else {
      let reason =
        found > version
        ? "record version \(found) was written by a newer ReaderKit; this one reads version \(version)"
        : "record version \(found) is invalid"
      return .failure(
        Failure(reason: reason, context: ["reason": reason, "field": "version", "version": "\(found)"]))
    }
    let record: RecordV1
    do {
      record = try decoder.decode(RecordV1.self, from: root)
    } catch {
      return .failure(failure(error))
    }
    // The same rule as a connection's location id: a record that could never be reconnected is corrupt.
    for (field, value) in [("serialNumber", record.serialNumber), ("locationId", record.locationId)]
    where value.allSatisfy(\.isWhitespace) {
      let reason = "the field \(field) is \(value.isEmpty ? "empty" : "blank")"
      return .failure(Failure(reason: reason, context: ["reason": reason, "field": field]))
    }
    var deviceType: DeviceType?
    if let name = record.deviceType {
      guard let known = DeviceType(rawValue: name) else {
        let reason = "the field deviceType names no known reader model"
        return .failure(
          Failure(reason: reason, context: ["reason": reason, "field": "deviceType", "value": name]))
      }
      deviceType = known
    }
    return .success(
      SavedReader(
        serialNumber: record.serialNumber, locationId: record.locationId, deviceType: deviceType,
        simulated: record.simulated ?? false))
  }

  /// What a field of `type` holds, in JSON's words rather than Swift's.
  private static func jsonKind(of type: Any.Type) -> String {
    switch type {
    case is String.Type: "a string"
    case is Bool.Type: "true or false"
    case is Int.Type, is Double.Type: "a number"
    default: "of the expected JSON type"
    }
  }

  private static func failure(_ error: any Error) -> Failure {
    func make(_ reason: String, _ extra: [String: String] = [:]) -> Failure {
      Failure(reason: reason, context: extra.merging(["reason": reason]) { $1 })
    }
    guard let error = error as? DecodingError else { return make("cannot decode: \(error)") }
    switch error {
    case .typeMismatch(_, let context) where context.codingPath.isEmpty,
      .valueNotFound(_, let context) where context.codingPath.isEmpty:
      return make("the record is not a JSON object")
    case .keyNotFound(let key, let context):
      let field = (context.codingPath + [key]).map(\.stringValue).joined(separator: ".")
      return make("the field \(field) is missing", ["field": field])
    case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
      let field = context.codingPath.map(\.stringValue).joined(separator: ".")
      return make("the field \(field) is not \(jsonKind(of: type))", ["field": field])
    case .dataCorrupted(let context):
      let field = context.codingPath.map(\.stringValue).joined(separator: ".")
      return make("the field \(field) is invalid", ["field": field])
    @unknown default:
      return make("cannot decode: \(error)")
    }
  }

  /// The largest record a store reads, in bytes; a larger one is corrupt without being read into
  /// memory. A real record is under 1 KiB.
  static let maximumSize = 64 * 1024

  /// The deepest nesting of arrays and objects a record may have; a real one has 1 level.
  static let maximumDepth = 8

  /// What the reader accepts of a record: the size bounds its strings and values, as it always has.
  static let limits = JSONReader.Limits(maximumSize: maximumSize, maximumDepth: maximumDepth)

  /// What a store finds where the record should be.
  package enum Found {
    case missing
    case record(SavedReader)
    case corrupt(ReaderError)
  }

  /// Classifies stored bytes: a record, or `storeCorrupt` with `context` (where the bytes live) merged
  /// into the error's context.
  package static func classify(_ bytes: some Collection<UInt8>, context: [String: String]) -> Found {
    if bytes.count > maximumSize { return .corrupt(tooLarge(size: bytes.count, context: context)) }
    switch decode(bytes) {
    case .success(let reader):
      return .record(reader)
    case .failure(let failure):
      return .corrupt(
        ReaderError(
          .storeCorrupt, "the saved reader is corrupt: \(failure.reason)",
          context: context.merging(failure.context) { $1 }))
    }
  }

  /// `storeCorrupt` for a record of `size` bytes, over the limit.
  static func tooLarge(size: Int, context: [String: String]) -> ReaderError {
    let reason = "the record is \(size) bytes, more than the limit of \(maximumSize)"
    return ReaderError(
      .storeCorrupt, "the saved reader is corrupt: \(reason)",
      context: context.merging(["reason": reason, "size": "\(size)", "limit": "\(maximumSize)"]) { $1 })
  }
}
