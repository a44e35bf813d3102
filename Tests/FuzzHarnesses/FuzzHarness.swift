import Foundation
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
  /// The JSON syntax checker that explains refused records and manifests.
  case jsonSyntax
  /// The update manifest parser.
  case manifest
  /// The answers of an NFC tag behind a PC/SC reader: the Type 4 and Type 2 procedures fed the input
  /// as a tag's responses, and the Type 2 TLV and Type 4 capability container parsers on it directly.
  case tagResponses

  /// Runs the harness on one input.
  public func run(_ bytes: [UInt8]) {
    switch self {
    case .ndef: Self.ndef(bytes)
    case .storeRecord: Self.storeRecord(bytes)
    case .jsonSyntax: _ = JSONSyntax.firstErrorOffset(in: bytes)
    case .manifest: Self.manifest(bytes)
    case .tagResponses: Self.tagResponses(bytes)
    }
  }

  /// The harness named by `READERKIT_FUZZ` (or `name`).
  public static func named(_ name: String?) -> FuzzHarness? {
    name.flatMap(FuzzHarness.init(rawValue:))
  }

  private static func ndef(_ bytes: [UInt8]) {
    let options = NDEFDecodingOptions()
    guard let message = try? NDEFDecoder(options: options).decode(bytes) else { return }
    for record in message.records {
      _ = try? TextRecord(record)
      _ = try? URIRecord(record)
      _ = try? SmartPosterRecord(record, options: options)
    }
    let encoded = NDEFEncoder().encode(message)
    guard let again = try? NDEFDecoder(options: options).decode(encoded) else {
      fatalError("a decoded message does not decode after re-encoding: \(encoded)")
    }
    guard again == message else { fatalError("the round trip changed the message") }
  }

  private static func storeRecord(_ bytes: [UInt8]) {
    switch SavedReaderRecord.classify(bytes, context: [:]) {
    case .record(let reader):
      guard let encoded = try? SavedReaderRecord.encode(reader, path: "fuzz"),
        case .record(let again) = SavedReaderRecord.classify(encoded, context: [:]), again == reader
      else { fatalError("a record that loads does not save and load back the same") }
    case .missing, .corrupt:
      break
    }
  }

  /// The first byte picks the operation and the tag family; the rest is the tag's answers, each a length
  /// byte and that many bytes. A procedure ends, or runs out of answers, without asking for more than
  /// one command per answer; a message it reads is never larger than the input.
  private static func tagResponses(_ bytes: [UInt8]) {
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
      fatalError("a \(message.count)-byte message read from \(bytes.count) bytes of answers")
    }
    let area = Array(bytes.dropFirst())
    if case .ndef(_, let value, let length, _) = Type2TLVScan.scan(area, size: area.count),
      value + length > area.count
    {
      fatalError("an NDEF TLV past the data area was accepted")
    }
    if let container = try? Type4CapabilityContainer(area), !(1...0xFFFC).contains(container.capacity) {
      fatalError("a capability container with capacity \(container.capacity) was accepted")
    }
  }

  private static func manifest(_ bytes: [UInt8]) {
    let url = URL(fileURLWithPath: "/fuzz/manifest.json")
    _ = try? UpdateManifest.parse(Data(bytes), url: url, imageSchemes: ["file", "http", "https"])
  }
}
