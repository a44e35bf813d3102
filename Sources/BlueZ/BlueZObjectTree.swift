import DBus

/// The client's copy of `bluetoothd`'s objects: the `GetManagedObjects` snapshot, kept current by
/// `InterfacesAdded`, `InterfacesRemoved` and `PropertiesChanged`. Pure; every update costs the
/// changed properties only (the nested dictionaries are changed in place, never copied).
struct BlueZObjectTree {
  static let adapter = "org.bluez.Adapter1"
  static let device = "org.bluez.Device1"
  static let characteristic = "org.bluez.GattCharacteristic1"

  private(set) var objects: BlueZObjects = [:]

  mutating func replace(with objects: BlueZObjects) {
    self.objects = objects
  }

  mutating func add(_ path: String, _ interfaces: BlueZInterfaces) {
    for (name, properties) in interfaces {
      objects[path, default: [:]][name, default: [:]].merge(properties) { _, new in new }
    }
  }

  mutating func remove(_ path: String, _ interfaces: [String]) {
    for name in interfaces { objects[path]?[name] = nil }
    if objects[path]?.isEmpty == true { objects[path] = nil }
  }

  /// Applies a change to an object's interface the tree holds; returns whether it did.
  @discardableResult
  mutating func change(_ path: String, _ interface: String, _ changed: BlueZProperties, _ invalidated: [String])
    -> Bool
  {
    guard objects[path]?[interface] != nil else { return false }
    for (key, value) in changed { objects[path]?[interface]?[key] = value }
    for key in invalidated { objects[path]?[interface]?[key] = nil }
    return true
  }

  func properties(_ path: String, _ interface: String) -> BlueZProperties? {
    objects[path]?[interface]
  }

  /// The adapters' paths, sorted.
  var adapterPaths: [String] {
    objects.compactMap { $0.value[Self.adapter] == nil ? nil : $0.key }.sorted()
  }

  /// The GATT characteristics under a device, as (path, lowercased UUID), sorted by path.
  func characteristics(of device: String) -> [(path: String, uuid: String)] {
    let prefix = device + "/"
    return objects.compactMap { path, interfaces -> (String, String)? in
      guard path.hasPrefix(prefix), let uuid = interfaces[Self.characteristic]?["UUID"]?.string else { return nil }
      return (path, uuid.lowercased())
    }.sorted { $0.0 < $1.0 }
  }
}

/// What a `Device1` object's properties say about a device.
struct BlueZDeviceFacts: Equatable {
  var address: String?
  var name: String?
  var alias: String?
  var rssi: Int?
  var uuids: [String]
  var connected: Bool
  var servicesResolved: Bool
  var manufacturerData: [Int: [UInt8]]

  init(_ properties: BlueZProperties) {
    address = properties["Address"]?.string
    name = properties["Name"]?.string
    alias = properties["Alias"]?.string
    rssi = properties["RSSI"]?.int
    uuids = (properties["UUIDs"]?.stringArray ?? []).map { $0.lowercased() }
    connected = properties["Connected"]?.bool ?? false
    servicesResolved = properties["ServicesResolved"]?.bool ?? false
    var data: [Int: [UInt8]] = [:]
    for (company, value) in properties["ManufacturerData"]?.integerDictionary ?? [:] {
      data[company] = value.byteArray
    }
    manufacturerData = data
  }
}

/// What an `Adapter1` object's properties say about the host's radio.
struct BlueZAdapterFacts: Equatable {
  var powered: Bool
  /// `PowerState` (BlueZ 5.60 and later), e.g. `on`, `off-blocked` (rfkill); nil on older BlueZ.
  var powerState: String?
  var discovering: Bool

  init(_ properties: BlueZProperties) {
    powered = properties["Powered"]?.bool ?? false
    powerState = properties["PowerState"]?.string
    discovering = properties["Discovering"]?.bool ?? false
  }

  /// Whether the radio is usable: powered, and not switching off or blocked.
  var isOn: Bool {
    powered && (powerState == nil || powerState == "on")
  }

  /// Whether the radio is going off (links that end now end because of it).
  var isGoingOff: Bool {
    !powered || powerState == "on-disabling" || powerState == "off-blocked"
  }
}
