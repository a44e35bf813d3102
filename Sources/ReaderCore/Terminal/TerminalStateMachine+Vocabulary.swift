#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

// What goes into the terminal machine and what comes out of it.
extension TerminalStateMachine {
  /// A command as the machine sees it: values only (completions and delegates stay with the driver).
  package enum Command: Equatable, Sendable {
    case discover(DiscoveryMethod, simulated: Bool)
    case connect(Reader, ConnectionSettings)
    case disconnect
    case reboot
    case launch(timeout: Duration, autoReconnect: Bool)
    case installUpdate

    /// The API name, for events and errors.
    package var name: String {
      switch self {
      case .discover: "discoverReaders"
      case .connect: "connectReader"
      case .disconnect: "disconnectReader"
      case .reboot: "rebootReader"
      case .launch: "reconnectToSavedReader"
      case .installUpdate: "installAvailableUpdate"
      }
    }
  }

  /// Every timer the terminal keeps, named after the machine that asked for it.
  package enum Timer: Hashable, Sendable, CustomStringConvertible {
    case discovery(DiscoveryStateMachine.Timer)
    case link(ConnectionStateMachine.Timer)
    case launchTimeout
    case install(UpdateInstallStateMachine.Timer)
    /// The next look at the catalog while a reader is connected.
    case updateCheck

    package var description: String {
      switch self {
      case .discovery(let timer): "discovery(\(timer))"
      case .link(let timer): "link(\(timer))"
      case .launchTimeout: "launchTimeout"
      case .install(let timer): "install(\(timer))"
      case .updateCheck: "updateCheck"
      }
    }
  }

  /// Who hears of an event besides the event stream.
  package enum Recipient: Equatable, Sendable {
    /// Only the event stream.
    case stream
    /// The discovery delegate of command `JobID`.
    case discoveryDelegate(JobID)
    /// The `MobileReaderDelegate` of the current connection.
    case readerDelegate
    /// The terminal's own delegate (`TerminalDelegate`).
    case terminalDelegate
  }

  package enum Input: Sendable {
    /// The app issued a command.
    case submit(JobID, Command)
    /// The app cancelled a command (waiting or running).
    case cancel(JobID)
    /// The app cancelled the reconnection that `handle` was given for.
    case cancelReconnect(handle: UInt64)
    /// The Bluetooth radio reported something.
    case bluetooth(BluetoothEvent)
    /// A reader reported something over its link.
    case readerLink(ReaderLinkEvent)
    /// A timer the machine armed fired.
    case timerFired(Timer)
    /// The store answered `loadSavedReader`.
    case savedReaderLoaded(Result<SavedReader?, ReaderError>)
    /// The store answered `saveReader`.
    case readerSaved(serialNumber: String, error: ReaderError?)
    /// The catalog answered `checkForUpdate` number `request`.
    case updateChecked(request: UInt64, Result<UpdateAvailability, ReaderError>)
    /// The catalog answered `fetchImage` number `request`: the verified image, or why there is none.
    case imageFetched(request: UInt64, Result<Data, ReaderError>)
    /// The app cancelled the install that `handle` was given for.
    case cancelInstall(handle: UInt64)
    /// The update every connection to a simulated reader sees unless its configuration names a test
    /// update of its own (the simulator configuration's `availableReaderUpdate`); nil for the catalog's.
    case simulatedReaderUpdate(TestReaderUpdate?)
  }

  package enum Action: Equatable, Sendable {
    // The radio.
    case startScan
    case stopScan
    case openLink(serialNumber: String)
    case abandonLink(serialNumber: String)
    case closeLink(serialNumber: String)
    // The reader link.
    case reboot(serialNumber: String)
    case flashLEDs(serialNumber: String)
    // Timers.
    case arm(Timer, after: Duration)
    case disarm(Timer)
    // Persistence; answered by `savedReaderLoaded` and `readerSaved`.
    case loadSavedReader
    case saveReader(SavedReader)
    // Software updates; answered by `updateChecked`, `imageFetched` and the reader's update events.
    // A request carries a number its answer repeats: an answer to a request that no longer matters
    // (the reader left, the install was cancelled) is dropped, never taken for a newer one's.
    case checkForUpdate(request: UInt64, InstalledSoftware, at: Date)
    case fetchImage(request: UInt64, FirmwareImage)
    case installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?)
    case cancelUpdate(serialNumber: String)
    /// An install that can be cancelled started: create the `Cancelable` handed to
    /// `didStartInstallingUpdate` (cancelling it feeds `cancelInstall(handle:)`).
    case openInstallHandle(UInt64)
    /// The install of `handle` ended.
    case closeInstallHandle(UInt64, canceled: Bool)
    /// What `connectionStatus` and `connectedReader` read from now on.
    case status(ConnectionStatus, connectedReader: Reader?)
    /// Publish an event, and call the matching delegate method of `to`.
    case report(TerminalEvent.Kind, to: Recipient)
    /// The `MobileReaderDelegate` of command `JobID` becomes the current connection's.
    case adoptReaderDelegate(JobID)
    /// A reconnection started: create the `Cancelable` handed to `didStartReconnect` (cancelling it
    /// feeds `cancelReconnect(handle:)`).
    case openReconnectHandle(UInt64)
    /// The reconnection of `handle` ended.
    case closeReconnectHandle(UInt64, canceled: Bool)
    /// Command `JobID` is over: run its completion, then its `Cancelable`'s waiters.
    case complete(JobID, Result<Reader?, ReaderError>)
  }

  /// How the terminal handles software updates.
  package typealias UpdateSettings = SoftwareUpdateStateMachine.Settings
}
