// The routing of the children's outputs: one switch per child. An effect becomes an action at once;
// an output that concerns another child becomes a follow-up, fed once the batch is routed. These
// switches hold every rule that spans lifecycles.
extension TerminalStateMachine {
  /// Routes what the discovery of command `owner` said.
  mutating func route(_ steps: [DiscoveryStateMachine.Action], owner: JobID?) {
    for step in steps {
      switch step {
      case .startScan, .stopScan: updateScan()
      case .arm(let timer, let delay): emit(.arm(.discovery(timer), after: delay))
      case .disarm(let timer): emit(.disarm(.discovery(timer)))
      case .flashLEDs(let serial):
        emit(.flashLEDs(serialNumber: serial))
        report(.didRequestLEDFlash(serialNumber: serial))
      case .report(let readers):
        guard let owner else { continue }
        switch jobs[owner] {
        case .discover:
          report(.didUpdateDiscoveredReaders(readers), to: .discoveryDelegate(owner))
        case .launch:
          report(.didUpdateDiscoveredReaders(readers))
          followUp(.readersReported(readers))
        default:
          preconditionFailure("a discovery belongs to a discover or launch command")
        }
      case .finish(let error):
        discoveryOwner = nil
        updateScan()
        // The completion may read `connectionStatus`: it must no longer say `discovering`.
        publishStatus()
        report(.didFinishDiscovery(error))
        guard let owner else { continue }
        switch jobs[owner] {
        case .discover:
          complete(owner, error.map { .failure($0) } ?? .success(nil))
          finishCommand(owner)
        case .launch:
          followUp(.searchEnded(error))
        case nil:
          break  // A launch that already ended.
        default:
          preconditionFailure("a discovery belongs to a discover or launch command")
        }
      }
    }
    publishStatus()
  }

  /// Routes what the launch of command `owner` said.
  mutating func route(_ steps: [LaunchReconnectStateMachine.Action], launchOwner owner: JobID) {
    for step in steps {
      switch step {
      case .loadSavedReader: emit(.loadSavedReader)
      case .report(let kind): report(kind)
      case .startDiscovery(let simulated):
        followUp(.startDiscovery(owner: owner, .bluetoothScan(timeout: nil), simulated: simulated))
      case .stopDiscovery(let error): followUp(.finishDiscovery(error))
      case .armTimeout(let timeout): emit(.arm(.launchTimeout, after: timeout))
      case .disarmTimeout: emit(.disarm(.launchTimeout))
      case .connect(let reader, let settings):
        // A connect ends the discovery, and the status goes straight to connecting.
        work.connectPending = true
        followUp(.finishDiscovery(nil))
        followUp(.connect(owner: owner, reader, settings))
      case .finish(let result):
        commandEnded(owner, result)
      }
    }
  }

  /// Routes what the reader link said.
  mutating func route(_ steps: [ConnectionStateMachine.Action]) {
    for step in steps {
      switch step {
      case .listen, .stopListening: updateScan()
      case .openLink(let serial): emit(.openLink(serialNumber: serial))
      case .abandonLink(let serial): emit(.abandonLink(serialNumber: serial))
      case .closeLink(let serial): emit(.closeLink(serialNumber: serial))
      case .sendReboot(let serial): emit(.reboot(serialNumber: serial))
      case .arm(let timer, let delay): emit(.arm(.link(timer), after: delay))
      case .disarm(let timer): emit(.disarm(.link(timer)))
      case .linkReady(let reader):
        followUp(.prepare(reader))
      case .connected(let reader):
        publishStatus()
        report(.didConnect(reader))
        route(updates.readerConnected())
        if case .linking(let owner) = connectOwner {
          // Save before completing: the connect completes once the store has answered.
          connectOwner = .saving(owner, reader)
        }
        emit(
          .saveReader(
            SavedReader(
              serialNumber: reader.serialNumber, locationId: reader.locationId ?? "", deviceType: reader.deviceType,
              simulated: reader.simulated)))
      case .connectFailed(let error):
        let serial = linkReader?.serialNumber ?? ""
        var owner: JobID?
        if case .linking(let id) = connectOwner {
          owner = id
          connectOwner = .none
        }
        linkReader = nil
        publishStatus()
        report(.didFailToConnect(serialNumber: serial, error: error))
        if let owner { commandEnded(owner, .failure(error)) }
      case .disconnectCompleted(let reader):
        completeSavedConnect()
        route(updates.readerDisconnected())
        linkReader = nil
        publishStatus()
        report(.didDisconnect(reader, reason: .disconnectRequested))
        finishRunning(.disconnect, error: nil)
      case .rebootAnswered(let error):
        report(.didRespondToReboot(serialNumber: linkReader?.serialNumber ?? "", error: error))
        if error == nil, let id = queue.running, jobs[id] == .reboot {
          // An accepted reboot holds the line until the reader drops the link.
          complete(id, .success(nil))
          acceptedReboot = id
        } else {
          finishRunning(.reboot, error: error)
        }
      case .rebootNotCarriedOut:
        releaseAcceptedReboot()
      case .reconnectStarted(let reader, let reason):
        completeSavedConnect()
        route(updates.readerDisconnected())
        // A reconnection holds the line.
        work.releaseHeld = false
        queue.hold()
        reconnectHandles += 1
        reconnection = (reconnectHandles, false)
        emit(.openReconnectHandle(reconnectHandles))
        publishStatus()
        report(.didStartReconnect(reader, reason: reason), to: .readerDelegate)
        releaseAcceptedReboot()
      case .reconnectSucceeded(let reader):
        publishStatus()
        report(.readerDidSucceedReconnect(reader), to: .readerDelegate)
        route(updates.readerConnected())
        if let ended = reconnection { emit(.closeReconnectHandle(ended.handle, canceled: false)) }
        reconnection = nil
        work.releaseHeld = true
      case .reconnectFailed(let reader, let error):
        report(.readerDidFailReconnect(reader, error: error), to: .readerDelegate)
      case .disconnected(let reader, let reason):
        completeSavedConnect()
        route(updates.readerDisconnected())
        linkReader = nil
        publishStatus()
        report(.didDisconnect(reader, reason: reason), to: .readerDelegate)
        if let ended = reconnection {
          emit(.closeReconnectHandle(ended.handle, canceled: ended.canceled))
          reconnection = nil
          work.releaseHeld = true
        }
        // A reboot that never got its answer must still complete.
        finishRunning(.reboot, error: notConnected())
        releaseAcceptedReboot()
      case .lowBatteryWarning(let reader):
        report(.readerDidReportLowBatteryWarning(reader), to: .readerDelegate)
      case .readerUpdated(let reader):
        publishStatus()
        report(.didReportBatteryLevel(reader), to: .readerDelegate)
      }
    }
    publishStatus()
  }

  /// Routes what the update lifecycle said.
  mutating func route(_ steps: [SoftwareUpdateStateMachine.Action]) {
    for step in steps {
      switch step {
      case .checkForUpdate(let request, let installed, let date):
        emit(.checkForUpdate(request: request, installed, at: date))
      case .fetchImage(let request, let image): emit(.fetchImage(request: request, image))
      case .installUpdate(let serial, let update, let image):
        emit(.installUpdate(serialNumber: serial, update: update, image: image))
      case .cancelUpdate(let serial): emit(.cancelUpdate(serialNumber: serial))
      case .arm(.install(let timer), let delay): emit(.arm(.install(timer), after: delay))
      case .arm(.check, let delay): emit(.arm(.updateCheck, after: delay))
      case .disarm(.install(let timer)): emit(.disarm(.install(timer)))
      case .disarm(.check): emit(.disarm(.updateCheck))
      case .openInstallHandle(let handle): emit(.openInstallHandle(handle))
      case .closeInstallHandle(let handle, let canceled): emit(.closeInstallHandle(handle, canceled: canceled))
      case .report(let kind): report(kind, to: .readerDelegate)
      case .prepared(let reader, let announce):
        // An optional update is reported once the reader counts as connected.
        followUp(.prepared(reader))
        if let announce { followUp(.announce(reader, announce)) }
      case .preparationFailed(let error):
        followUp(.preparationFailed(error))
      case .interrupted:
        break  // Taken by the link loss that caused it.
      case .dropLink(let serial, let error):
        emit(.abandonLink(serialNumber: serial))
        followUp(.linkDown(serialNumber: serial, error))
      case .connectedReaderChanged(let reader):
        link.updateReader { $0 = reader }
        publishStatus()
      case .installFinished(let job, let result):
        complete(job, result)
        finishCommand(job)
      }
    }
  }
}
