import Foundation
internal import ReaderCore

/// One line of a radio recording: what an `NFCRadio` was asked or reported, and when.
///
/// A recording is JSON lines, one object per line, `t` (seconds since the recording began) first:
///
/// ```
/// {"t":0,"policy":{"sessionTimeout":60,"whenBusy":"queue"}}
/// {"t":0,"readingAvailable":true}
/// {"t":0.001,"command":"startPolling","round":"1.1"}
/// {"t":0.002,"event":"pollingStarted","round":"1.1"}
/// {"t":0.851,"event":"tagsDetected","round":"1.1","tags":[1]}
/// {"t":0.851,"command":"readNDEF","request":"1.2","tag":1}
/// {"t":0.858,"event":"response","request":"1.2","response":{"read":"d1010854…"}}
/// {"t":4.2,"note":"stop"}
/// ```
///
/// `RecordingNFCRadio` writes them beside a real radio; `ReplayingNFCRadio` plays them back on a
/// `VirtualClock`, so that a run seen on hardware can be run again, and again, as a test.
public struct NFCRadioRecord: Sendable, Hashable {
  /// What the line holds.
  public enum Entry: Sendable, Hashable {
    /// The system's policy, as the radio stated it.
    case policy(NFCSystemPolicy)
    /// An answer to `isReadingAvailable`.
    case readingAvailable(Bool)
    /// A command to the radio.
    case command(NFCRadioCommand)
    /// An event the radio reported.
    case event(NFCRadioEvent)
    /// A mark the recording app made (e.g. `stop`: the person ended the run here).
    case note(String)
  }

  /// When, since the recording began.
  public var time: Duration
  /// What.
  public var entry: Entry

  public init(time: Duration, _ entry: Entry) {
    self.time = time
    self.entry = entry
  }
}

/// A command an `NFCRadio` was given, as a value.
public enum NFCRadioCommand: Sendable, Hashable {
  /// `startPolling(round)`.
  case startPolling(NFCRadioRequestID)
  /// `stopPolling(round)`.
  case stopPolling(NFCRadioRequestID)
  /// `connect(to: tag, request:)`.
  case connect(NFCRadioTagID, NFCRadioRequestID)
  /// `queryNDEFStatus(of: tag, request:)`.
  case queryNDEFStatus(NFCRadioTagID, NFCRadioRequestID)
  /// `readNDEF(from: tag, request:)`.
  case readNDEF(NFCRadioTagID, NFCRadioRequestID)
  /// `writeNDEF(bytes, to: tag, request:)`.
  case writeNDEF([UInt8], NFCRadioTagID, NFCRadioRequestID)
  /// `writeLock(tag, request:)`.
  case writeLock(NFCRadioTagID, NFCRadioRequestID)
  /// `presentSheet(alertMessage:)`.
  case presentSheet(String)
  /// `updateSheet(alertMessage:)`.
  case updateSheet(String)
  /// `dismissSheet(errorMessage:)`.
  case dismissSheet(String?)
}

/// A recording line that cannot be read: which line, and why.
public struct NFCRadioRecordError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The line, from 1.
  public var line: Int
  /// What is wrong with it.
  public var message: String

  public init(line: Int, message: String) {
    self.line = line
    self.message = message
  }

  public var description: String { "line \(line): \(message)" }
}

extension NFCRadioRecord {
  /// The line's JSON text (no newline): `t` in seconds to the microsecond first, then the other keys
  /// sorted.
  public var jsonLine: String {
    let data =
      (try? JSONSerialization.data(withJSONObject: Self.json(entry), options: [.sortedKeys, .withoutEscapingSlashes]))
      ?? Data("{}".utf8)
    let rest = String(decoding: data.dropFirst(), as: UTF8.self)
    let micro = Int64((time.inSeconds * 1_000_000).rounded())
    let fraction = String(micro % 1_000_000)
    let seconds = "\(micro / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    return "{\"t\":\(seconds)" + (rest == "}" ? rest : "," + rest)
  }

  /// The deepest nesting of arrays and objects a line may have (a line nests three levels).
  static let maximumDepth = 16

  /// What a line may be: its bytes (64 KiB of NDEF as hex, and the rest), its nesting.
  static let limits = JSONReader.Limits(maximumSize: 1 << 20, maximumDepth: maximumDepth)

  /// Reads a recording: every non-empty line of `text`, in order.
  /// - Throws: `NFCRadioRecordError` for the first line that is not a recording line.
  public static func parse(_ text: String) throws(NFCRadioRecordError) -> [NFCRadioRecord] {
    var records: [NFCRadioRecord] = []
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      guard !trimmed.isEmpty else { continue }
      func fail(_ message: String) -> NFCRadioRecordError { NFCRadioRecordError(line: index + 1, message: message) }
      let value: JSONValue
      do {
        value = try JSONReader.read(trimmed.utf8, limits: Self.limits)
      } catch {
        if case .tooDeep = error.kind {
          throw fail("arrays and objects nest deeper than \(Self.maximumDepth) levels (at byte \(error.offset))")
        }
        throw fail("not a JSON object: \(error)")
      }
      guard case .object(let members) = value else { throw fail("not a JSON object") }
      let object = Dictionary(members, uniquingKeysWith: { $1 })
      let seconds: Double
      switch object["t"] {
      case .int(let whole)?: seconds = Double(whole)
      case .number(let number, _)?: seconds = number
      default: throw fail("no time `t` in seconds")
      }
      guard seconds >= 0, seconds < 1e9 else { throw fail("no time `t` in seconds") }
      let time = Duration.microseconds(Int64((seconds * 1_000_000).rounded()))
      do {
        records.append(NFCRadioRecord(time: time, try entry(object)))
      } catch {
        throw fail(error.message)
      }
    }
    return records
  }
}

/// Why a JSON object is not a recording line.
struct RecordFormatError: Error {
  var message: String
  init(_ message: String) { self.message = message }
}
