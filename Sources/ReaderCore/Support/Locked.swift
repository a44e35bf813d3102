#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A value that only one thread at a time reads or changes: `Synchronization.Mutex`'s `withLock`,
/// backed by a POSIX mutex.
///
/// The package guards its shared state with this type rather than `Mutex` because ThreadSanitizer
/// intercepts `pthread_mutex_lock` and so sees the ordering this lock creates, while on Linux it does
/// not see `Mutex`'s (which waits on a futex directly): under `-sanitize=thread` every access made
/// inside `Mutex.withLock` from two threads is reported as a race, and a real race is lost among them.
/// With this lock a report is a real finding.
///
/// Like `Mutex`, it cannot be copied (store it in a `let` of a class, or of a global), it is `Sendable`
/// whatever the value (the value goes in and out only as `sending`), and the lock is not recursive:
/// calling `withLock` again from inside `body` on the same lock deadlocks. The mutex and the value share
/// one heap block, allocated once at `init`; taking and releasing an uncontended lock costs one atomic
/// operation each, as `Mutex` does.
///
/// The type is `public` and its members `package`: nothing outside the package can make or use one, and
/// other modules of the package get `withLock` inlined and specialized for their value. The compiler
/// treats a `package` type as resilient outside its module, so it inlines no `@inlinable` member of one
/// into another module: every `withLock` from another module would run the generic code, its closure
/// called through a reabstraction thunk and its types looked up at run time.
public struct Locked<Value: ~Copyable>: ~Copyable {
  /// One block: the `pthread_mutex_t` at offset 0 (its address must never change, so it cannot live
  /// inline in a movable value), then the value at `valueOffset`.
  @usableFromInline let block: UnsafeMutableRawPointer

  @inlinable static var valueOffset: Int {
    let mutexSize = MemoryLayout<pthread_mutex_t>.size
    let alignment = MemoryLayout<Value>.alignment
    return (mutexSize + alignment - 1) / alignment * alignment
  }

  @inlinable var mutex: UnsafeMutablePointer<pthread_mutex_t> {
    block.assumingMemoryBound(to: pthread_mutex_t.self)
  }

  @inlinable var value: UnsafeMutablePointer<Value> {
    (block + Self.valueOffset).assumingMemoryBound(to: Value.self)
  }

  /// A lock guarding `initialValue`.
  package init(_ initialValue: consuming sending Value) {
    let alignment = max(MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<Value>.alignment)
    block = .allocate(byteCount: Self.valueOffset + max(MemoryLayout<Value>.size, 1), alignment: alignment)
    let mutex = block.initializeMemory(as: pthread_mutex_t.self, repeating: pthread_mutex_t(), count: 1)
    // A default (normal, non-recursive) mutex: no attributes to set, and it cannot fail here.
    pthread_mutex_init(mutex, nil)
    (block + Self.valueOffset).initializeMemory(as: Value.self, to: initialValue)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    value.deinitialize(count: 1)
    block.deallocate()
  }

  /// Runs `body` with the value while holding the lock, and returns what it returns; the lock is
  /// released when `body` returns or throws.
  @inlinable
  package borrowing func withLock<Result: ~Copyable, E: Error>(
    _ body: (inout sending Value) throws(E) -> sending Result
  ) throws(E) -> sending Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value.pointee)
  }

  /// Runs `body` with the value when the lock is free right now, and returns what it returns; returns
  /// nil without waiting when another thread holds the lock.
  @inlinable
  package borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
    _ body: (inout sending Value) throws(E) -> sending Result
  ) throws(E) -> sending Result? {
    guard pthread_mutex_trylock(mutex) == 0 else { return nil }
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value.pointee)
  }
}

extension Locked: @unchecked Sendable where Value: ~Copyable {}
