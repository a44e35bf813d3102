import Foundation

#if canImport(BlueZ)
  import BlueZ
#endif

extension Terminal {
  #if canImport(BlueZ)
    /// A terminal for real Bluetooth LE readers through BlueZ (`bluetoothd`) on the D-Bus system bus.
    ///
    /// Opens the bus now (within a second): `DBUS_SYSTEM_BUS_ADDRESS`, else the well-known socket. The
    /// process needs access to `bluetoothd` (root, membership of the `bluetooth` group, or a polkit
    /// rule, as the distribution sets it up). Readers are found by the service UUIDs of `configuration`
    /// (by default the MCUmgr SMP service) and named by their advertised name unless it maps them;
    /// see `BlueZConfiguration`. Reboots and software updates go to the reader over MCUmgr's SMP
    /// (`SMPReaderLink`): an update's image is the MCUboot image the catalog names. Everything runs on a
    /// `LiveScheduler` of its own.
    /// - Parameters:
    ///   - adapter: the adapter to use (`hci0`); nil: the configuration's, else the first one.
    ///   - delegateExecutor: where delegates and completions run; the main actor by default.
    /// - Throws: `bluetoothUnsupported`, with `context["missing"]` naming what is missing: `bus`,
    ///   `bluetoothd` or `adapter`.
    public convenience init(
      bluezAdapter adapter: String?, configuration: BlueZConfiguration = BlueZConfiguration(),
      store: any ReaderStore = Terminal.platformStore(), updateCatalog: (any UpdateCatalog)? = nil,
      delegateExecutor: DelegateExecutor = .mainActor
    ) throws(ReaderError) {
      var configuration = configuration
      if let adapter { configuration.adapterName = adapter }
      let scheduler = LiveScheduler(label: "ReaderKit.BlueZ")
      let central = try BlueZCentral.open(
        configuration: configuration, scheduler: scheduler, sha256: { SHA256Checksum.compute($0) })
      self.init(
        central: central, readerLink: central, scheduler: scheduler, store: store, delegateExecutor: delegateExecutor,
        updateCatalog: updateCatalog)
    }
  #endif

  /// The platform's backend for real readers on `scheduler`, if it is there now.
  static func realBackend(scheduler: any Scheduler) -> (central: any BluetoothCentral, link: any ReaderLink)? {
    #if canImport(BlueZ)
      guard let central = try? BlueZCentral.open(scheduler: scheduler, sha256: { SHA256Checksum.compute($0) }) else {
        return nil
      }
      return (central, central)
    #else
      return nil
    #endif
  }
}
