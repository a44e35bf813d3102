#if os(Linux) && (arch(x86_64) || arch(arm64))
  import Glibc
#endif

/// The system's pcsc-lite client library, loaded at run time with `dlopen`: nothing of it is needed to
/// build ReaderKit, and a host without it simply has no PC/SC (`load()` fails).
///
/// Only 64-bit Linux is bound (LP64: `DWORD` is `unsigned long`, `LONG` and the handles are `long`);
/// elsewhere `load()` reports the platform as unsupported. Every call is one C call: blocking ones
/// (`getStatusChange`, `connect`, `transmit`) block the calling thread, which is why `LivePCSCService`
/// makes them on lanes of its own.
package final class PCSCLibrary: @unchecked Sendable {
  /// The library's file name, found through the dynamic linker's search path.
  package static let fileName = "libpcsclite.so.1"

  /// Why the library could not be loaded.
  package struct LoadError: Error, Sendable, Hashable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
  }

  #if os(Linux) && (arch(x86_64) || arch(arm64))
    typealias EstablishContext =
      @convention(c) (
        UInt, UnsafeRawPointer?, UnsafeRawPointer?, UnsafeMutablePointer<Int>
      ) -> Int
    typealias ContextCall = @convention(c) (Int) -> Int
    typealias ListReaders =
      @convention(c) (
        Int, UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<UInt>
      ) -> Int
    typealias GetStatusChange = @convention(c) (Int, UInt, UnsafeMutableRawPointer?, UInt) -> Int
    typealias Connect =
      @convention(c) (
        Int, UnsafePointer<CChar>, UInt, UInt, UnsafeMutablePointer<Int>, UnsafeMutablePointer<UInt>
      ) -> Int
    typealias Disconnect = @convention(c) (Int, UInt) -> Int
    typealias Transmit =
      @convention(c) (
        Int, UnsafeRawPointer, UnsafePointer<UInt8>, UInt, UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>,
        UnsafeMutablePointer<UInt>
      ) -> Int

    let establishContext: EstablishContext
    let releaseContext: ContextCall
    let listReaders: ListReaders
    let getStatusChange: GetStatusChange
    let cancel: ContextCall
    let connect: Connect
    let disconnect: Disconnect
    let transmit: Transmit
    /// `SCARD_PCI_T0` and `SCARD_PCI_T1`: the library's own protocol control structures.
    let pciT0: UnsafeRawPointer
    let pciT1: UnsafeRawPointer

    private init(handle: UnsafeMutableRawPointer) throws(LoadError) {
      func symbol<T>(_ name: String, as type: T.Type) throws(LoadError) -> T {
        guard let address = dlsym(handle, name) else {
          throw LoadError(message: "\(PCSCLibrary.fileName) has no symbol \(name)")
        }
        return unsafeBitCast(address, to: type)
      }
      establishContext = try symbol("SCardEstablishContext", as: EstablishContext.self)
      releaseContext = try symbol("SCardReleaseContext", as: ContextCall.self)
      listReaders = try symbol("SCardListReaders", as: ListReaders.self)
      getStatusChange = try symbol("SCardGetStatusChange", as: GetStatusChange.self)
      cancel = try symbol("SCardCancel", as: ContextCall.self)
      connect = try symbol("SCardConnect", as: Connect.self)
      disconnect = try symbol("SCardDisconnect", as: Disconnect.self)
      transmit = try symbol("SCardTransmit", as: Transmit.self)
      guard let t0 = dlsym(handle, "g_rgSCardT0Pci"), let t1 = dlsym(handle, "g_rgSCardT1Pci") else {
        throw LoadError(message: "\(PCSCLibrary.fileName) has no protocol control structures")
      }
      pciT0 = UnsafeRawPointer(t0)
      pciT1 = UnsafeRawPointer(t1)
    }
  #endif

  private static let loaded: Result<PCSCLibrary, LoadError> = {
    #if os(Linux) && (arch(x86_64) || arch(arm64))
      guard let handle = dlopen(fileName, RTLD_NOW | RTLD_LOCAL) else {
        let reason = dlerror().map { String(cString: $0) } ?? "not found"
        return .failure(LoadError(message: "\(fileName) could not be loaded (\(reason))"))
      }
      do throws(LoadError) {
        return .success(try PCSCLibrary(handle: handle))
      } catch {
        return .failure(error)
      }
    #else
      return .failure(LoadError(message: "PC/SC is bound on 64-bit Linux only"))
    #endif
  }()

  /// The library, loaded once per process; the failure says why there is none.
  package static func load() -> Result<PCSCLibrary, LoadError> { loaded }
}
