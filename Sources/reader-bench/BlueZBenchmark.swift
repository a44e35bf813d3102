#if canImport(BlueZ)
  import BlueZ
  import DBus
  import ReaderCore

  /// What the BlueZ layer costs per advertisement: `PropertiesChanged` messages (an RSSI change each, from
  /// `readers` readers in turn) decoded and read as signals — the bare baseline — against the same bytes
  /// decoded and run through `BlueZCentralStateMachine` while it scans, up to the `Advertisement` the
  /// terminal receives, and on through a scanning `Terminal` to its delegate's `didUpdateDiscoveredReaders`
  /// (`BlueZTerminalScene`). All in the same rounds, as ratios.
  func runBlueZBenchmark(readers: Int, messages: Int) -> [Ratio] {
    let adapter = "/org/bluez/hci0"
    let paths = (0..<readers).map { String(format: "\(adapter)/dev_C0_00_00_00_%02X_%02X", $0 / 256, $0 % 256) }
    let frames: [[UInt8]] = (0..<messages).map { index in
      var message = DBusMessage(
        kind: .signal, serial: UInt32(index + 1), path: paths[index % readers],
        interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", sender: ":1.1")
      message.body = [
        .string("org.bluez.Device1"), .stringVariantDictionary(["RSSI": .int16(Int16(-40 - index % 40))]),
        .stringArray([]),
      ]
      return message.encoded()
    }
    var objects: BlueZObjects = [
      adapter: ["org.bluez.Adapter1": ["Powered": .boolean(true), "PowerState": .string("on")]]
    ]
    for (index, path) in paths.enumerated() {
      objects[path] = [
        "org.bluez.Device1": [
          "Address": .string(path), "Name": .string("STRM2-\(index)"), "RSSI": .int16(-60),
          "UUIDs": .stringArray([BlueZConfiguration.smpServiceUUID]),
        ]
      ]
    }
    let timings = Comparison([
      .init("bluez.advertisement.decode") {
        var count = 0
        for frame in frames {
          if let message = try? DBusMessage.decode(frame), BlueZSignal(message) != nil { count += 1 }
        }
        precondition(count == frames.count, "every message decodes")
      },
      .init("bluez.advertisement.machine") {
        var machine = BlueZCentralStateMachine(configuration: BlueZConfiguration())
        _ = machine.handle(.busOpened(objects), now: .zero)
        let start = machine.handle(.startScan, now: .zero)
        for case .call(let id, .startDiscovery) in start {
          _ = machine.handle(
            .reply(id, .success(DBusMessage(kind: .methodReturn, serial: 1, replySerial: 1))), now: .zero)
        }
        var advertisements = 0
        for (index, frame) in frames.enumerated() {
          guard let message = try? DBusMessage.decode(frame), let signal = BlueZSignal(message) else { continue }
          for case .emit(.advertisement) in machine.handle(.signal(signal), now: .milliseconds(Int64(index))) {
            advertisements += 1
          }
        }
        precondition(advertisements == frames.count, "every RSSI change is an advertisement")
      },
      .withSetUp("bluez.advertisement.terminal") {
        let scene = BlueZTerminalScene(frames: frames, objects: objects)
        return ({ scene.run() }, { scene.finish(readers: readers) })
      },
    ]).measure()
    let perMessage = { (name: String) in timings.median(name) / Double(messages) * 1e9 }
    print("bluez: \(messages) PropertiesChanged (RSSI) from \(readers) readers")
    print(
      String(
        format: "  decode alone:             %8.0f ns/message (baseline)", perMessage("bluez.advertisement.decode")))
    print(String(format: "  decode + BlueZ machine:   %8.0f ns/message", perMessage("bluez.advertisement.machine")))
    print(
      String(
        format: "  … + terminal's discovery: %8.0f ns/message (to didUpdateDiscoveredReaders)",
        perMessage("bluez.advertisement.terminal")))
    let ratios = [
      timings.ratio(
        "bluez: advertisement through the BlueZ machine / decoding alone", "bluez.advertisement.machine",
        over: "bluez.advertisement.decode", goal: .atMost(3)),
      timings.ratio(
        "bluez: advertisement to didUpdateDiscoveredReaders / decoding alone", "bluez.advertisement.terminal",
        over: "bluez.advertisement.decode"),
    ]
    for ratio in ratios { print(ratio.line) }
    return ratios
  }
#endif

/// The BlueZ benchmark where the BlueZ backend exists (Linux).
var blueZBenchmarks: [Benchmark] {
  #if canImport(BlueZ)
    [
      Benchmark(
        name: "bluez",
        summary: "BlueZ: advertisements against decoding alone; an SMP image upload against raw writes (D-Bus peer)"
      ) {
        runBlueZBenchmark(readers: 100, messages: 20_000) + runBlueZUploadBenchmark(imageBytes: 128 * 1024)
      }
    ]
  #else
    []
  #endif
}
