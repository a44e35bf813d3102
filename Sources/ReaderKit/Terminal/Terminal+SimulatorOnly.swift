import ReaderCore
import ReaderSimulator

extension Terminal {
  /// A terminal on the built-in simulator and nothing else, as `Terminal.shared` is: simulated readers
  /// come from `world`, and a reader that is not simulated — a discovery without `setSimulated(true)`,
  /// or a saved record an app wrote for real hardware (`"simulated": false`) — fails with
  /// `bluetoothUnsupported` instead of being looked for among the simulated ones.
  ///
  /// For tools that drive the simulator (`readerctl`), which share the platform's store with apps.
  package convenience init(
    simulatorOnly world: SimulatedBluetoothCentral, scheduler: any Scheduler, store: any ReaderStore, seed: UInt64,
    updateCatalog: (any UpdateCatalog)? = nil
  ) {
    let updates = TerminalStateMachine.UpdateSettings(
      hasCatalog: updateCatalog != nil, policy: UpdatePolicy(), checkInterval: .seconds(3600),
      epoch: scheduler.epoch)
    self.init(
      central: world, readerLink: world, scheduler: scheduler, store: store, updateCatalog: updateCatalog,
      delegateExecutor: scheduler.isDeterministic ? .scheduler : .mainActor,
      machine: TerminalStateMachine(seed: seed, realReadersSupported: false, updates: updates))
  }
}
