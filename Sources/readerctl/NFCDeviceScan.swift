import NFCKit
import ReaderCore
import ReaderKit
import Synchronization

/// `nfc scan` on a device that is not the simulator (a PC/SC reader, or a recording of one): the same
/// sessions as the simulated scan, ended by the system (its time limit, the first read) or by the
/// person (Ctrl-C live; the recorded `stop` in a replay).
///
/// How it ends, and its status:
/// - one session (`invalidateAfterFirstRead`): the first message read ends it (0); a session that
///   reads nothing ends at the system's time limit: 65 when a tag's message was malformed or blank, 75
///   when no tag gave anything; Ctrl-C ends it with 130.
/// - `--continuous`: the read loop runs session after session until Ctrl-C: 0 when every tag gave a
///   message, 65 when one did not.
enum NFCDeviceScan {
  static func run(
    _ device: NFCDeviceRun, continuous: Bool, stopAt: Duration?, onStop: @escaping @Sendable () -> Void
  ) -> Int32 {
    let failures = Locked<[NFCReaderError]>([])
    device.system.addEventObserver { event in
      if case .didFailToReadNDEF(let error) = event.kind {
        device.console.error("readerctl: \(NFCNarration.failure(error))\n")
        failures.withLock { $0.append(error) }
      }
    }
    let stopping = Stopping(device: device, stopAt: stopAt, onStop: onStop)
    return continuous
      ? readContinuously(device, stopping, failures: { failures.withLock { $0 } })
      : readOnce(device, stopping, failures: { failures.withLock { $0 } })
  }

  /// Runs the device until a run ends, or until it is stopped (Ctrl-C live; the recorded stop in a
  /// replay), which calls `onStop` and the run's `stop`, then runs until the run has ended.
  private final class Stopping: Sendable {
    let device: NFCDeviceRun
    let stopAt: Duration?
    let onStop: @Sendable () -> Void
    private let stopped = Atomic<Bool>(false)

    init(device: NFCDeviceRun, stopAt: Duration?, onStop: @escaping @Sendable () -> Void) {
      self.device = device
      self.stopAt = stopAt
      self.onStop = onStop
    }

    var wasStopped: Bool { stopped.load(ordering: .relaxed) }

    func run(until ended: () -> Bool, stop: () -> Void) -> Bool {
      let window = stopAt.map { max($0 - device.now, .zero) } ?? .seconds(365 * 86_400)
      if device.run(until: ended, for: window) { return true }
      stopped.store(true, ordering: .relaxed)
      onStop()
      stop()
      return device.run(until: ended, for: .seconds(10), interruptible: false)
    }
  }

  private static func messages(_ device: NFCDeviceRun) -> [NDEFMessage] {
    device.events.flatMap { event -> [NDEFMessage] in
      if case .didDetectNDEFs(let messages) = event.kind { return messages }
      return []
    }
  }

  private static func messagesField(_ device: NFCDeviceRun) -> [(String, String)] {
    [("messages", NFCJSON.messages(messages(device)))]
  }

  private static func readOnce(_ device: NFCDeviceRun, _ stopping: Stopping, failures: () -> [NFCReaderError])
    -> Int32
  {
    let watcher = EndWatcher(device: device)
    let session = NFCNDEFReaderSession(delegate: watcher, invalidateAfterFirstRead: true, system: device.system)
    session.alertMessage = NFCScanCommand.alertMessage
    session.begin()
    let ended = withExtendedLifetime(watcher) { stopping.run(until: { watcher.ended.isSet }, stop: session.invalidate) }
    guard ended, let error = watcher.ended.value else {
      return device.fail(
        "reading failed",
        NFCReaderError(.readerSessionInvalidationErrorUserCanceled, "the session did not end", context: ["by": "app"]))
    }
    switch error.code {
    case .readerSessionInvalidationErrorFirstNDEFTagRead:
      return succeed(device, sessions: 1)
    case .readerSessionInvalidationErrorSessionTimeout:
      if let first = failures().first {
        return device.fail("no tag gave a message", first, raw: messagesField(device))
      }
      return device.fail("no tag was read", error, raw: messagesField(device))
    default:
      return device.fail(stopping.wasStopped ? "interrupted" : "reading failed", error, raw: messagesField(device))
    }
  }

  private static func readContinuously(
    _ device: NFCDeviceRun, _ stopping: Stopping, failures: () -> [NFCReaderError]
  ) -> Int32 {
    let finished = Outcome<NFCReadLoop.Outcome>()
    let loop = NFCReadLoop(
      system: device.system, continuous: true, alertMessage: NFCScanCommand.alertMessage, onMessages: { _ in },
      completion: { outcome in
        finished.set(outcome)
        device.wake()
      })
    loop.start()
    guard stopping.run(until: { finished.isSet }, stop: loop.stop), let outcome = finished.value else {
      return device.fail(
        "reading failed",
        NFCReaderError(.readerSessionInvalidationErrorUserCanceled, "the read loop did not end", context: ["by": "app"])
      )
    }
    if case .failed(let error) = outcome {
      return device.fail("reading failed", error, raw: messagesField(device))
    }
    if let first = failures().first {
      return device.fail(
        "\(failures().count) tag reading(s) gave no message; the first", first, raw: messagesField(device))
    }
    return succeed(device, sessions: loop.sessionsBegun)
  }

  private static func succeed(_ device: NFCDeviceRun, sessions: Int) -> Int32 {
    let count = messages(device).count
    device.say(
      "Read \(count) message\(count == 1 ? "" : "s") in \(sessions) session\(sessions == 1 ? "" : "s").")
    return device.finish(.success(), raw: messagesField(device))
  }

  /// The delegate of the single session: keeps how it ended and wakes the run.
  private final class EndWatcher: NFCNDEFReaderSessionDelegate {
    let ended = Outcome<NFCReaderError>()
    let device: NFCDeviceRun

    init(device: NFCDeviceRun) { self.device = device }

    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
      ended.set(NFCReaderError(invalidation: error))
      device.wake()
    }

    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
  }
}
