/// The terminal's knowledge of nearby readers, and the discoveries (scan or proximity) that report them.
///
/// One machine lives as long as the terminal. It records every advertisement the host hears — while a
/// discovery runs, and while a connect listens for a reader — so it alone knows whether a reader was
/// heard and how long ago (`freshness(of:now:)`). A discovery run reports the readers heard since it
/// started. Reporting rule (scan): every `updateInterval` the readers heard within `stalenessWindow`
/// are put in order by signal strength (strongest first, ties by serial number) and reported only if
/// the list differs from the last report in membership, order or details; a change in signal strength
/// alone that keeps the order is not reported. So a burst of advertisements yields at most one
/// update per interval, and an advertisement costs one lookup (`SerialNumberIndex`) and an update in place:
/// nothing is ordered, copied or reported until the next tick. A tick costs time linear in the readers
/// heard (see `NearestFirstOrder`), and makes a new list only when there is something to report: the last
/// report rearranged in place, where a reader keeps its value (only its signal strength is set) unless it was
/// heard since with other details, so an unchanged reader costs no copy, retain or release.
package struct DiscoveryStateMachine {
  package enum Timer: Hashable, Sendable {
    case tick
    case timeout
    case proximityDetails
  }

  package enum Action: Equatable, Sendable {
    case startScan
    case stopScan
    case arm(Timer, after: Duration)
    case disarm(Timer)
    case report([Reader])
    case flashLEDs(serialNumber: String)
    /// The discovery ended: `nil` is success.
    case finish(ReaderError?)
  }

  /// When a reader was last heard, as a connect needs to know it.
  package enum Freshness: Equatable, Sendable {
    /// Never heard by this terminal.
    case never
    /// Heard within the staleness window: it is advertising now.
    case fresh
    /// Heard, but not within the staleness window.
    case stale
  }

  private struct Sighting {
    var advertisement: Advertisement
    var lastSeen: Duration
  }

  /// Proximity's progress with the reader it picked.
  private enum Pick: Equatable {
    /// No reader picked yet.
    case searching
    /// Reported with its serial number only; details are due.
    case announced(String)
    /// Reported with its details.
    case detailed(String)

    var serialNumber: String? {
      switch self {
      case .searching: nil
      case .announced(let serial), .detailed(let serial): serial
      }
    }
  }

  /// One discovery from start to finish.
  private struct Run {
    var method: DiscoveryMethod
    var simulated: Bool
    var startedAt: Duration
    var lastReport: [Reader]? = nil
    /// The sightings of `lastReport`, in its order (scan only).
    var lastOrder: [Int] = []
    /// The number of the scan's latest report (see `reportedAt`).
    var lastReportNumber: UInt64?
    var foundAny = false
    var pick = Pick.searching
  }

  /// Whether a discovery runs.
  private enum State {
    /// No discovery runs; advertisements heard (while a connect listens) are still recorded.
    case idle
    /// A discovery runs.
    case running(Run)
  }

  private var state = State.idle
  /// Every reader heard, with its latest advertisement, numbered in the order first heard. Kept
  /// outside `state` so that recording an advertisement updates the table in place: a copy per
  /// advertisement would make discovery quadratic. It grows with the number of distinct readers ever
  /// heard, never with time.
  private var sightings: [Sighting] = []
  /// Each serial number's place in `sightings`.
  private var sightingIndex = SerialNumberIndex()
  /// For each sighting, the scan report that last carried it and its place there: a report numbered
  /// `reportNumber` when it was made, so that a later one, or another run's, never matches by mistake.
  private var reportedAt: [(report: UInt64, position: Int)] = []
  /// For each sighting, whether it was heard since the last scan report it is in (or since it was first
  /// heard): only those can have changed details, so a report looks at no other reader's details.
  private var heardSinceReport: [Bool] = []
  private var reportNumber: UInt64 = 0
  /// The scan's report order, and the buffer it is worked out in.
  private var nearestFirst = NearestFirstOrder()
  private var order: [Int] = []
  /// Buffers a report is made with, kept from one report to the next (see `nextReport(_:order:)`).
  private var source: [Int] = []
  private var kept: [Bool] = []
  package let tuning: DiscoveryTuning

  package init(tuning: DiscoveryTuning = DiscoveryTuning()) {
    self.tuning = tuning
  }

  package var isRunning: Bool {
    if case .running = state { return true }
    return false
  }

  /// Whether the running discovery looks for simulated readers (false when none runs).
  package var simulated: Bool {
    if case .running(let run) = state { return run.simulated }
    return false
  }

  /// The readers of the running discovery's latest report.
  package var discoveredReaders: [Reader] {
    if case .running(let run) = state { return run.lastReport ?? [] }
    return []
  }

  /// When `serialNumber` was last heard, relative to the staleness window.
  package func freshness(of serialNumber: String, now: Duration) -> Freshness {
    guard let index = place(of: serialNumber) else { return .never }
    return isFresh(sightings[index], now: now) ? .fresh : .stale
  }

  /// Whether `serialNumber` is advertising now (heard within the staleness window).
  package func isFresh(_ serialNumber: String, now: Duration) -> Bool {
    freshness(of: serialNumber, now: now) == .fresh
  }

  /// Starts a discovery; ignored while one runs. With the radio off it ends at once with
  /// `bluetoothDisabled`.
  package mutating func start(_ method: DiscoveryMethod, simulated: Bool, radioOn: Bool, now: Duration) -> [Action] {
    guard case .idle = state else { return [] }
    guard radioOn else {
      return [.finish(ReaderError(.bluetoothDisabled, "Bluetooth is off; turn it on to discover readers"))]
    }
    state = .running(Run(method: method, simulated: simulated, startedAt: now))
    var actions: [Action] = [.startScan, .arm(.tick, after: tuning.updateInterval)]
    if case .bluetoothScan(let timeout?) = method, timeout > .zero { actions.append(.arm(.timeout, after: timeout)) }
    return actions
  }

  /// Records an advertisement: one update of the sightings table, nothing else.
  package mutating func advertisement(_ advertisement: Advertisement, now: Duration) {
    // Read in place, with nothing else changing: no copy of the table (see `record(_:at:now:)`).
    if let index = sightingIndex.hashedPlace(
      of: advertisement.serialNumber, serial: { sightings[$0].advertisement.serialNumber })
    {
      return record(advertisement, at: index, now: now)
    }
    recordNotHashed(advertisement, now: now)
  }

  /// Records an advertisement of a serial number (as spelt) heard for the first time. Apart from
  /// `advertisement(_:now:)`, which it would otherwise cost a copy of the advertisement on every call.
  @inline(never)
  private mutating func recordNotHashed(_ advertisement: Advertisement, now: Duration) {
    let (index, inserted): (Int, Bool)
    do {
      // A copy of the reference, let go before the table grows: the index changes while it reads them.
      let known = sightings
      (index, inserted) = sightingIndex.placeAfterMiss(of: advertisement.serialNumber, orInsert: known.count) {
        known[$0].advertisement.serialNumber
      }
    }
    guard inserted else { return record(advertisement, at: index, now: now) }
    sightings.append(Sighting(advertisement: advertisement, lastSeen: now))
    reportedAt.append((0, 0))
    heardSinceReport.append(true)
  }

  /// Records an advertisement of the reader heard before at `index`. The latest advertisement is kept, but
  /// most repeat the last one but for the signal strength: then only that is written, in place, which spares a
  /// copy of the advertisement and the release of the one before (retains and releases of all its strings).
  private mutating func record(_ advertisement: Advertisement, at index: Int, now: Duration) {
    sightings.withUnsafeMutableBufferPointer { sightings in
      let sighting = sightings.baseAddress! + index
      if Self.isRepeated(advertisement, of: sighting) {
        sighting.pointee.advertisement.signalStrength = advertisement.signalStrength
      } else {
        Self.replace(&sighting.pointee.advertisement, with: advertisement)
      }
      sighting.pointee.lastSeen = now
    }
    heardSinceReport[index] = true
  }

  /// Keeps `advertisement` in place of `kept`. Apart from `record(_:at:now:)`, which it would otherwise cost a
  /// copy of the advertisement on every call.
  @inline(never)
  private static func replace(_ kept: inout Advertisement, with advertisement: Advertisement) {
    kept = advertisement
  }

  /// Whether `advertisement` carries, to the bit, what the one `sighting` holds carries, but for the signal
  /// strength: so keeping that one with the new signal strength is keeping `advertisement`. Field by field, read
  /// in place: neither advertisement is copied.
  private static func isRepeated(_ advertisement: Advertisement, of sighting: UnsafePointer<Sighting>) -> Bool {
    isIdentical(sighting.pointee.advertisement.deviceType, advertisement.deviceType)
      && sighting.pointee.advertisement.info.batteryLevel?.bitPattern == advertisement.info.batteryLevel?.bitPattern
      && sighting.pointee.advertisement.info.isCharging == advertisement.info.isCharging
      && isIdentical(sighting.pointee.advertisement.serialNumber, advertisement.serialNumber)
      && isIdentical(
        sighting.pointee.advertisement.info.deviceSoftwareVersion, advertisement.info.deviceSoftwareVersion)
      && isIdentical(sighting.pointee.advertisement.info.label, advertisement.info.label)
      && (sighting.pointee.advertisement.info.sharesDeviceInformation(with: advertisement.info)
        || isIdentical(sighting.pointee.advertisement.info.deviceInformation, advertisement.info.deviceInformation))
  }

  /// Whether two values of a two-word type (`String`, `String?`, `DeviceType`) are held the same way: then
  /// they are the same value (a string's bytes when it is small, else the same reference to its bytes), though
  /// the same value may be held otherwise. One comparison, for the copies of one value an advertisement repeats.
  @inline(__always)
  private static func isHeldAlike<Value>(_ a: Value, _ b: Value) -> Bool {
    unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self)
  }

  /// Whether two strings are the same bytes. Not `==`, which holds for canonically equivalent strings too:
  /// the one kept must be the one heard.
  private static func isIdentical(_ a: String?, _ b: String?) -> Bool {
    if isHeldAlike(a, b) { return true }
    guard case .some(let a) = a, case .some(let b) = b else {
      if case .none = a, case .none = b { return true }
      return false
    }
    return a.utf8.elementsEqual(b.utf8)
  }

  /// Whether two models are the same, an unknown one by the bytes of its name (not `==`, which holds for
  /// canonically equivalent names too).
  private static func isIdentical(_ a: DeviceType, _ b: DeviceType) -> Bool {
    if isHeldAlike(a, b) { return true }
    switch (a, b) {
    case (.chipper2X, .chipper2X), (.stripeM2, .stripeM2), (.wisePad3, .wisePad3): return true
    case (.other(let a), .other(let b)): return isIdentical(a, b)
    default: return false
    }
  }

  private static func isIdentical(_ a: DeviceInformation?, _ b: DeviceInformation?) -> Bool {
    // Matched, not compared with `nil` (a generic call, unspecialized here).
    if case .none = a, case .none = b { return true }
    guard case .some(let a) = a, case .some(let b) = b else { return false }
    return isIdentical(a.serialNumber, b.serialNumber) && isIdentical(a.modelNumber, b.modelNumber)
      && isIdentical(a.firmwareRevision, b.firmwareRevision) && isIdentical(a.hardwareRevision, b.hardwareRevision)
      && isIdentical(a.manufacturerName, b.manufacturerName)
  }

  package mutating func timerFired(_ timer: Timer, now: Duration) -> [Action] {
    guard case .running(var run) = state else { return [] }
    state = .idle  // Taken out while it changes, so its collections are not copied.
    switch timer {
    case .tick:
      var actions: [Action]
      switch run.method {
      case .bluetoothScan:
        actions = scanReport(&run, now: now)
      case .bluetoothProximity:
        actions = proximityTick(&run, now: now)
      }
      state = .running(run)
      return actions + [.arm(.tick, after: tuning.updateInterval)]
    case .proximityDetails:
      defer { state = .running(run) }
      guard case .announced(let serial) = run.pick, let index = place(of: serial) else { return [] }
      let sighting = sightings[index]
      run.pick = .detailed(serial)
      // Not through `report(_:into:)`: the second report is promised even when the advertisement
      // carries no details, which would make it look unchanged once signal strength is ignored.
      let readers = [Self.reader(from: sighting.advertisement, simulated: run.simulated, detailed: true)]
      run.lastReport = readers
      return [.report(readers)]
    case .timeout:
      guard case .bluetoothScan(let timeout?) = run.method else {
        state = .running(run)
        return []
      }
      // A reader first heard since the last tick still counts: report the final list, then end.
      let finalReport = scanReport(&run, now: now)
      let error =
        run.foundAny
        ? nil
        : ReaderError(
          .bluetoothScanTimedOut, "no reader was found before the scan timed out",
          context: ["timeout": timeout.contextSeconds])
      return finalReport + stop(error)
    }
  }

  /// Reports at once, as a tick would, the readers the scan heard up to `now`: for a search whose time
  /// is up by its owner's timeout (reconnect at launch), so that a reader recorded since the last tick
  /// still counts, as it does at the scan's own timeout. Nothing when no scan runs.
  package mutating func reportNow(now: Duration) -> [Action] {
    guard case .running(var run) = state, case .bluetoothScan = run.method else { return [] }
    state = .idle  // Taken out while it changes, so its collections are not copied.
    defer { state = .running(run) }
    return scanReport(&run, now: now)
  }

  /// Ends the discovery because it was cancelled (`canceled`), a reader is being connected (`nil`),
  /// or the radio went off. Nothing when none runs.
  package mutating func finish(_ error: ReaderError?) -> [Action] {
    guard case .running = state else { return [] }
    return stop(error)
  }

  // MARK: Helpers

  private mutating func stop(_ error: ReaderError?) -> [Action] {
    state = .idle
    return [.disarm(.tick), .disarm(.timeout), .disarm(.proximityDetails), .stopScan, .finish(error)]
  }

  /// The place of `serialNumber` in `sightings`, if it was heard.
  private func place(of serialNumber: String) -> Int? {
    sightings.withUnsafeBufferPointer { sightings in
      sightingIndex.place(of: serialNumber) { sightings[$0].advertisement.serialNumber }
    }
  }

  /// The smallest step of a `Duration`.
  private static let attosecond = Duration(secondsComponent: 0, attosecondsComponent: 1)

  private func isFresh(_ sighting: Sighting, now: Duration) -> Bool {
    now - sighting.lastSeen < tuning.stalenessWindow
  }

  /// Whether a run may report a sighting: heard since it started, and fresh.
  private func isCandidate(_ sighting: Sighting, of run: Run, now: Duration) -> Bool {
    sighting.lastSeen >= run.startedAt && isFresh(sighting, now: now)
  }

  /// The sightings proximity may pick: candidates of a model it finds.
  private func proximityCandidates(of run: Run, now: Duration) -> [Sighting] {
    sightings.filter {
      isCandidate($0, of: run, now: now) && $0.advertisement.deviceType.supportsProximityDiscovery
    }
  }

  /// A scan's tick: the candidates nearest first, reported if the list differs from the last report
  /// in membership, order or details (signal strength alone does not count).
  private mutating func scanReport(_ run: inout Run, now: Duration) -> [Action] {
    var order = self.order
    self.order = []  // Taken out while it changes, so it is not copied.
    defer { self.order = order }
    let sightings = self.sightings
    // The same test as `isCandidate`, on values: the order is worked out while `nearestFirst` changes.
    // (`now - lastSeen < window` is `lastSeen > now - window`, that is `lastSeen >= now - window + 1 as`, a
    // Duration counting attoseconds: one comparison with a bound made once.)
    let heardFrom = max(run.startedAt, now - tuning.stalenessWindow + Self.attosecond)
    nearestFirst.order(
      count: sightings.count, serial: { sightings[$0].advertisement.serialNumber },
      signal: { sightings[$0].advertisement.signalStrength }, isCandidate: { sightings[$0].lastSeen >= heardFrom },
      into: &order)
    if let previous = run.lastReport {
      // Only a reader heard since the last report can have other details than it has there.
      let unchanged =
        order == run.lastOrder
        && Self.sameDetails(previous, order: order, sightings: sightings, heard: heardSinceReport, run.simulated)
      if unchanged { return [] }
    } else if order.isEmpty {
      return []
    }
    var readers = run.lastReport ?? []
    run.lastReport = nil  // Taken out, so that nothing but `readers` holds it when the app let go of it.
    var (source, kept) = (self.source, self.kept)
    (self.source, self.kept) = ([], [])  // Taken out while they change, so they are not copied.
    Self.rearrange(
      &readers, order: order, lastNumber: run.lastReportNumber, sightings: sightings, reportedAt: reportedAt,
      heard: heardSinceReport, simulated: run.simulated, source: &source, kept: &kept)
    (self.source, self.kept) = (source, kept)
    reportNumber += 1
    let number = reportNumber
    reportedAt.withUnsafeMutableBufferPointer { reportedAt in
      heardSinceReport.withUnsafeMutableBufferPointer { heard in
        for (position, index) in order.enumerated() {
          reportedAt[index] = (number, position)
          heard[index] = false
        }
      }
    }
    run.lastReportNumber = reportNumber
    run.lastReport = readers
    // The report's order is kept, and the last one's buffer becomes the next working buffer: neither is shared.
    swap(&run.lastOrder, &order)
    run.foundAny = run.foundAny || !readers.isEmpty
    return [.report(readers)]
  }

  /// Whether every reader of `report` (in `order`) has the details of its sighting; only those `heard` since
  /// the report are compared, the others cannot have changed.
  private static func sameDetails(
    _ report: [Reader], order: [Int], sightings: [Sighting], heard: [Bool], _ simulated: Bool
  ) -> Bool {
    report.withUnsafeBufferPointer { report in
      for (position, index) in order.enumerated() where heard[index] {
        guard hasDetails(report.baseAddress! + position, ofSighting: index, in: sightings, simulated: simulated)
        else { return false }
      }
      return true
    }
  }

  /// Makes `readers`, the last report (numbered `lastNumber`), into the report of the readers `order` lists, in
  /// place: a reader it carries is moved to its new place and given its new signal strength, and is built again
  /// only when it was `heard` since with other details; a reader it does not carry is built, and one that left
  /// is dropped. When nothing else holds `readers` (the app let go of the last report), no `Reader` is copied,
  /// retained or released for a reader whose details did not change, which is what makes a report cost little
  /// per reader when most are unchanged. When the app still holds it, the first change copies it, and the
  /// app's copy stays as it was. `source` and `kept` are working buffers.
  private static func rearrange(
    _ readers: inout [Reader], order: [Int], lastNumber: UInt64?, sightings: [Sighting],
    reportedAt: [(report: UInt64, position: Int)], heard: [Bool], simulated: Bool, source: inout [Int],
    kept: inout [Bool]
  ) {
    let reported = readers.count
    // `source[p]`: where the reader of new place `p` is in `readers` (new readers are appended).
    source.removeAll(keepingCapacity: true)
    for index in order {
      let at = reportedAt[index]
      if let lastNumber, at.report == lastNumber {
        source.append(at.position)
      } else {
        source.append(readers.count)
        readers.append(reader(from: sightings[index].advertisement, simulated: simulated, detailed: true))
      }
    }
    // The readers carried over: new details, or the new signal strength, written in place.
    readers.withUnsafeMutableBufferPointer { readers in
      for (place, index) in order.enumerated() where source[place] < reported {
        let reader = readers.baseAddress! + source[place]
        let signal = sightings[index].advertisement.signalStrength
        if heard[index] && !hasDetails(reader, ofSighting: index, in: sightings, simulated: simulated) {
          reader.pointee = Self.reader(from: sightings[index].advertisement, simulated: simulated, detailed: true)
        } else if reader.pointee.signalStrength != signal {
          reader.pointee.signalStrength = signal
        }
      }
    }
    // The readers that left go after the new list's end, then `source` is a permutation of `readers`.
    if reported > 0 {
      kept.removeAll(keepingCapacity: true)
      kept.append(contentsOf: repeatElement(false, count: reported))
      for position in source where position < reported { kept[position] = true }
      for position in 0..<reported where !kept[position] { source.append(position) }
    }
    permute(&readers, gathering: &source)
    readers.removeLast(readers.count - order.count)
  }

  /// Rearranges `elements` so that place `p` holds what place `source[p]` held, moving each element once
  /// (no copy, retain or release of an element); `source` must be a permutation of `elements`' indices, and is
  /// left with every entry set to its own index.
  private static func permute(_ elements: inout [Reader], gathering source: inout [Int]) {
    precondition(source.count == elements.count, "a permutation of every element")
    elements.withUnsafeMutableBufferPointer { elements in
      guard let base = elements.baseAddress else { return }
      withUnsafeTemporaryAllocation(of: Reader.self, capacity: 1) { spare in
        let held = spare.baseAddress!
        for start in source.indices where source[start] != start {
          // One cycle: the element at `start` is held aside, each place takes its source's element in turn.
          held.moveInitialize(from: base + start, count: 1)
          var place = start
          while source[place] != start {
            let from = source[place]
            (base + place).moveInitialize(from: base + from, count: 1)
            source[place] = place
            place = from
          }
          (base + place).moveInitialize(from: held, count: 1)
          source[place] = place
        }
      }
    }
  }

  /// Whether `reader`, built from an earlier advertisement of the same reader, has the details the latest
  /// advertisement of sighting `index` gives for a run looking for `simulated` readers (all but the signal
  /// strength); read in place through a pointer, so that neither the reader nor the advertisement is copied
  /// (a `Reader` passed by value, even `borrowing`, is copied out of its array: retains, releases and a `memcpy`).
  private static func hasDetails(
    _ reader: UnsafePointer<Reader>, ofSighting index: Int, in sightings: [Sighting], simulated: Bool
  ) -> Bool {
    reader.pointee.deviceType == sightings[index].advertisement.deviceType
      && reader.pointee.simulated == simulated
      && reader.pointee.deviceSoftwareVersion == sightings[index].advertisement.info.deviceSoftwareVersion
      && reader.pointee.batteryLevel == sightings[index].advertisement.info.batteryLevel
      && reader.pointee.isCharging == sightings[index].advertisement.info.isCharging
      && reader.pointee.label == sightings[index].advertisement.info.label
  }

  private func proximityTick(_ run: inout Run, now: Duration) -> [Action] {
    var actions: [Action] = []
    if let serial = run.pick.serialNumber {
      if let index = place(of: serial), isFresh(sightings[index], now: now) { return [] }  // Sticks with its pick.
      // The pick went away: pick again now, so the app sees the new nearest reader without a gap.
      run.pick = .searching
      actions.append(.disarm(.proximityDetails))
    }
    let nearest = proximityCandidates(of: run, now: now)
      .filter { $0.advertisement.signalStrength >= tuning.proximityThreshold }
      .max {
        $0.advertisement.signalStrength != $1.advertisement.signalStrength
          ? $0.advertisement.signalStrength < $1.advertisement.signalStrength
          : $0.advertisement.serialNumber > $1.advertisement.serialNumber
      }
    guard let nearest else { return actions + report([], into: &run) }
    let serial = nearest.advertisement.serialNumber
    run.pick = .announced(serial)
    return actions
      + report([Self.reader(from: nearest.advertisement, simulated: run.simulated, detailed: false)], into: &run)
      + [.flashLEDs(serialNumber: serial), .arm(.proximityDetails, after: tuning.proximityDetailDelay)]
  }

  private func report(_ readers: [Reader], into run: inout Run) -> [Action] {
    func comparable(_ list: [Reader]) -> [Reader] {
      list.map {
        var r = $0; r.signalStrength = nil; return r
      }
    }
    if let last = run.lastReport, comparable(last) == comparable(readers) { return [] }
    if run.lastReport == nil && readers.isEmpty { return [] }
    run.lastReport = readers
    run.foundAny = run.foundAny || !readers.isEmpty
    return [.report(readers)]
  }

  private static func reader(from advertisement: Advertisement, simulated: Bool, detailed: Bool) -> Reader {
    var reader = Reader(
      serialNumber: advertisement.serialNumber, deviceType: advertisement.deviceType, simulated: simulated)
    if detailed {
      reader.apply(advertisement.info)
      reader.signalStrength = advertisement.signalStrength
    }
    return reader
  }
}
