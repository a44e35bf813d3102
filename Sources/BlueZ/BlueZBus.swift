import DBus
import ReaderCore

/// Opening the system bus for the BlueZ central: connect and authenticate, subscribe to
/// `bluetoothd`'s signals, then take its object snapshot. Blocking, bounded by `timeout` per step;
/// run it off the scheduler.
package enum BlueZBus {
  /// The signals the central listens to.
  static let matchRules = [
    "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager'",
    "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'",
    "type='signal',sender='org.bluez',interface='org.bluez.Device1',member='Disconnected'",
    "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',"
      + "arg0='org.bluez'",
  ]

  /// An open bus: the connection (not started yet) and `bluetoothd`'s objects, nil when `org.bluez` has
  /// no owner.
  package struct Session: Sendable {
    package var connection: DBusConnection
    package var objects: BlueZObjects?
  }

  /// Opens the system bus named by `environment` (`DBUS_SYSTEM_BUS_ADDRESS`, else the well-known socket).
  /// - Throws: `bluetoothUnsupported` with the D-Bus error as its cause: no bus listens, it refused
  ///   this process, or it did not answer within `timeout`; `context["missing"]` is `permission` when
  ///   the bus's policy denies this process the calls to `org.bluez` (`AccessDenied`).
  package static func open(environment: [String: String], timeout: Duration) throws(ReaderError) -> Session {
    let addresses = DBusAddress.systemBus(environment: environment)
    let connection: DBusConnection
    do {
      connection = try DBusConnection.open(addresses, timeout: timeout)
    } catch {
      throw ReaderError(
        .bluetoothUnsupported, "no D-Bus system bus at \(addresses.map(\.description).joined(separator: ";"))",
        context: ["bus": addresses.first?.description ?? ""], cause: .dbus(name: error.name, message: error.message))
    }
    do throws(DBusError) {
      for rule in matchRules {
        _ = try connection.call(bus("AddMatch", [.string(rule)]), timeout: timeout)
      }
      let owner = try connection.call(bus("NameHasOwner", [.string("org.bluez")]), timeout: timeout)
      guard owner.body.first?.bool == true else { return Session(connection: connection, objects: nil) }
      let reply = try connection.call(BlueZCall.getManagedObjects.message, timeout: timeout)
      guard let objects = BlueZSignal.managedObjects(reply) else {
        throw DBusError(name: DBusError.invalidMessage, message: "GetManagedObjects answered \(reply.signature)")
      }
      return Session(connection: connection, objects: objects)
    } catch {
      connection.close()
      let cause = ErrorCause.dbus(name: error.name, message: error.message)
      if error.name == DBusError.accessDenied {
        throw ReaderError(
          .bluetoothUnsupported,
          "the system bus does not let this process talk to bluetoothd (run it as root, in the bluetooth group, "
            + "or allow it in a D-Bus policy for org.bluez)", context: ["missing": "permission"], cause: cause)
      }
      throw ReaderError(.bluetoothUnsupported, "the system bus did not answer as expected", context: [:], cause: cause)
    }
  }

  private static func bus(_ member: String, _ body: [DBusValue]) -> DBusMessage {
    .methodCall(
      destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
      member: member, body: body)
  }
}
