#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Blocking work on a thread of its own, which ends when the work returns.
///
/// For a few long blocking calls (a catalog fetch waiting on a slow server) that must not hold a
/// thread of the shared pools meanwhile, and whose end must be visible: once `work` returns, the thread
/// is gone, so nothing is left behind by a cancelled fetch.
package enum DedicatedThread {
  /// Starts a detached thread named `name` (at most 15 bytes are kept: the system's limit) running
  /// `work`; returns `false`, running nothing, when the system cannot create a thread.
  @discardableResult
  package static func start(named name: String, _ work: @escaping @Sendable () -> Void) -> Bool {
    let shortName = String(decoding: Array(name.utf8.prefix(15)), as: UTF8.self)
    let context = Unmanaged.passRetained(ThreadWork(name: shortName, work)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    #if canImport(Darwin)
      var thread: pthread_t?
    #else
      var thread = pthread_t()
    #endif
    guard pthread_create(&thread, &attributes, dedicatedThreadMain, context) == 0 else {
      Unmanaged<ThreadWork>.fromOpaque(context).release()
      return false
    }
    return true
  }
}

/// What a dedicated thread runs, and its name.
private final class ThreadWork {
  let name: String
  let work: @Sendable () -> Void

  init(name: String, _ work: @escaping @Sendable () -> Void) {
    self.name = name
    self.work = work
  }

  /// Names the calling thread, as `ps -T` and `/proc/<pid>/task/<tid>/comm` show it, and runs the work.
  func run() {
    #if canImport(Darwin)
      _ = pthread_setname_np(name)
    #else
      // Glibc's pthread_setname_np is not visible to Swift; the kernel takes the name here as well.
      let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
      if descriptor >= 0 {
        _ = Array(name.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        _ = close(descriptor)
      }
    #endif
    work()
  }
}

#if canImport(Darwin)
  private func dedicatedThreadMain(_ context: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
    Unmanaged<ThreadWork>.fromOpaque(context).takeRetainedValue().run()
    return nil
  }
#else
  private func dedicatedThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    Unmanaged<ThreadWork>.fromOpaque(context).takeRetainedValue().run()
    return nil
  }
#endif
