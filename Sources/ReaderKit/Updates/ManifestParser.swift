import Foundation
import ReaderCore

/// Turns manifest bytes into an `UpdateManifest`, naming the field and value of the first thing wrong.
struct ManifestParser {
  /// Where the manifest came from.
  let url: URL
  /// The URL schemes an image may have.
  let imageSchemes: Set<String>
  /// The largest manifest accepted, in bytes.
  let maximumSize: Int

  func parse(_ bytes: Data) throws(ReaderError) -> UpdateManifest {
    let root = try json(bytes)
    let members = try object(root, at: "")
    let version = try integer(members["manifestVersion"], at: "manifestVersion")
    guard version == UpdateManifest.formatVersion else {
      throw invalid(
        "manifestVersion", members["manifestVersion"],
        "is \(version): this ReaderKit reads manifest version \(UpdateManifest.formatVersion) only")
    }
    let list = try array(members["releases"], at: "releases")
    var releases: [UpdateRelease] = []
    releases.reserveCapacity(list.count)
    var claims = Claims()
    for (index, element) in list.enumerated() {
      let release = try self.release(element, at: "releases[\(index)]")
      try claims.claim(release, index: index, parser: self)
      releases.append(release)
    }
    return UpdateManifest(releases: releases)
  }

  // MARK: - JSON

  /// Checks the size, nesting and syntax, then decodes the bytes into a tree.
  /// The error for a manifest over `maximumSize` bytes.
  func tooLarge() -> ReaderError {
    failure("the manifest is larger than \(maximumSize) bytes", ["limit": "\(maximumSize)"])
  }

  /// The deepest nesting of arrays and objects a manifest may have; a real one has 4 levels.
  static let maximumDepth = 16

  private func json(_ manifestBytes: Data) throws(ReaderError) -> JSONValue {
    guard manifestBytes.count <= maximumSize else { throw tooLarge() }
    var bytes = manifestBytes
    // A UTF-8 byte-order mark, which editors on some systems write, is not JSON but says nothing
    // wrong (RFC 8259 §8.1 lets a parser ignore it): read as white space, offsets stay the file's.
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.replaceSubrange(0..<3, with: [0x20, 0x20, 0x20]) }
    do {
      return try JSONReader.read(
        bytes, limits: JSONReader.Limits(maximumSize: maximumSize, maximumDepth: Self.maximumDepth))
    } catch {
      let offset = error.offset
      if case .tooDeep = error.kind {
        throw failure(
          "the manifest nests arrays and objects deeper than \(Self.maximumDepth) levels (at byte \(offset))",
          ["offset": "\(offset)"])
      }
      throw failure(
        "the manifest is not valid JSON (error at byte \(offset)): \(error.reason)", ["offset": "\(offset)"])
    }
  }

  // MARK: - One release

  private func release(_ value: JSONValue, at path: String) throws(ReaderError) -> UpdateRelease {
    let members = try object(value, at: path)
    func field(_ name: String) -> (String, JSONValue?) { ("\(path).\(name)", members[name]) }

    let (typePath, typeValue) = field("deviceType")
    guard let deviceType = DeviceType(rawValue: try string(typeValue, at: typePath)) else {
      throw invalid(
        typePath, typeValue,
        "is not a device type (\(DeviceType.allCases.map(\.rawValue).joined(separator: ", ")), or model:<name>)")
    }
    let locations = try self.locations(field("locations"))
    let (versionPath, versionValue) = field("version")
    let version: SoftwareVersion
    do {
      version = try SoftwareVersion(try string(versionValue, at: versionPath))
    } catch  where error.code == .invalidSoftwareVersion {
      throw invalid(versionPath, versionValue, "is not a software version: \(error.context["reason"] ?? "")")
    }
    let releasedAt = try date(field("releasedAt"))
    let requiredAt = try date(field("requiredAt"))
    let (expiresPath, expiresValue) = field("expiresAt")
    var expiresAt: Date?
    if let expiresValue, expiresValue != .null {
      let date = try date((expiresPath, expiresValue))
      guard date > releasedAt else { throw invalid(expiresPath, expiresValue, "is not later than releasedAt") }
      expiresAt = date
    }
    let components = try self.components(field("components"))
    let (estimatePath, estimateValue) = field("durationEstimate")
    guard let estimate = UpdateTimeEstimate(rawValue: try string(estimateValue, at: estimatePath)) else {
      throw invalid(
        estimatePath, estimateValue,
        "is not a duration estimate (\(UpdateTimeEstimate.allCases.map(\.rawValue).joined(separator: ", ")))")
    }
    let image = try self.image(field("image"))
    return UpdateRelease(
      deviceType: deviceType, locations: locations, version: version, releasedAt: releasedAt, requiredAt: requiredAt,
      expiresAt: expiresAt, components: components, durationEstimate: estimate, image: image)
  }

  private func locations(_ field: (String, JSONValue?)) throws(ReaderError) -> UpdateRelease.Locations {
    let (path, value) = field
    if case .string("all") = value { return .all }
    guard case .array(let elements)? = value else {
      guard let value else { throw missing(path) }
      throw invalid(path, value, "is neither \"all\" nor a list of location ids")
    }
    guard !elements.isEmpty else { throw invalid(path, value, "is an empty list; use \"all\" for every location") }
    var ids: Set<String> = []
    for (index, element) in elements.enumerated() {
      let id = try string(element, at: "\(path)[\(index)]")
      guard !id.isEmpty else { throw invalid("\(path)[\(index)]", element, "is an empty location id") }
      ids.insert(id)
    }
    return .only(ids)
  }

  private func components(_ field: (String, JSONValue?)) throws(ReaderError) -> UpdateComponent {
    let (path, value) = field
    let elements = try array(value, at: path)
    guard !elements.isEmpty else { throw invalid(path, value, "is empty; an update replaces at least one component") }
    var components: UpdateComponent = []
    for (index, element) in elements.enumerated() {
      let name = try string(element, at: "\(path)[\(index)]")
      guard let component = UpdateComponent(name: name) else {
        throw invalid(
          "\(path)[\(index)]", element,
          "is not an update component (\(UpdateComponent.named.map(\.name).joined(separator: ", ")))")
      }
      components.insert(component)
    }
    return components
  }

  private func image(_ field: (String, JSONValue?)) throws(ReaderError) -> FirmwareImage {
    let (path, value) = field
    let members = try object(value, at: path)
    let urlValue = members["url"]
    let reference = try string(urlValue, at: "\(path).url")
    guard !reference.isEmpty, let resolved = URL(string: reference, relativeTo: url)?.absoluteURL,
      let scheme = resolved.scheme?.lowercased()
    else {
      throw invalid("\(path).url", urlValue, "is not a URL reference")
    }
    guard imageSchemes.contains(scheme) else {
      throw invalid(
        "\(path).url", urlValue,
        "has the scheme \(scheme); this catalog reads images from \(imageSchemes.sorted().joined(separator: ", "))")
    }
    let size = try integer(members["size"], at: "\(path).size")
    guard size > 0 else { throw invalid("\(path).size", members["size"], "is not a positive number of bytes") }
    guard size <= UpdateManifest.maximumImageSize else {
      throw invalid("\(path).size", members["size"], "is larger than \(UpdateManifest.maximumImageSize) bytes")
    }
    let digestValue = members["sha256"]
    guard let digest = SHA256Checksum(hex: try string(digestValue, at: "\(path).sha256")) else {
      throw invalid("\(path).sha256", digestValue, "is not a SHA-256 digest (64 hexadecimal digits)")
    }
    return FirmwareImage(url: resolved, size: size, sha256: digest)
  }

  // MARK: - Typed fields

  private func object(_ value: JSONValue?, at path: String) throws(ReaderError) -> [String: JSONValue] {
    guard case .object(let members)? = value else { throw wrongType(path, value, "an object") }
    // The reader refuses repeated keys.
    return Dictionary(members, uniquingKeysWith: { $1 })
  }

  private func array(_ value: JSONValue?, at path: String) throws(ReaderError) -> [JSONValue] {
    guard case .array(let elements)? = value else { throw wrongType(path, value, "an array") }
    return elements
  }

  private func string(_ value: JSONValue?, at path: String) throws(ReaderError) -> String {
    guard case .string(let text)? = value else { throw wrongType(path, value, "a string") }
    return text
  }

  /// A whole number that fits an `Int` exactly.
  private func integer(_ value: JSONValue?, at path: String) throws(ReaderError) -> Int {
    let number: Double
    switch value {
    case .int(let integer)?: number = Double(integer)
    case .number(let fractional, _)?: number = fractional
    default: throw wrongType(path, value, "an integer")
    }
    guard number.rounded() == number, let integer = Int(exactly: number), abs(number) < 9e15 else {
      throw invalid(path, value, "is not an integer")
    }
    return integer
  }

  /// An ISO 8601 date-time with a time zone, on a day that exists.
  private func date(_ field: (String, JSONValue?)) throws(ReaderError) -> Date {
    let (path, value) = field
    let text = try string(value, at: path)
    guard Self.hasValidCalendarDay(text), let date = try? Date.ISO8601FormatStyle().parse(text) else {
      throw invalid(path, value, "is not an ISO 8601 date-time with a time zone, e.g. 2026-03-01T00:00:00Z")
    }
    return date
  }

  /// Whether `text` starts with `YYYY-MM-DD` naming a real day: the date parser rolls 30 February over
  /// into March instead of refusing it.
  private static func hasValidCalendarDay(_ text: String) -> Bool {
    let bytes = Array(text.utf8.prefix(10))
    guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return false }
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for byte in bytes[range] {
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
        value = value * 10 + Int(byte - UInt8(ascii: "0"))
      }
      return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), (1...12).contains(month)
    else { return false }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    return (1...days).contains(day)
  }

  // MARK: - Errors

  /// A field that is absent or of the wrong JSON type.
  private func wrongType(_ path: String, _ value: JSONValue?, _ expected: String) -> ReaderError {
    guard let value else { return missing(path) }
    return invalid(path, value, "is \(value.kindName), not \(expected)")
  }

  private func missing(_ path: String) -> ReaderError {
    let name = path.isEmpty ? "the manifest" : "the field \(path)"
    return failure("\(name) is missing", ["field": path])
  }

  /// A field whose value is wrong; `reason` completes "the field <path> …".
  func invalid(_ path: String, _ value: JSONValue?, _ reason: String) -> ReaderError {
    var context = ["field": path]
    if let value { context["value"] = value.quoted }
    let name = path.isEmpty ? "the manifest" : "the field \(path)"
    return failure("\(name) \(reason)", context)
  }

  private func failure(_ reason: String, _ context: [String: String]) -> ReaderError {
    ReaderError(
      .updateCatalogInvalid, "the update manifest at \(url.absoluteString) is invalid: \(reason)",
      context: context.merging(["url": url.absoluteString, "reason": reason]) { $1 })
  }
}

/// Which locations each (model, version) pair already covers, to refuse two releases of one version
/// for the same reader. Work per release is proportional to its own location list.
private struct Claims {
  private struct Key: Hashable {
    var deviceType: DeviceType
    var version: SoftwareVersion
  }

  private struct Claimed {
    /// The release offered at every location, if any.
    var all: Int?
    /// The release claiming each location.
    var byLocation: [String: Int] = [:]
  }

  private var claimed: [Key: Claimed] = [:]

  mutating func claim(_ release: UpdateRelease, index: Int, parser: ManifestParser) throws(ReaderError) {
    let key = Key(deviceType: release.deviceType, version: release.version)
    var entry = claimed[key] ?? Claimed()
    let earlier: Int?
    switch release.locations {
    case .all:
      earlier = entry.all ?? entry.byLocation.values.min()
      entry.all = entry.all ?? index
    case .only(let ids):
      earlier = entry.all ?? ids.compactMap { entry.byLocation[$0] }.min()
      for id in ids where entry.byLocation[id] == nil { entry.byLocation[id] = index }
    }
    if let earlier {
      throw parser.invalid(
        "releases[\(index)].version", .string(release.version.description),
        "repeats the version of releases[\(earlier)] for the same device type and a shared location")
    }
    claimed[key] = entry
  }
}
