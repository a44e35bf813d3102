extension Reader {
  /// Takes the details a reader reported about itself.
  package mutating func apply(_ info: ReaderInfo) {
    deviceSoftwareVersion = info.deviceSoftwareVersion ?? deviceSoftwareVersion
    batteryLevel = info.batteryLevel ?? batteryLevel
    isCharging = info.isCharging ?? isCharging
    label = info.label ?? label
    deviceInformation = info.deviceInformation ?? deviceInformation
  }
}
