import ReaderCore

/// Moves a `VirtualClock` forward in step with a real clock, so a simulated terminal runs by itself
/// — in an app's debug build, a preview, or async code that awaits `connectReader` — instead of
/// waiting for someone to call `advance(by:)`.
///
/// Every `tick` of the real clock the virtual clock is advanced to `speed` times the real time
/// elapsed since `start()`, running the simulated world's work in order, on the driver's task. The
/// world stays deterministic in what it does; only when things happen follows the real clock.
///
/// ```swift
/// let (terminal, world) = Terminal.simulated(seed: 1)
/// let driver = RealTimeDriver(clock: world.clock)
/// driver.start()
/// let reader = try await terminal.connectReader(found, connectionConfig: config)
/// await driver.stop()
/// ```
///
/// Tests should drive the virtual clock themselves (`advance(by:)`), which is deterministic; the
/// driver is for running the simulator as a live reader.
public final class RealTimeDriver: Sendable {
  private enum Phase {
    /// Created, or stopped: the virtual clock is not driven.
    case idle
    /// Driving, until the flag is raised.
    case running(Task<Void, Never>)
  }

  private let virtualClock: VirtualClock
  private let realClock: any Clock<Duration>
  private let speed: Double
  private let tick: Duration
  private let phase = Locked(Phase.idle)

  /// Creates a driver that runs `clock` at `speed` times the pace of `realClock`, catching up every
  /// `tick` of real time.
  /// - Parameters:
  ///   - clock: the simulation's clock; nothing else may drive it while the driver runs.
  ///   - speed: simulated seconds per real second (1: real time); values at or below 0 are taken as 1.
  ///   - tick: how often the virtual clock catches up, in real time; at least 1 ms.
  ///   - realClock: the clock that paces the simulation; the continuous clock by default.
  public init(
    clock: VirtualClock, speed: Double = 1, tick: Duration = .milliseconds(10),
    realClock: any Clock<Duration> = ContinuousClock()
  ) {
    self.virtualClock = clock
    self.realClock = realClock
    self.speed = speed > 0 && speed.isFinite ? speed : 1
    self.tick = max(tick, .milliseconds(1))
  }

  /// Whether the driver is running.
  public var isRunning: Bool {
    phase.withLock {
      if case .running = $0 { return true }
      return false
    }
  }

  /// Starts driving; does nothing when already running.
  public func start() {
    phase.withLock { phase in
      guard case .idle = phase else { return }
      let (virtualClock, realClock, speed, tick) = (self.virtualClock, self.realClock, self.speed, self.tick)
      phase = .running(
        Task.detached {
          await Self.drive(virtualClock, by: realClock, speed: speed, tick: tick)
        })
    }
  }

  /// Stops driving and returns once the virtual clock is no longer being advanced (so the caller
  /// may drive it by hand at once). Does nothing when not running.
  public func stop() async {
    let task = phase.withLock { phase -> Task<Void, Never>? in
      guard case .running(let task) = phase else { return nil }
      phase = .idle
      return task
    }
    task?.cancel()
    await task?.value
  }

  private static func drive(
    _ virtualClock: VirtualClock, by realClock: some Clock<Duration>, speed: Double, tick: Duration
  )
    async
  {
    let realStart = realClock.now
    let virtualStart = virtualClock.elapsed
    while !Task.isCancelled {
      let real = realStart.duration(to: realClock.now)
      virtualClock.advance(to: virtualStart + real * speed)
      do {
        try await realClock.sleep(for: tick, tolerance: nil)
      } catch {
        return  // Cancelled: stop() is waiting.
      }
    }
  }
}
