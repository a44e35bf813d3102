import MCUmgr
import ReaderCore

/// One reader's SMP channel over BlueZ: the SMP characteristic's notifications in, writes without
/// response out, as `SMPTransport` specifies. A thin handle: `BlueZCentral` and its machine do the work,
/// on the terminal's scheduler, and deliver its events there.
final class BlueZSMPTransport: SMPTransport, Sendable {
  private unowned let central: BlueZCentral
  private let serialNumber: String
  private let handler = Locked<(@Sendable (SMPTransportEvent) -> Void)?>(nil)

  init(central: BlueZCentral, serialNumber: String) {
    self.central = central
    self.serialNumber = serialNumber
  }

  func setEventHandler(_ handler: @escaping @Sendable (SMPTransportEvent) -> Void) {
    self.handler.withLock { $0 = handler }
  }

  var maximumWriteLength: Int? { central.smpMaximumWriteLength(serialNumber) }

  func send(_ bytes: [UInt8]) { central.smpSend(serialNumber, bytes) }

  func expectLinkLoss(_ expectation: SMPLinkLossExpectation?) { central.smpExpectLinkLoss(serialNumber, expectation) }

  /// Hands an event to the SMP link (the central calls it as a work item of the scheduler).
  func deliver(_ event: SMPTransportEvent) {
    handler.withLock { $0 }?(event)
  }
}
