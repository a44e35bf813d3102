/// One card, driven with synchronous pcsc-lite calls on the caller's thread and nothing between: the
/// bare baseline the PC/SC benchmark measures ReaderKit against, and "another program" for tests that
/// hold a card. Not for apps: it blocks, and has none of the radio's rules.
package final class PCSCDirectConnection {
  private let library: PCSCLibrary
  private var context = 0
  private var card: PCSCCard?

  /// Establishes a context with the host's pcscd.
  package init() throws(PCSCError) {
    guard case .success(let library) = PCSCLibrary.load() else {
      throw PCSCError("dlopen", .noService)
    }
    self.library = library
    #if os(Linux) && (arch(x86_64) || arch(arm64))
      let code = PCSCCode(library.establishContext(2, nil, nil, &context))
      guard code == .success else { throw PCSCError("SCardEstablishContext", code) }
    #endif
  }

  deinit {
    #if os(Linux) && (arch(x86_64) || arch(arm64))
      if let card { _ = library.disconnect(card.handle, 0) }
      _ = library.releaseContext(context)
    #endif
  }

  /// Connects to the card in `reader`, `exclusive`ly or shared, with T=0 or T=1.
  package func connect(_ reader: String, exclusive: Bool = true) throws(PCSCError) {
    #if os(Linux) && (arch(x86_64) || arch(arm64))
      var handle = 0
      var active: UInt = 0
      let code = PCSCCode(library.connect(context, reader, exclusive ? 1 : 2, 3, &handle, &active))
      guard code == .success else { throw PCSCError("SCardConnect", code) }
      card = PCSCCard(handle: handle, activeProtocol: active, lane: 0)
    #endif
  }

  /// Sends `apdu` and returns the response, status word included.
  package func transmit(_ apdu: [UInt8]) throws(PCSCError) -> [UInt8] {
    #if os(Linux) && (arch(x86_64) || arch(arm64))
      guard let card else { throw PCSCError("SCardTransmit", .invalidHandle) }
      var response = [UInt8](repeating: 0, count: 264)
      var length = UInt(response.count)
      let pci = card.activeProtocol == 1 ? library.pciT0 : library.pciT1
      let code = PCSCCode(library.transmit(card.handle, pci, apdu, UInt(apdu.count), nil, &response, &length))
      guard code == .success else { throw PCSCError("SCardTransmit", code) }
      return Array(response.prefix(Int(min(length, 264))))
    #else
      throw PCSCError("SCardTransmit", .noService)
    #endif
  }

  /// Releases the card, leaving it powered.
  package func disconnect() {
    #if os(Linux) && (arch(x86_64) || arch(arm64))
      if let card { _ = library.disconnect(card.handle, 0) }
    #endif
    card = nil
  }
}
