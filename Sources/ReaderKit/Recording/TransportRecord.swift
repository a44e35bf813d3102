import Foundation
import ReaderCore

/// What a recording holds first: what was run, when, and the radio's state at the start.
public struct TransportRecordHeader: Sendable, Hashable, Codable {
  /// The format of the recording, `readerkit-transport-record/1`.
  public var format: String
  /// When the recording started; a replay's terminal sees this date at its start.
  public var startedAt: Date
  /// What was run (for `readerctl`, its arguments), so a replay can run it again.
  public var arguments: [String]
  /// Whether the radio was on when the recording started.
  public var isPoweredOn: Bool
  /// Whatever else the app needs to run it again (for `readerctl`: the store's path, the reader saved in it).
  public var notes: [String: String]

  /// The format this version writes and reads.
  public static let currentFormat = "readerkit-transport-record/1"

  /// A header for a recording of `arguments` that starts at `startedAt`.
  public init(startedAt: Date, arguments: [String], isPoweredOn: Bool, notes: [String: String] = [:]) {
    self.format = Self.currentFormat
    self.startedAt = startedAt
    self.arguments = arguments
    self.isPoweredOn = isPoweredOn
    self.notes = notes
  }
}

/// A command the terminal gave its radio (`BluetoothCentral`) or its reader link (`ReaderLink`).
public enum TransportCommand: Sendable, Hashable {
  case startScan
  case stopScan
  case connect(serialNumber: String)
  case cancelConnect(serialNumber: String)
  case disconnect(serialNumber: String)
  case flashLEDs(serialNumber: String)
  case reboot(serialNumber: String)
  /// An install: the update, and the size and SHA-256 of its image (the image itself is not kept).
  case installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, imageSize: Int?, imageSHA256: SHA256Checksum?)
  case cancelUpdate(serialNumber: String)
}

/// Something the radio or the reader link reported to the terminal.
public enum TransportEvent: Sendable, Hashable {
  case central(BluetoothEvent)
  case link(ReaderLinkEvent)
}

/// One line of a recording of a terminal's transports (`RecordingTransport` writes them,
/// `ReplayingTransport` plays them back): the header, then the commands and events in the order they
/// happened, each with its time since the start in seconds to the attosecond (`"t"`, a string), so
/// a replay on a `VirtualClock` runs everything at exactly the recorded instants.
///
/// Each line is one JSON object, e.g.
/// `{"info":{…},"name":"didConnect","record":"event","serialNumber":"STRM2-0001","t":"1.25"}`.
public enum TransportRecord: Sendable, Hashable {
  case header(TransportRecordHeader)
  case command(at: Duration, TransportCommand)
  case event(at: Duration, TransportEvent)

  /// The longest line read (a line holds one event; the longest, an update with its release notes, is
  /// a few kilobytes).
  public static let maximumLineLength = 1 << 20
  /// The deepest nesting of arrays and objects read (a line nests four levels).
  static let maximumDepth = 16

  /// How numbers JSON cannot hold are written (a reader's progress is whatever it reported).
  private static let nonConforming = JSONEncoder.NonConformingFloatEncodingStrategy.convertToString(
    positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
  private static let nonConformingDecoding = JSONValueDecoder.NonConformingFloats(
    positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")

  /// The time of a command or an event; nil for the header.
  public var time: Duration? {
    switch self {
    case .header: nil
    case .command(let time, _), .event(let time, _): time
    }
  }

  /// The record as one line of JSON, without the newline.
  public var line: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.nonConformingFloatEncodingStrategy = Self.nonConforming
    // Every field is a string, a number, a Boolean, an array or an object: encoding cannot fail.
    let data = (try? encoder.encode(TransportRecordLine(self))) ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self)
  }

  /// Reads one line.
  /// - Throws: `invalidConfiguration` naming the line's fault: too long, not JSON, an unknown record, a
  ///   missing or malformed field.
  public init(line: some StringProtocol) throws(ReaderError) {
    let bytes = Array(line.utf8)
    guard bytes.count <= Self.maximumLineLength else {
      throw ReaderError(
        .invalidConfiguration, "a recorded line is longer than \(Self.maximumLineLength) bytes",
        context: ["length": "\(bytes.count)"])
    }
    let root: JSONValue
    do {
      root = try JSONReader.read(
        bytes, limits: JSONReader.Limits(maximumSize: Self.maximumLineLength, maximumDepth: Self.maximumDepth))
    } catch {
      if case .tooDeep = error.kind {
        throw ReaderError(
          .invalidConfiguration,
          "a recorded line nests arrays and objects deeper than \(Self.maximumDepth) levels (at byte \(error.offset))",
          context: ["offset": "\(error.offset)"])
      }
      throw ReaderError(
        .invalidConfiguration, "a recorded line is not valid JSON (error at byte \(error.offset)): \(error.reason)",
        context: ["offset": "\(error.offset)"])
    }
    let decoded: TransportRecordLine
    do {
      decoded = try JSONValueDecoder(nonConformingFloats: Self.nonConformingDecoding).decode(
        TransportRecordLine.self, from: root)
    } catch {
      throw ReaderError(.invalidConfiguration, "a recorded line is not a record: \(error)")
    }
    self = try decoded.decoded()
  }

  /// Reads a whole recording: its header, then every command and event in order.
  /// - Throws: `invalidConfiguration` with `context["line"]` for the first line that does not read, or
  ///   when the first line is not a header of this format or times go backwards.
  public static func read(_ data: Data) throws(ReaderError) -> (TransportRecordHeader, [TransportRecord]) {
    var header: TransportRecordHeader?
    var records: [TransportRecord] = []
    var number = 0
    var last = Duration.zero
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true) {
      number += 1
      let record: TransportRecord
      do throws(ReaderError) {
        record = try TransportRecord(line: line)
      } catch {
        var error = error
        error.context["line"] = "\(number)"
        throw error
      }
      switch (record, header) {
      case (.header(let found), nil) where found.format == TransportRecordHeader.currentFormat:
        header = found
      case (.header(let found), nil):
        throw ReaderError(
          .invalidConfiguration,
          "the recording is in format \(found.format), not \(TransportRecordHeader.currentFormat)",
          context: ["line": "1"])
      case (_, nil), (.header, _):
        throw ReaderError(
          .invalidConfiguration, "a recording starts with its header, once", context: ["line": "\(number)"])
      default:
        guard let time = record.time, time >= last else {
          throw ReaderError(.invalidConfiguration, "recorded times go backwards", context: ["line": "\(number)"])
        }
        last = time
        records.append(record)
      }
    }
    guard let header else { throw ReaderError(.invalidConfiguration, "the recording is empty") }
    return (header, records)
  }
}
