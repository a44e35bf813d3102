import DBus

/// A method call the BlueZ central makes on `bluetoothd`, as the state machine asks for it.
package enum BlueZCall: Hashable, Sendable {
  /// `ObjectManager.GetManagedObjects` on `/`.
  case getManagedObjects
  /// `Adapter1.SetDiscoveryFilter`: LE only, these service UUIDs (none: any), `DuplicateData` on so
  /// every advertisement updates the properties.
  case setDiscoveryFilter(adapter: String, uuids: [String])
  /// `Adapter1.StartDiscovery`.
  case startDiscovery(adapter: String)
  /// `Adapter1.StopDiscovery`.
  case stopDiscovery(adapter: String)
  /// `Device1.Connect`.
  case connect(device: String)
  /// `Device1.Disconnect` (also cancels a pending `Connect`).
  case disconnect(device: String)
  /// `GattCharacteristic1.ReadValue({})`.
  case readValue(characteristic: String)
  /// `GattCharacteristic1.StartNotify`.
  case startNotify(characteristic: String)
  /// `GattCharacteristic1.WriteValue(value, {type: "command"})`: a write without response.
  case writeCommand(characteristic: String, value: [UInt8])

  /// The D-Bus message for the call.
  package var message: DBusMessage {
    switch self {
    case .getManagedObjects:
      call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
    case .setDiscoveryFilter(let adapter, let uuids):
      call(
        adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
        [
          .stringVariantDictionary([
            "Transport": .string("le"), "UUIDs": .stringArray(uuids), "DuplicateData": .boolean(true),
          ])
        ])
    case .startDiscovery(let adapter): call(adapter, "org.bluez.Adapter1", "StartDiscovery")
    case .stopDiscovery(let adapter): call(adapter, "org.bluez.Adapter1", "StopDiscovery")
    case .connect(let device): call(device, "org.bluez.Device1", "Connect")
    case .disconnect(let device): call(device, "org.bluez.Device1", "Disconnect")
    case .readValue(let characteristic):
      call(characteristic, "org.bluez.GattCharacteristic1", "ReadValue", [.stringVariantDictionary([:])])
    case .startNotify(let characteristic): call(characteristic, "org.bluez.GattCharacteristic1", "StartNotify")
    case .writeCommand(let characteristic, let value):
      call(
        characteristic, "org.bluez.GattCharacteristic1", "WriteValue",
        [.bytes(value), .stringVariantDictionary(["type": .string("command")])])
    }
  }

  private func call(_ path: String, _ interface: String, _ member: String, _ body: [DBusValue] = []) -> DBusMessage {
    .methodCall(destination: "org.bluez", path: path, interface: interface, member: member, body: body)
  }
}
