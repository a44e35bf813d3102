/// What a connected reader says about itself in the Bluetooth Device Information Service (DIS), read
/// over GATT after the link comes up and before the connect completes.
///
/// Each value is the characteristic's UTF-8 string as the reader holds it (NULs and surrounding spaces
/// dropped); `nil` when the reader does not expose it, the read failed, or the value is not a valid
/// UTF-8 string of at most `maximumLength` bytes without control characters. None of this ever fails a
/// connect. `Reader.serialNumber` is not taken from here: it stays the identity discovery gave the
/// reader (its advertised name, or the configured mapping), so that reconnection and the saved reader
/// keep matching; `serialNumber` here is what the reader's DIS reports, which may differ.
public struct DeviceInformation: Sendable, Hashable, Codable {
  /// Serial Number String (0x2A25).
  public var serialNumber: String?
  /// Model Number String (0x2A24).
  public var modelNumber: String?
  /// Firmware Revision String (0x2A26).
  public var firmwareRevision: String?
  /// Hardware Revision String (0x2A27).
  public var hardwareRevision: String?
  /// Manufacturer Name String (0x2A29).
  public var manufacturerName: String?

  /// The longest value kept, in UTF-8 bytes; a longer one is left out.
  public static let maximumLength = 64

  /// Creates a value.
  public init(
    serialNumber: String? = nil, modelNumber: String? = nil, firmwareRevision: String? = nil,
    hardwareRevision: String? = nil, manufacturerName: String? = nil
  ) {
    self.serialNumber = serialNumber
    self.modelNumber = modelNumber
    self.firmwareRevision = firmwareRevision
    self.hardwareRevision = hardwareRevision
    self.manufacturerName = manufacturerName
  }

  /// Whether no value is known.
  public var isEmpty: Bool {
    serialNumber == nil && modelNumber == nil && firmwareRevision == nil && hardwareRevision == nil
      && manufacturerName == nil
  }

  /// A DIS string from the bytes of its characteristic: valid UTF-8, at most `maximumLength` bytes, NULs
  /// (padding) and surrounding spaces dropped, no other control characters (a tab is one); `nil` otherwise or if empty.
  public static func text(_ bytes: [UInt8]) -> String? {
    guard bytes.count <= maximumLength, let decoded = String(validating: bytes, as: UTF8.self) else { return nil }
    var scalars = Substring(decoded).unicodeScalars.filter { $0 != "\0" }
    guard !scalars.contains(where: { $0.properties.generalCategory == .control }) else { return nil }
    while scalars.first == " " { scalars.removeFirst() }
    while scalars.last == " " { scalars.removeLast() }
    return scalars.isEmpty ? nil : String(String.UnicodeScalarView(scalars))
  }
}
