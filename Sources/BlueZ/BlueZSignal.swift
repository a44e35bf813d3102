import DBus

/// The properties of one interface of one object, by name.
public typealias BlueZProperties = [String: DBusValue]
/// An object's interfaces and their properties, by interface name.
public typealias BlueZInterfaces = [String: BlueZProperties]
/// Objects by path, as `GetManagedObjects` returns them.
public typealias BlueZObjects = [String: BlueZInterfaces]

/// What `bluetoothd` (and the bus about it) tells a client, decoded from a D-Bus message.
///
/// `init?(_:)` is pure and total: a message of another kind, or one whose body does not have the
/// signature its member requires, gives `nil` (the peer is untrusted; nothing traps).
public enum BlueZSignal: Sendable, Hashable {
  /// `ObjectManager.InterfacesAdded`: an object appeared, or gained interfaces.
  case interfacesAdded(path: String, interfaces: BlueZInterfaces)
  /// `ObjectManager.InterfacesRemoved`: an object lost interfaces (all of them: it is gone).
  case interfacesRemoved(path: String, interfaces: [String])
  /// `Properties.PropertiesChanged` on an object's interface.
  case propertiesChanged(path: String, interface: String, changed: BlueZProperties, invalidated: [String])
  /// `Device1.Disconnected(reason, message)` (BlueZ 5.82 and later): why a link ended.
  case deviceDisconnected(path: String, reason: String, message: String)
  /// The bus's `NameOwnerChanged` for `org.bluez`: `bluetoothd` left (`hasOwner` false) or arrived.
  case serviceOwnerChanged(hasOwner: Bool)

  /// The signal a message carries, if it is one of these.
  public init?(_ message: DBusMessage) {
    guard message.kind == .signal, let path = message.path, let member = message.member else { return nil }
    let body = message.body
    switch (message.interface, member) {
    case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
      guard body.count == 2, case .objectPath(let object) = body[0], let interfaces = Self.interfaces(body[1]) else {
        return nil
      }
      self = .interfacesAdded(path: object, interfaces: interfaces)
    case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
      guard body.count == 2, case .objectPath(let object) = body[0], let names = body[1].stringArray else {
        return nil
      }
      self = .interfacesRemoved(path: object, interfaces: names)
    case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
      guard body.count == 3, case .string(let interface) = body[0], let changed = body[1].dictionary,
        let invalidated = body[2].stringArray
      else { return nil }
      self = .propertiesChanged(path: path, interface: interface, changed: changed, invalidated: invalidated)
    case ("org.bluez.Device1", "Disconnected"):
      guard body.count == 2, case .string(let reason) = body[0], case .string(let text) = body[1] else { return nil }
      self = .deviceDisconnected(path: path, reason: reason, message: text)
    case ("org.freedesktop.DBus", "NameOwnerChanged"):
      guard body.count == 3, body[0].string == "org.bluez", let owner = body[2].string else { return nil }
      self = .serviceOwnerChanged(hasOwner: !owner.isEmpty)
    default:
      return nil
    }
  }

  /// An `a{sa{sv}}` value as interfaces and properties; `nil` for another shape.
  static func interfaces(_ value: DBusValue) -> BlueZInterfaces? {
    guard let byInterface = value.dictionary else { return nil }
    var result: BlueZInterfaces = [:]
    for (name, properties) in byInterface {
      guard let properties = properties.dictionary else { return nil }
      result[name] = properties
    }
    return result
  }

  /// A `GetManagedObjects` reply (`a{oa{sa{sv}}}`) as objects; `nil` for another shape.
  public static func managedObjects(_ reply: DBusMessage) -> BlueZObjects? {
    guard reply.body.count == 1, case .array(.dictEntry(key: .objectPath, value: _), let entries) = reply.body[0] else {
      return nil
    }
    var objects: BlueZObjects = [:]
    for case .dictEntry(.objectPath(let path), let value) in entries {
      guard let interfaces = interfaces(value) else { return nil }
      objects[path] = interfaces
    }
    return objects
  }
}
