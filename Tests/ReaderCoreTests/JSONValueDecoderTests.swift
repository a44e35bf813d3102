import Foundation
import Testing

@testable import ReaderCore

@Suite struct JSONValueDecoderTests {
  struct Sample: Codable, Equatable {
    struct Inner: Codable, Equatable {
      var flag: Bool
      var list: [Int8]
    }
    var name: String
    var count: Int
    var ratio: Double
    var date: Date
    var url: URL
    var data: Data
    var inner: Inner
    var optional: String?
    var notes: [String: String]
    var level: Float?
  }

  static let sample = Sample(
    name: "é\"x", count: -3, ratio: 0.1, date: Date(timeIntervalSinceReferenceDate: 1_234.5),
    url: URL(string: "https://example.com/a?b=c")!, data: Data([0, 1, 254]), inner: .init(flag: true, list: [1, -2]),
    optional: nil, notes: ["b": "2", "a": "1"], level: .infinity)

  static func decode<T: Decodable>(_ type: T.Type, _ text: String, floats: Bool = false) throws -> T {
    let value = try JSONReader.read(Array(text.utf8), limits: .init(maximumSize: 1 << 16, maximumDepth: 16))
    let names = JSONValueDecoder.NonConformingFloats(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    return try JSONValueDecoder(nonConformingFloats: floats ? names : nil).decode(type, from: value)
  }

  @Test func readsWhatJSONEncoderWroteAsJSONDecoderDoes() throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
      positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    let text = String(decoding: try encoder.encode(Self.sample), as: UTF8.self)
    #expect(try Self.decode(Sample.self, text, floats: true) == Self.sample)
    let decoder = JSONDecoder()
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(
      positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    #expect(try decoder.decode(Sample.self, from: Data(text.utf8)) == Self.sample)
  }

  static func failure<T: Decodable>(_ type: T.Type, _ text: String) -> DecodingError? {
    do {
      _ = try decode(type, text)
      return nil
    } catch {
      return error as? DecodingError
    }
  }

  @Test func errorsAreDecodingErrorsWithTheCodingPath() throws {
    struct Pair: Decodable {
      var a: Int
      var b: [String]
    }
    func failure(_ text: String) -> DecodingError? { Self.failure(Pair.self, text) }
    guard case .keyNotFound(let key, _)? = failure(#"{"b":[]}"#) else { Issue.record("no keyNotFound"); return }
    #expect(key.stringValue == "a")
    guard case .typeMismatch(_, let context)? = failure(#"{"a":1,"b":["x",2]}"#) else {
      Issue.record("no typeMismatch")
      return
    }
    #expect(context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } == ["b", "1"])
    guard case .valueNotFound? = failure(#"{"a":null,"b":[]}"#) else { Issue.record("no valueNotFound"); return }
    guard case .dataCorrupted(let corrupt)? = failure(#"{"a":1.5,"b":[]}"#) else {
      Issue.record("no dataCorrupted")
      return
    }
    #expect(corrupt.codingPath.map(\.stringValue) == ["a"])
    #expect(try Self.decode(Pair.self, #"{"a":2.0,"b":[],"extra":{}}"#).a == 2)
    guard case .typeMismatch(_, let root)? = failure("[]") else { Issue.record("no typeMismatch at the root"); return }
    #expect(root.codingPath.isEmpty)
  }
}
