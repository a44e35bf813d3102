import ReaderCore

/// The periodic report of the readers present while scanning: BlueZ is silent about a reader whose
/// advertisement does not change, and about a reader that is connected.
extension BlueZCentralStateMachine {
  /// The refresh timer fired: readers heard within `vanishAfter` are reported again, the others
  /// forgotten; readers BlueZ holds connected without a link of ours are reported too.
  mutating func refresh(now: Duration) -> [Action] {
    guard isScanning else { return [] }
    var actions: [Action] = []
    for path in lastSeen.keys.sorted() {
      guard let seen = lastSeen[path], now - seen <= configuration.vanishAfter, let serial = serialByPath[path],
        let properties = tree.properties(path, BlueZObjectTree.device),
        let advertisement = advertisement(serial, BlueZDeviceFacts(properties))
      else {
        lastSeen[path] = nil
        continue
      }
      actions.append(.emit(.advertisement(advertisement)))
    }
    return actions + connectedElsewhere()
  }

  /// Readers BlueZ holds connected without a link of ours — left connected by an earlier run of the app
  /// (BlueZ keeps a link when the process that opened it exits) or opened by another program — do not
  /// advertise, so they are reported on each refresh instead, with their RSSI if BlueZ still has one and
  /// otherwise `-127` ("not available" in HCI, so they sort last). Connecting to one takes the link over
  /// (`Connect` answers `AlreadyConnected`).
  private func connectedElsewhere() -> [Action] {
    serialByPath.keys.sorted().compactMap { path in
      guard let serial = serialByPath[path], links[serial] == nil,
        let properties = tree.properties(path, BlueZObjectTree.device)
      else { return nil }
      var facts = BlueZDeviceFacts(properties)
      guard facts.connected, isReader(path, facts) else { return nil }
      facts.rssi = facts.rssi ?? -127
      return advertisement(serial, facts).map { .emit(.advertisement($0)) }
    }
  }
}
