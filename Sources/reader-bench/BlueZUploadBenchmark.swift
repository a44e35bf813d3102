#if canImport(BlueZ)
  import BlueZ
  import DBus
  import Foundation
  import ReaderCore
  import ReaderKit
  import Synchronization

  #if canImport(Glibc)
    import Glibc
  #endif

  /// Image upload throughput over BlueZ against the peer's raw write rate, in the same rounds.
  ///
  /// Both run against ReaderKit's D-Bus peer (a private `dbus-daemon` and the readers template on
  /// python-dbusmock, as the tests use). The baseline writes the image's bytes to a reader's SMP
  /// characteristic that takes writes and answers nothing, 244 bytes per `WriteValue`, each awaited:
  /// the peer's raw write rate. The pipeline uploads the same image through `BlueZCentral`'s reader
  /// link — `SMPReaderLink`, CBOR and SMP frames, one request in flight, the reader's SMP device
  /// answering each chunk with the offset it reached — until the reader holds it all (the link reports
  /// 90 %), a new reader each round. The ratio is the upload's bytes per second over the raw rate's.
  func runBlueZUploadBenchmark(imageBytes: Int) -> [Ratio] {
    let peer: BenchPeer
    switch BenchPeer.start() {
    case .success(let started): peer = started
    case .failure(let reason):
      print("bluez upload: skipped: \(reason)")
      return [Ratio(name: "bluez: image upload / raw writes (bytes per second)", samples: [], goal: nil)]
    }
    defer { peer.stop() }
    let image = BenchImage.mcuboot(bodySize: imageBytes)
    let scheduler = LiveScheduler(label: "reader-bench.bluez")
    let central: BlueZCentral
    do {
      central = try BlueZCentral.open(
        scheduler: scheduler, environment: ["DBUS_SYSTEM_BUS_ADDRESS": peer.address],
        sha256: { SHA256Checksum.compute($0) })
    } catch {
      print("bluez upload: skipped: \(error.message)")
      return [Ratio(name: "bluez: image upload / raw writes (bytes per second)", samples: [], goal: nil)]
    }
    defer { central.close() }
    let events = BenchEvents()
    central.setEventHandler { events.radio($0) }
    central.setLinkEventHandler { events.link($0) }
    let readers = Atomic<Int>(0)
    let update = ReaderSoftwareUpdate(
      deviceSoftwareVersion: "1.1.0", durationEstimate: .estimate1To2Minutes, components: .firmware,
      requiredAt: Date())

    /// A new reader, connected: its serial number and object path.
    func connectedReader(sink: Bool) -> (serial: String, path: String) {
      let number = readers.wrappingAdd(1, ordering: .relaxed).newValue
      let serial = String(format: "BENCH-%04d", number)
      let address = String(format: "C0:00:00:00:%02X:%02X", number / 256, number % 256)
      let path = peer.addReader(address: address, name: serial, sink: sink)
      let connected = events.expect { if case .didConnect(serial, _) = $0 { true } else { false } }
      scheduler.execute { central.connect(serialNumber: serial) }
      connected.wait()
      return (serial, path)
    }

    func disconnect(_ serial: String) {
      let gone = events.expect { if case .didDisconnect(serial, _) = $0 { true } else { false } }
      scheduler.execute { central.disconnect(serialNumber: serial) }
      gone.wait()
    }

    let timings = Comparison([
      .withSetUp("bluez.upload.rawWrites") {
        let reader = connectedReader(sink: true)
        let characteristic = reader.path + "/service0020/char0021"
        return (
          {
            var offset = 0
            while offset < image.count {
              peer.write(characteristic, Array(image[offset..<min(offset + 244, image.count)]))
              offset += 244
            }
          },
          { disconnect(reader.serial) }
        )
      },
      .withSetUp("bluez.upload.smp") {
        let reader = connectedReader(sink: false)
        let uploaded = events.expect(link: { event in
          if case .updateProgress(reader.serial, let progress) = event { progress >= 0.9 } else { false }
        })
        let finished = events.expect(link: { event in
          if case .updateFinished(reader.serial, _) = event { true } else { false }
        })
        return (
          {
            scheduler.execute {
              central.installUpdate(serialNumber: reader.serial, update: update, image: Data(image))
            }
            uploaded.wait()
          },
          {
            finished.wait()
            disconnect(reader.serial)
          }
        )
      },
    ]).measure()
    let rate = { (name: String) in Double(image.count) / timings.median(name) / 1024 }
    print("bluez upload: a \(image.count)-byte MCUboot image, against ReaderKit's D-Bus peer")
    print(String(format: "  raw writes (244 B, awaited):   %8.1f KiB/s (baseline)", rate("bluez.upload.rawWrites")))
    print(String(format: "  SMP upload through BlueZ:      %8.1f KiB/s", rate("bluez.upload.smp")))
    // Bytes per second of the upload over the raw writes' is the raw writes' time over the upload's.
    let ratio = timings.ratio(
      "bluez: image upload / raw writes (bytes per second)", "bluez.upload.rawWrites", over: "bluez.upload.smp",
      goal: .atLeast(0.5))
    print(ratio.line)
    return [ratio]
  }

  /// The events of the benchmark's central, and waits for one that matches (bounded: a benchmark that
  /// hangs is a failure, so a wait that runs out stops the process with a message).
  final class BenchEvents: Sendable {
    private struct Waiter {
      let radio: (@Sendable (BluetoothEvent) -> Bool)?
      let link: (@Sendable (ReaderLinkEvent) -> Bool)?
      let semaphore: DispatchSemaphore
    }
    private let waiters = Locked<[Waiter]>([])

    struct Expectation {
      let semaphore: DispatchSemaphore
      func wait() {
        guard semaphore.wait(timeout: .now() + 120) == .success else {
          fatalError("reader-bench bluez: an event the benchmark waits for did not come within 120 s")
        }
      }
    }

    func expect(_ radio: @escaping @Sendable (BluetoothEvent) -> Bool) -> Expectation {
      add(Waiter(radio: radio, link: nil, semaphore: DispatchSemaphore(value: 0)))
    }

    func expect(link: @escaping @Sendable (ReaderLinkEvent) -> Bool) -> Expectation {
      add(Waiter(radio: nil, link: link, semaphore: DispatchSemaphore(value: 0)))
    }

    private func add(_ waiter: Waiter) -> Expectation {
      waiters.withLock { $0.append(waiter) }
      return Expectation(semaphore: waiter.semaphore)
    }

    func radio(_ event: BluetoothEvent) {
      let matched = waiters.withLock { waiters -> [Waiter] in
        let hits = waiters.filter { $0.radio?(event) == true }
        waiters.removeAll { $0.radio?(event) == true }
        return hits
      }
      for waiter in matched { waiter.semaphore.signal() }
    }

    func link(_ event: ReaderLinkEvent) {
      let matched = waiters.withLock { waiters -> [Waiter] in
        let hits = waiters.filter { $0.link?(event) == true }
        waiters.removeAll { $0.link?(event) == true }
        return hits
      }
      for waiter in matched { waiter.semaphore.signal() }
    }
  }

  /// Why the upload benchmark cannot run here.
  struct SkipReason: Error, CustomStringConvertible {
    let description: String
  }

  /// A private bus with ReaderKit's BlueZ peer on it (`Tests/Support/peer/bluez_readers.py`), stopped by
  /// PID.
  final class BenchPeer: Sendable {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let directory: URL
    let address: String
    private let processes: [Process]
    private let control: DBusConnection

    private init(directory: URL, address: String, processes: [Process], control: DBusConnection) {
      self.directory = directory
      self.address = address
      self.processes = processes
      self.control = control
    }

    /// Starts a `dbus-daemon` and the peer with a powered adapter `hci0`, or says why it cannot.
    static func start() -> Result<BenchPeer, SkipReason> {
      let template = root.appendingPathComponent("Tests/Support/peer/bluez_readers.py")
      guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon"),
        FileManager.default.fileExists(atPath: template.path)
      else {
        return .failure(
          SkipReason(
            description: "needs /usr/bin/dbus-daemon and the package's Tests/Support/peer (bash .ci/bluez-peer.sh)"))
      }
      let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reader-bench-\(UUID())")
      try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      let address = "unix:path=" + directory.appendingPathComponent("bus").path
      var started: [Process] = []
      func stopAll() {
        for process in started where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
      }
      let daemon = Process()
      daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
      daemon.arguments = ["--session", "--nofork", "--nopidfile", "--address=\(address)"]
      daemon.standardError = FileHandle.nullDevice
      guard (try? daemon.run()) != nil else { return .failure(SkipReason(description: "dbus-daemon does not start")) }
      started.append(daemon)
      // Bounded waits: the bus within 2 s, org.bluez within 10 s.
      var control: DBusConnection?
      for _ in 0..<100 where control == nil {
        control = try? DBusConnection.open(DBusAddress.parse(address), timeout: .seconds(1))
        if control == nil { usleep(20_000) }
      }
      guard let control else {
        stopAll()
        return .failure(SkipReason(description: "dbus-daemon did not listen at \(address)"))
      }
      let mock = Process()
      mock.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
      mock.arguments = ["-m", "dbusmock", "--system", "--template", template.path]
      mock.environment = ["DBUS_SYSTEM_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"]
      mock.standardOutput = FileHandle.nullDevice
      mock.standardError = FileHandle.nullDevice
      guard (try? mock.run()) != nil else {
        stopAll()
        return .failure(SkipReason(description: "python3 -m dbusmock does not start"))
      }
      started.append(mock)
      let hasOwner = DBusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
        member: "NameHasOwner", body: [.string("org.bluez")])
      var owned = false
      for _ in 0..<200 where !owned {
        owned = (try? control.call(hasOwner))?.body.first?.bool == true
        if !owned { usleep(50_000) }
      }
      let peer = BenchPeer(directory: directory, address: address, processes: started, control: control)
      guard owned, (try? peer.call("AddAdapter", [.string("hci0"), .boolean(true)])) != nil else {
        peer.stop()
        return .failure(
          SkipReason(description: "python3-dbusmock's peer did not start (apt-get install python3-dbusmock)"))
      }
      return .success(peer)
    }

    @discardableResult
    private func call(_ member: String, _ body: [DBusValue]) throws(DBusError) -> DBusMessage {
      try control.call(
        .methodCall(destination: "org.bluez", path: "/", interface: "org.readerkit.Peer", member: member, body: body),
        timeout: .seconds(10))
    }

    /// Adds a reader advertising the SMP service, running 1.0.0; with `sink`, its SMP characteristic
    /// answers nothing. Returns its object path.
    func addReader(address: String, name: String, sink: Bool) -> String {
      let options: [String: DBusValue] = ["firmware": .string("1.0.0"), "sink": .boolean(sink)]
      let reply = try? call(
        "AddReader",
        [
          .string("hci0"), .string(address), .string(name), .int16(-50),
          .stringArray([BlueZConfiguration.smpServiceUUID]), .stringVariantDictionary(options),
        ])
      guard let path = reply?.body.first?.string else { fatalError("reader-bench bluez: the peer refused a reader") }
      return path
    }

    /// One `WriteValue` (write without response) to `characteristic`, awaited.
    func write(_ characteristic: String, _ bytes: [UInt8]) {
      do {
        _ = try control.call(
          .methodCall(
            destination: "org.bluez", path: characteristic, interface: "org.bluez.GattCharacteristic1",
            member: "WriteValue", body: [.bytes(bytes), .stringVariantDictionary(["type": .string("command")])]),
          timeout: .seconds(10))
      } catch {
        fatalError("reader-bench bluez: a raw write failed: \(error)")
      }
    }

    /// Stops the peer and the bus by PID, and removes the directory.
    func stop() {
      control.close()
      for process in processes.reversed() where process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
      }
      try? FileManager.default.removeItem(at: directory)
    }
  }

  /// An MCUboot image (32-byte header, seeded body, SHA-256 TLV), as `imgtool` lays one out.
  enum BenchImage {
    static func mcuboot(bodySize: Int) -> [UInt8] {
      func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
      func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
      var bytes = le32(0x96F3_B83D) + le32(0) + le16(32) + le16(0) + le32(UInt32(bodySize)) + le32(0)
      bytes += [1, 1] + le16(0) + le32(0) + le32(0)
      var value: UInt8 = 1
      for _ in 0..<bodySize {
        value = value &* 31 &+ 7
        bytes.append(value)
      }
      let tlv = le16(0x10) + le16(32) + SHA256Checksum.compute(bytes).bytes
      return bytes + le16(0x6907) + le16(4 + tlv.count) + tlv
    }
  }
#endif
