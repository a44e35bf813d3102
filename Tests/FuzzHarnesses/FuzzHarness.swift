import BlueZ
import DBus
import Foundation
import MCUmgr
import NFCKit
import PCSCKit
import ReaderCore
import ReaderKit

/// A parser of untrusted bytes, and the properties it must keep on any input: never crash, never
/// hang, never allocate without bound, and where it accepts the input, agree with itself (what it
/// decodes re-encodes to something it decodes the same way). A broken property traps, so that the
/// fuzzer reports the input.
public enum FuzzHarness: String, CaseIterable, Sendable {
  /// `NDEFDecoder` and the typed record views, with an encode/decode round trip.
  case ndef
  /// The saved reader's record, as both stores read it.
  case storeRecord
  /// `JSONReader`, the one reader of JSON text, with a render/read round trip of what it reads.
  case json
  /// The update manifest parser.
  case manifest
  /// The answers of an NFC tag behind a PC/SC reader: the Type 4 and Type 2 procedures fed the input
  /// as a tag's responses, and the Type 2 TLV and Type 4 capability container parsers on it directly.
  case tagResponses
  /// `CBORDecoder`, with an encode/decode round trip.
  case cbor
  /// `SMPReassembler` over notifications cut from the input, and the frames it puts together.
  case smpFrames
  /// A D-Bus message from the bus, with a decode/encode round trip, read as a BlueZ signal and as a
  /// `GetManagedObjects` reply; the same bytes as a signature.
  case dbusMessage
  /// A recording of a terminal's transports (`readerctl replay`'s input), line by line, with a
  /// write/read round trip of every line that reads.
  case transportRecord
  /// `HTTPResponseReader` on a server's whole answer — status line, headers, interim answers, framing,
  /// chunk sizes and ends, trailers, limits — whole, cut into reads, and a byte at a time.
  case httpResponse
  /// A recording of an NFC radio (`readerctl nfc replay`'s input), with a write/read round trip of
  /// every record that reads.
  case nfcRecording

  /// Runs the harness on one input and traps on a broken property, so that the fuzzer reports the input.
  public func run(_ bytes: [UInt8]) {
    do throws(FuzzViolation) {
      try check(bytes)
    } catch {
      fatalError("\(self): \(error)")
    }
  }

  /// Runs the harness on one input.
  /// - Throws: `FuzzViolation` naming the property the input broke. (A crash in the parser itself
  ///   still traps: that is what the fuzzer looks for.)
  public func check(_ bytes: [UInt8]) throws(FuzzViolation) {
    switch self {
    case .ndef: try Self.ndef(bytes)
    case .storeRecord: try Self.storeRecord(bytes)
    case .json: try Self.json(bytes)
    case .manifest: try Self.manifest(bytes)
    case .tagResponses: try Self.tagResponses(bytes)
    case .cbor: try Self.cbor(bytes)
    case .smpFrames: try Self.smpFrames(bytes)
    case .dbusMessage: try Self.dbusMessage(bytes)
    case .transportRecord: try Self.transportRecord(bytes)
    case .httpResponse: try Self.httpResponse(bytes)
    case .nfcRecording: try Self.nfcRecording(bytes)
    }
  }

  /// The harness named by `READERKIT_FUZZ` (or `name`).
  public static func named(_ name: String?) -> FuzzHarness? {
    name.flatMap(FuzzHarness.init(rawValue:))
  }

  private static func ndef(_ bytes: [UInt8]) throws(FuzzViolation) {
    let options = NDEFDecodingOptions()
    let decoded = Result { () throws(NDEFError) in try NDEFDecoder(options: options).decode(bytes) }
    let typed = Result { () throws(NDEFError) in try NDEFDecoder(options: options).decodeTyped(bytes) }
    guard case .success(let message) = decoded else {
      guard case .failure(let typedError) = typed, case .failure(let error) = decoded, typedError == error else {
        throw FuzzViolation("decodeTyped does not fail as decode does")
      }
      return
    }
    guard case .success(let typedMessage) = typed, typedMessage.message == message,
      typedMessage.values.count == message.records.count
    else { throw FuzzViolation("decodeTyped does not decode the message decode does") }
    for (record, value) in zip(message.records, typedMessage.values) {
      let text = try? TextRecord(record)
      let uri = try? URIRecord(record)
      let poster = try? SmartPosterRecord(record, options: options)
      let expected: NDEFRecordValue =
        text.map { .text($0) } ?? uri.map { .uri($0) } ?? poster.map { .smartPoster($0) } ?? .none
      guard value == expected else { throw FuzzViolation("decodeTyped's value of \(record) is not its typed view") }
    }
    let encoded = NDEFEncoder().encode(message)
    guard let again = try? NDEFDecoder(options: options).decode(encoded) else {
      throw FuzzViolation("a decoded message does not decode after re-encoding: \(encoded)")
    }
    guard again == message else { throw FuzzViolation("the round trip changed the message") }
  }

  /// What the reader accepts renders to text it reads again as the same value (numbers to within the
  /// renderer's nine fraction digits); an error's offset is within the input.
  private static func json(_ bytes: [UInt8]) throws(FuzzViolation) {
    let limits = JSONReader.Limits(maximumSize: 1 << 20, maximumDepth: 32, maximumStringLength: 4096)
    let value: JSONValue
    do {
      value = try JSONReader.read(bytes, limits: limits)
    } catch {
      guard error.offset <= bytes.count else { throw FuzzViolation("an error past the input's end: \(error)") }
      return
    }
    let text = value.rendered
    guard let again = try? JSONReader.read(text.utf8, limits: limits) else {
      throw FuzzViolation("a value that reads renders to text that does not: \(text)")
    }
    guard same(value, again) else { throw FuzzViolation("the round trip changed the value: \(text)") }
  }

  /// Whether two values are equal, numbers compared as `Double`s to within the rendering's precision.
  private static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
    func number(_ value: JSONValue) -> Double? {
      switch value {
      case .int(let integer): Double(integer)
      case .number(let number, _): number
      default: nil
      }
    }
    if let x = number(a), let y = number(b) { return abs(x - y) <= 1e-9 * max(1, abs(x)) + 1e-9 }
    switch (a, b) {
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
    case (.object(let x), .object(let y)):
      return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && same($0.1, $1.1) }
    default: return a == b
    }
  }

  private static func storeRecord(_ bytes: [UInt8]) throws(FuzzViolation) {
    switch SavedReaderRecord.classify(bytes, context: [:]) {
    case .record(let reader):
      guard let encoded = try? SavedReaderRecord.encode(reader, path: "fuzz"),
        case .record(let again) = SavedReaderRecord.classify(encoded, context: [:]), again == reader
      else { throw FuzzViolation("a record that loads does not save and load back the same") }
    case .missing, .corrupt:
      break
    }
  }

  /// The first byte picks the operation and the tag family; the rest is the tag's answers, each a length
  /// byte and that many bytes. A procedure ends, or runs out of answers, without asking for more than
  /// one command per answer; a message it reads is never larger than the input.
  private static func tagResponses(_ bytes: [UInt8]) throws(FuzzViolation) {
    guard let first = bytes.first else { return }
    let operations: [TagOperation] = [.queryStatus, .read, .write(Array(bytes.prefix(300))), .lock]
    let family: TagFamily = first & 0x10 == 0 ? .type4 : .type2
    var procedure = TagProcedure(operations[Int(first & 0x03)], on: family)
    var rest = bytes.dropFirst()
    var step = procedure.start()
    while case .transmit = step, let length = rest.first {
      let answer = Array(rest.dropFirst().prefix(Int(length)))
      rest = rest.dropFirst(1 + answer.count)
      step = procedure.receive(answer)
    }
    if case .finished(.success(.read(let message))) = step, message.count > bytes.count {
      throw FuzzViolation("a \(message.count)-byte message read from \(bytes.count) bytes of answers")
    }
    let area = Array(bytes.dropFirst())
    if case .ndef(_, let value, let length, _) = Type2TLVScan.scan(area, size: area.count),
      value + length > area.count
    {
      throw FuzzViolation("an NDEF TLV past the data area was accepted")
    }
    if let container = try? Type4CapabilityContainer(area), !(1...0xFFFC).contains(container.capacity) {
      throw FuzzViolation("a capability container with capacity \(container.capacity) was accepted")
    }
  }

  private static func manifest(_ bytes: [UInt8]) throws(FuzzViolation) {
    let url = URL(fileURLWithPath: "/fuzz/manifest.json")
    _ = try? UpdateManifest.parse(Data(bytes), url: url, imageSchemes: ["file", "http", "https"])
  }

  private static func cbor(_ bytes: [UInt8]) throws(FuzzViolation) {
    guard let value = try? CBORDecoder().decode(bytes) else { return }
    let encoded = CBOREncoder.encode(value)
    guard let again = try? CBORDecoder().decode(encoded), again == value else {
      throw FuzzViolation("a decoded CBOR item does not decode the same after re-encoding: \(encoded)")
    }
    guard CBOREncoder.encode(again) == encoded else { throw FuzzViolation("re-encoding is not stable") }
  }

  /// The first byte sets the notification size; the rest is the stream of notifications.
  private static func smpFrames(_ bytes: [UInt8]) throws(FuzzViolation) {
    guard let first = bytes.first else { return }
    let size = 1 + Int(first % 64)
    var reassembler = SMPReassembler(maximumBodyLength: 512)
    for start in stride(from: 1, to: bytes.count, by: size) {
      let (frames, _) = reassembler.append(Array(bytes[start..<min(start + size, bytes.count)]))
      guard reassembler.pendingCount <= SMPHeader.size + 512 + size else {
        throw FuzzViolation("the buffer outgrew its bound")
      }
      for frame in frames {
        guard frame.body.count == Int(frame.header.length) else {
          throw FuzzViolation("a frame's body is not its length")
        }
        guard (try? SMPHeader(decoding: frame.header.bytes)) == frame.header else {
          throw FuzzViolation("a header does not decode back the same")
        }
        guard frame.fragments(maximumWriteLength: size).flatMap({ $0 }) == frame.bytes else {
          throw FuzzViolation("fragments do not join back into the frame")
        }
        _ = try? CBORDecoder().decode(frame.body)
      }
    }
  }

  private static func dbusMessage(_ bytes: [UInt8]) throws(FuzzViolation) {
    _ = try? DBusType.parse(String(decoding: bytes.prefix(300), as: UTF8.self))
    _ = try? DBusMessage.frameLength(bytes, limit: 1 << 20)
    guard let message = try? DBusMessage.decode(bytes) else { return }
    _ = BlueZSignal(message)
    _ = BlueZSignal.managedObjects(message)
    // Compared as bytes: a NaN double is not equal to itself as a value.
    let encoded = message.encoded()
    guard let again = try? DBusMessage.decode(encoded) else {
      throw FuzzViolation("a decoded D-Bus message does not decode after re-encoding")
    }
    guard again.encoded() == encoded else { throw FuzzViolation("the D-Bus round trip changed the message") }
  }

  private static func transportRecord(_ bytes: [UInt8]) throws(FuzzViolation) {
    _ = try? TransportRecord.read(Data(bytes))
    for line in bytes.split(separator: UInt8(ascii: "\n")).prefix(64) {
      guard let record = try? TransportRecord(line: String(decoding: line, as: UTF8.self)) else { continue }
      // Compared as lines: a NaN progress is not equal to itself as a value.
      let written = record.line
      guard let again = try? TransportRecord(line: written), again.line == written else {
        throw FuzzViolation("a transport record does not read back as it was written: \(written)")
      }
    }
  }

  /// The first byte picks the body limit and the second how the rest, a server's answer, is cut into
  /// reads. The answer read whole, read so cut and read a byte at a time is the same; a body it returns
  /// is no larger than the limit or the input, and served again with a Content-Length reads back the
  /// same; a refusal is a catalog error.
  private static func httpResponse(_ bytes: [UInt8]) throws(FuzzViolation) {
    guard bytes.count >= 2 else { return }
    let limits = [0, 1, 2, 16, 100, 1_000, 4_096, 1 << 20]
    let limit = limits[Int(bytes[0] % 8)]
    let answer = Array(bytes.dropFirst(2))
    let errors = FetchErrors(url: URL(fileURLWithPath: "/fuzz/answer"))
    func read(_ source: HTTPByteSlices) -> Result<BoundedBody, ReaderError> {
      var reader = HTTPResponseReader(source: source, errors: errors)
      return Result { () throws(ReaderError) in try reader.readResponse(limit: limit) }
    }
    let whole = read(HTTPByteSlices([answer]))
    let cut = read(HTTPByteSlices(answer, cutEvery: [1 + Int(bytes[1] % 16), 1 + Int(bytes[1] / 16) * 509]))
    let single = read(HTTPByteSlices(answer, cutEvery: [1]))
    guard cut == whole, single == whole else {
      throw FuzzViolation("the answer depends on how it is cut: \(whole), \(cut), \(single)")
    }
    switch whole {
    case .success(.complete(let body)):
      guard body.count <= limit, body.count <= answer.count else {
        throw FuzzViolation("a \(body.count)-byte body from \(answer.count) bytes with a limit of \(limit)")
      }
      let again = Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + Array(body)
      guard read(HTTPByteSlices([again])) == .success(.complete(body)) else {
        throw FuzzViolation("a body served again with its length does not read back the same")
      }
    case .success(.exceeded(let bound)):
      guard bound == limit else { throw FuzzViolation("exceeded \(bound), not the limit \(limit)") }
    case .failure(let error):
      guard error.code == .updateCatalogInvalid || error.code == .updateCatalogUnavailable else {
        throw FuzzViolation("an answer in memory failed with \(error)")
      }
    }
  }

  /// Every record `NFCRadioRecord.parse` reads is written and read back the same.
  private static func nfcRecording(_ bytes: [UInt8]) throws(FuzzViolation) {
    guard let records = try? NFCRadioRecord.parse(String(decoding: bytes, as: UTF8.self)) else { return }
    for record in records {
      guard (try? NFCRadioRecord.parse(record.jsonLine)) == [record] else {
        throw FuzzViolation("an NFC record does not read back as it was written: \(record.jsonLine)")
      }
    }
  }
}

/// A property a fuzz harness checks, broken by an input.
public struct FuzzViolation: Error, CustomStringConvertible, Sendable {
  /// What went wrong, with the values involved.
  public let description: String

  init(_ description: String) { self.description = description }
}
