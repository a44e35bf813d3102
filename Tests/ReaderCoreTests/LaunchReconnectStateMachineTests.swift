import Testing

@testable import ReaderCore

private typealias Action = LaunchReconnectStateMachine.Action

private let saved = SavedReader(serialNumber: "STRM2-0001", locationId: "tml_1", deviceType: .stripeM2, simulated: true)
private let found = Reader(serialNumber: "STRM2-0001", deviceType: .stripeM2, simulated: true)

private func searching() -> LaunchReconnectStateMachine {
  var machine = LaunchReconnectStateMachine(timeout: .seconds(30), autoReconnect: false)
  _ = machine.start()
  _ = machine.savedReaderLoaded(.success(saved), connectRefusal: nil)
  if !machine.isSearching { Issue.record("test setup: not searching") }
  return machine
}

@Suite struct LaunchReconnectStateMachineTests {
  @Test func startLoadsTheSavedReaderOnce() {
    var machine = LaunchReconnectStateMachine(timeout: .seconds(30), autoReconnect: true)
    #expect(machine.start() == [.loadSavedReader])
    #expect(machine.start() == [])
  }

  @Test func aSavedReaderIsAnnouncedThenSearchedForWithinTheTimeout() {
    var machine = LaunchReconnectStateMachine(timeout: .seconds(30), autoReconnect: false)
    _ = machine.start()
    #expect(
      machine.savedReaderLoaded(.success(saved), connectRefusal: nil) == [
        .report(.didStartLaunchReconnect(serialNumber: "STRM2-0001")), .armTimeout(.seconds(30)),
        .startDiscovery(simulated: true),
      ])
  }

  @Test func aSavedLocationThatIsBlankFailsAsAnInvalidConfiguration() {
    var machine = LaunchReconnectStateMachine(timeout: .seconds(30), autoReconnect: true)
    _ = machine.start()
    let actions = machine.savedReaderLoaded(
      .success(SavedReader(serialNumber: "STRM2-0001", locationId: " ")), connectRefusal: nil)
    guard case .finish(.failure(let error)) = actions.last, actions.count == 1 else {
      Issue.record("expected a lone failure, got \(actions)")
      return
    }
    #expect(error.code == .invalidConfiguration)
    #expect(error.context["field"] == "locationId")
  }

  @Test func theReaderFoundIsConnectedWithTheSavedLocationAndTheAppsReconnectChoice() throws {
    let settings = try ConnectionSettings(locationId: "tml_1", autoReconnect: false)
    var machine = searching()
    #expect(machine.readersReported([Reader(serialNumber: "WPC32-9", deviceType: .wisePad3)]) == [])
    #expect(
      machine.readersReported([found]) == [
        .report(.didFindSavedReader(found)), .disarmTimeout, .connect(found, settings),
      ])
    #expect(!machine.isSearching)
    #expect(machine.readersReported([found]) == [], "found once")
    #expect(machine.timedOut(heard: []) == [], "the timeout bounds the search only")
    #expect(machine.discoveryEnded(nil) == [], "its discovery ended because the reader was found")
    #expect(machine.connectFinished(.success(found)) == [.finish(.success(found))])
    #expect(machine.connectFinished(.success(found)) == [], "finished once")
  }

  @Test func theTimeoutEndsTheSearchThenTheLaunch() {
    var machine = searching()
    let error = ReaderError(
      .readerNotFound, "the saved reader was not found before the timeout",
      context: ["serialNumber": "STRM2-0001", "timeout": "30"])
    #expect(
      machine.timedOut(heard: [Reader(serialNumber: "WPC32-9", deviceType: .wisePad3)]) == [.stopDiscovery(error)])
    #expect(machine.discoveryEnded(error) == [.disarmTimeout, .finish(.failure(error))])
    #expect(machine.discoveryEnded(error) == [])
  }

  @Test func theSavedReaderHeardWhenTheTimeoutFiresIsConnectedInsteadOfFailing() throws {
    let settings = try ConnectionSettings(locationId: "tml_1", autoReconnect: false)
    var machine = searching()
    let heard = [Reader(serialNumber: "WPC32-9", deviceType: .wisePad3), found]
    #expect(
      machine.timedOut(heard: heard) == [
        .report(.didFindSavedReader(found)), .disarmTimeout, .connect(found, settings),
      ])
    #expect(machine.timedOut(heard: []) == [], "decided once")
  }

  @Test func cancellingWhileSearchingEndsTheSearchFirst() {
    var machine = searching()
    #expect(machine.cancel() == [.stopDiscovery(.canceled("reconnectToSavedReader"))])
    #expect(
      machine.discoveryEnded(.canceled("reconnectToSavedReader")) == [
        .disarmTimeout, .finish(.failure(.canceled("reconnectToSavedReader"))),
      ])
  }

  @Test func cancellingWhileConnectingIsLeftToTheConnection() {
    var machine = searching()
    _ = machine.readersReported([found])
    #expect(machine.cancel() == [])
    #expect(machine.connectFinished(.failure(.canceled("reconnectToSavedReader"))).count == 1)
  }

  @Test func aReaderAlreadyConnectedRefusesTheLaunchAfterItIsAnnounced() {
    var machine = LaunchReconnectStateMachine(timeout: .seconds(30), autoReconnect: true)
    _ = machine.start()
    let refusal = ReaderError(.alreadyConnected, "a reader is already connected; disconnect it first")
    #expect(
      machine.savedReaderLoaded(.success(saved), connectRefusal: refusal) == [
        .report(.didStartLaunchReconnect(serialNumber: "STRM2-0001")), .finish(.failure(refusal)),
      ])
  }

  @Test func aLateStoreAnswerIsIgnored() {
    var machine = LaunchReconnectStateMachine(timeout: .seconds(30), autoReconnect: true)
    _ = machine.start()
    #expect(machine.cancel() == [.finish(.failure(.canceled("reconnectToSavedReader")))])
    #expect(machine.savedReaderLoaded(.success(saved), connectRefusal: nil) == [])
  }
}
