import BlueZ
import DBus
import Foundation
import NFCKit
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
  /// A D-Bus message from the bus, with a decode/encode round trip, read as a BlueZ signal and as a
  /// `GetManagedObjects` reply; the same bytes as a signature.
  case dbusMessage

  /// Runs the harness on one input.
  public func run(_ bytes: [UInt8]) {
    switch self {
    case .ndef: Self.ndef(bytes)
    case .storeRecord: Self.storeRecord(bytes)
    case .jsonSyntax: _ = JSONSyntax.firstErrorOffset(in: bytes)
    case .manifest: Self.manifest(bytes)
    case .dbusMessage: Self.dbusMessage(bytes)
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

  private static func dbusMessage(_ bytes: [UInt8]) {
    _ = try? DBusType.parse(String(decoding: bytes.prefix(300), as: UTF8.self))
    _ = try? DBusMessage.frameLength(bytes, limit: 1 << 20)
    guard let message = try? DBusMessage.decode(bytes) else { return }
    _ = BlueZSignal(message)
    _ = BlueZSignal.managedObjects(message)
    // Compared as bytes: a NaN double is not equal to itself as a value.
    let encoded = message.encoded()
    guard let again = try? DBusMessage.decode(encoded) else {
      fatalError("a decoded D-Bus message does not decode after re-encoding")
    }
    guard again.encoded() == encoded else { fatalError("the D-Bus round trip changed the message") }
  }

  private static func manifest(_ bytes: [UInt8]) {
    let url = URL(fileURLWithPath: "/fuzz/manifest.json")
    _ = try? UpdateManifest.parse(Data(bytes), url: url, imageSchemes: ["file", "http", "https"])
  }
}
