import NFCKit
import ReaderCore
import Testing

/// Round trips on messages drawn at the byte level, written by hand from the NDEF layout (not by
/// `NDEFEncoder`): canonical bytes decode to the drawn fields and re-encode to themselves; the same message
/// written non-canonically (normal layout for short payloads, IL with an empty ID, chunks) decodes to the
/// same message and re-encodes canonically. Each case has its own seed, printed on failure.
@Suite struct NDEFRoundTripTests {
  static let baseSeed: UInt64 = 0x524F_554E_4454_5250
  static let caseCount: UInt64 = 2_000

  /// One logical record as drawn: what the decoder must give back.
  struct Fields: Equatable, CustomStringConvertible {
    var tnf: UInt8
    var type: [UInt8] = []
    var identifier: [UInt8] = []
    var payload: [UInt8] = []

    var description: String {
      "{tnf \(tnf) type \(NDEFBytes(type).hex) id \(NDEFBytes(identifier).hex) payload \(NDEFBytes(payload).hex)}"
    }

    init(tnf: UInt8, type: [UInt8] = [], identifier: [UInt8] = [], payload: [UInt8] = []) {
      self.tnf = tnf
      self.type = type
      self.identifier = identifier
      self.payload = payload
    }

    init(_ record: NDEFRecord) {
      self.init(
        tnf: record.typeNameFormat.rawValue, type: record.type.array, identifier: record.identifier.array,
        payload: record.payload.array)
    }
  }

  // MARK: Drawing records

  static func payload(_ random: inout SeededRandom) -> [UInt8] {
    random.bytes([0, 1, 7, 255, 256, 300, Int.random(in: 0...600, using: &random)].randomElement(using: &random)!)
  }

  static func identifier(_ random: inout SeededRandom) -> [UInt8] {
    Bool.random(using: &random) ? [] : random.bytes(Int.random(in: 1...255, using: &random))
  }

  static func ascii(_ random: inout SeededRandom, count: Int) -> [UInt8] {
    (0..<count).map { _ in UInt8.random(in: 0x21...0x7E, using: &random) }
  }

  /// A record of any kind; Smart Posters (at `depth` < 2) hold one URI record and some others.
  static func fields(_ random: inout SeededRandom, depth: Int = 0) -> Fields {
    let id = identifier(&random)
    switch Int.random(in: 0..<10, using: &random) {
    case 0:
      return Fields(tnf: 0)
    case 1:
      let language = ascii(&random, count: Int.random(in: 1...63, using: &random))
      let text = ["", "hello", "Grüße", "日本語 🎉", String(repeating: "long ", count: 60)].randomElement(using: &random)!
      return Fields(
        tnf: 1, type: [0x54], identifier: id, payload: [UInt8(language.count)] + language + Array(text.utf8))
    case 2:
      return uri(&random, identifier: id)
    case 3 where depth < 2:
      var nested = [uri(&random, identifier: [])]
      for _ in 0..<Int.random(in: 0...2, using: &random) { nested.append(fields(&random, depth: depth + 1)) }
      // Exactly one URI record and no second title in a language: keep only other kinds after the URI.
      nested = [nested[0]] + nested.dropFirst().filter { $0.tnf != 1 }
      return Fields(tnf: 1, type: Array("Sp".utf8), identifier: id, payload: canonicalBytes(nested))
    case 4:
      // A well-known type NFCKit does not interpret.
      return Fields(tnf: 1, type: Array("Hs".utf8), identifier: id, payload: payload(&random))
    case 5:
      return Fields(tnf: 2, type: Array("application/octet-stream".utf8), identifier: id, payload: payload(&random))
    case 6:
      return Fields(tnf: 3, type: Array("https://example.com/t".utf8), identifier: id, payload: payload(&random))
    case 7:
      return Fields(tnf: 4, type: Array("example.com:t".utf8), identifier: id, payload: payload(&random))
    case 8:
      return Fields(
        tnf: 7, type: random.bytes(Int.random(in: 0...3, using: &random)), identifier: id, payload: payload(&random))
    default:
      return Fields(tnf: 5, identifier: id, payload: payload(&random))
    }
  }

  static func uri(_ random: inout SeededRandom, identifier: [UInt8]) -> Fields {
    let code = UInt8.random(in: 0...0x23, using: &random)
    return Fields(
      tnf: 1, type: [0x55], identifier: identifier,
      payload: [code] + ascii(&random, count: Int.random(in: 0...40, using: &random)))
  }

  static func message(_ random: inout SeededRandom) -> [Fields] {
    (0..<Int.random(in: 1...5, using: &random)).map { _ in fields(&random) }
  }

  // MARK: Writing messages by hand

  /// The canonical bytes: MB on the first record, ME on the last, SR exactly for payloads under 256 bytes,
  /// IL exactly when there is an ID, no chunks.
  static func canonicalBytes(_ records: [Fields]) -> [UInt8] {
    records.enumerated().flatMap { index, record in
      wireRecord(
        tnf: record.tnf, type: record.type, identifier: record.identifier, payload: record.payload, mb: index == 0,
        me: index == records.count - 1)
    }
  }

  /// The same message written with every liberty the specification allows.
  static func nonCanonicalBytes(_ records: [Fields], _ random: inout SeededRandom) -> [UInt8] {
    var bytes: [UInt8] = []
    for (index, record) in records.enumerated() {
      let first = index == 0
      let last = index == records.count - 1
      // An empty record (TNF 0) cannot be chunked; any other record may be split at random points.
      var cuts: [Int] = []
      if record.tnf != 0 && Bool.random(using: &random) {
        cuts = (0..<Int.random(in: 1...3, using: &random)).map { _ in
          Int.random(in: 0...record.payload.count, using: &random)
        }.sorted()
      }
      let bounds = [0] + cuts + [record.payload.count]
      for chunk in 0..<(bounds.count - 1) {
        let part = Array(record.payload[bounds[chunk]..<bounds[chunk + 1]])
        let isFirst = chunk == 0
        let isLast = chunk == bounds.count - 2
        let short = part.count < 256 ? Bool.random(using: &random) : false
        bytes += wireRecord(
          tnf: isFirst ? record.tnf : 6, type: isFirst ? record.type : [], identifier: isFirst ? record.identifier : [],
          payload: part, mb: first && isFirst, me: last && isLast, cf: !isLast, short: short,
          il: isFirst ? (!record.identifier.isEmpty || Bool.random(using: &random)) : false)
      }
    }
    return bytes
  }

  // MARK: Properties

  @Test func canonicalBytesDecodeToTheirFieldsAndReencodeToThemselves() {
    var failures = 0
    for seed in Self.baseSeed..<(Self.baseSeed + Self.caseCount) where failures < 5 {
      var random = SeededRandom(seed: seed)
      let records = Self.message(&random)
      let bytes = Self.canonicalBytes(records)
      do {
        let message = try NDEFDecoder().decode(bytes)
        let decoded = message.records.map(Fields.init)
        if decoded != records || message.encoded() != bytes {
          failures += 1
          Issue.record("seed \(seed): \(NDEFBytes(bytes).hex) decoded to \(decoded), expected \(records)")
        }
      } catch {
        failures += 1
        Issue.record("seed \(seed): \(NDEFBytes(bytes).hex) does not decode: \(error)")
      }
    }
  }

  @Test func nonCanonicalBytesDecodeToTheSameMessageAndReencodeCanonically() {
    var failures = 0
    var rewrittenCases = 0
    for seed in Self.baseSeed..<(Self.baseSeed + Self.caseCount) where failures < 5 {
      var random = SeededRandom(seed: seed)
      let records = Self.message(&random)
      let canonical = Self.canonicalBytes(records)
      let bytes = Self.nonCanonicalBytes(records, &random)
      if bytes != canonical { rewrittenCases += 1 }
      do {
        let message = try NDEFDecoder().decode(bytes)
        if message.records.map(Fields.init) != records || message.encoded() != canonical {
          failures += 1
          Issue.record("seed \(seed): \(NDEFBytes(bytes).hex) decoded to \(message), expected \(records)")
        }
      } catch {
        failures += 1
        Issue.record("seed \(seed): \(NDEFBytes(bytes).hex) does not decode: \(error)")
      }
    }
    // Most cases must differ from the canonical bytes for the property to mean anything.
    #expect(rewrittenCases > Int(Self.caseCount) / 2, "only \(rewrittenCases) cases were written non-canonically")
  }
}
