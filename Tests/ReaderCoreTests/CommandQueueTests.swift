import Testing

@testable import ReaderCore

@Suite struct CommandQueueTests {
  @Test func aCommandSubmittedToAnIdleQueueStartsAtOnce() {
    var queue = CommandQueue<Int>()
    #expect(queue.running == nil)
    #expect(queue.submit(1) == .start(1))
    #expect(queue.running == 1)
    #expect(queue.waitingCount == 0)
  }

  @Test func aCommandIssuedWhileAnotherRunsWaitsInsteadOfFailing() {
    var queue = CommandQueue<Int>()
    _ = queue.submit(1)
    #expect(queue.submit(2) == .none)
    #expect(queue.submit(3) == .none)
    #expect(queue.running == 1)
    #expect(queue.waitingCount == 2)
  }

  @Test func waitingCommandsStartInSubmissionOrder() {
    var queue = CommandQueue<Int>()
    for id in 1...5 { _ = queue.submit(id) }
    var started: [Int] = [1]
    while let running = queue.running {
      if case .start(let next) = queue.finish(running) { started.append(next) }
    }
    #expect(started == [1, 2, 3, 4, 5])
    #expect(queue.waitingCount == 0)
  }

  @Test func finishingACommandThatIsNotRunningChangesNothing() {
    var queue = CommandQueue<Int>()
    #expect(queue.finish(1) == .none)
    _ = queue.submit(1)
    _ = queue.submit(2)
    #expect(queue.finish(2) == .none)
    #expect(queue.finish(7) == .none)
    #expect(queue.running == 1)
    #expect(queue.waitingCount == 1)
    #expect(queue.finish(1) == .start(2))
    #expect(queue.finish(1) == .none, "a second finish of the same command is a late event")
    #expect(queue.running == 2)
  }

  @Test func finishingTheLastCommandLeavesTheQueueIdle() {
    var queue = CommandQueue<Int>()
    _ = queue.submit(1)
    #expect(queue.finish(1) == .none)
    #expect(queue.running == nil)
    #expect(queue.submit(2) == .start(2))
  }

  @Test func removingAWaitingCommandTakesItOutOfLine() {
    var queue = CommandQueue<Int>()
    for id in 1...4 { _ = queue.submit(id) }
    #expect(queue.remove(3) == .removedWaiting)
    #expect(queue.waitingCount == 2)
    #expect(queue.finish(1) == .start(2))
    #expect(queue.finish(2) == .start(4), "the removed command never starts")
  }

  @Test func removingTheRunningCommandLeavesItToItsDriver() {
    var queue = CommandQueue<Int>()
    _ = queue.submit(1)
    _ = queue.submit(2)
    #expect(queue.remove(1) == .running)
    #expect(queue.running == 1, "the running command stops only when its driver finishes it")
    #expect(queue.waitingCount == 1)
    #expect(queue.finish(1) == .start(2))
  }

  @Test func removingAFinishedOrUnknownCommandSaysSo() {
    var queue = CommandQueue<Int>()
    #expect(queue.remove(1) == .unknown)
    _ = queue.submit(1)
    _ = queue.submit(2)
    _ = queue.finish(1)
    #expect(queue.remove(1) == .unknown)
    #expect(queue.remove(2) == .running)
  }

  @Test func removingAWaitingCommandTwiceIsHarmless() {
    var queue = CommandQueue<Int>()
    _ = queue.submit(1)
    _ = queue.submit(2)
    #expect(queue.remove(2) == .removedWaiting)
    #expect(queue.remove(2) == .unknown)
    #expect(queue.finish(1) == .none)
    #expect(queue.running == nil)
  }

  @Test func aHeldQueueStartsNothingUntilReleased() {
    var queue = CommandQueue<Int>()
    queue.hold()
    #expect(queue.submit(1) == .none)
    #expect(queue.submit(2) == .none)
    #expect(queue.running == nil)
    #expect(queue.release() == .start(1))
    #expect(queue.finish(1) == .start(2))
  }

  @Test func holdingLetsTheRunningCommandGoOnButStartsNoOther() {
    var queue = CommandQueue<Int>()
    _ = queue.submit(1)
    _ = queue.submit(2)
    queue.hold()
    #expect(queue.running == 1)
    #expect(queue.finish(1) == .none, "held: the next command waits for the release")
    #expect(queue.running == nil)
    #expect(queue.waitingCount == 1)
    #expect(queue.release() == .start(2))
  }

  @Test func releasingWhileACommandRunsStartsNothingNew() {
    var queue = CommandQueue<Int>()
    _ = queue.submit(1)
    queue.hold()
    _ = queue.submit(2)
    #expect(queue.release() == .none)
    #expect(queue.running == 1)
    #expect(queue.finish(1) == .start(2))
  }

  @Test func releasingAnEmptyOrUnheldQueueIsHarmless() {
    var queue = CommandQueue<Int>()
    #expect(queue.release() == .none)
    queue.hold()
    queue.hold()
    #expect(queue.release() == .none)
    #expect(queue.submit(1) == .start(1), "one release undoes any number of holds")
  }

  @Test func aWaitingCommandCanBeRemovedWhileTheQueueIsHeld() {
    var queue = CommandQueue<Int>()
    queue.hold()
    _ = queue.submit(1)
    _ = queue.submit(2)
    #expect(queue.remove(1) == .removedWaiting)
    #expect(queue.release() == .start(2))
  }

  @Test func submitFirstJumpsAheadOfWaitingCommands() {
    var queue = CommandQueue<String>()
    _ = queue.submit("discover")
    _ = queue.submit("discover again")
    _ = queue.submit("disconnect")
    #expect(queue.submitFirst("connect") == .none, "the running discovery must finish first")
    #expect(queue.finish("discover") == .start("connect"))
    #expect(queue.finish("connect") == .start("discover again"))
    #expect(queue.finish("discover again") == .start("disconnect"))
  }

  @Test func submitFirstOnAnIdleQueueStartsAtOnce() {
    var queue = CommandQueue<Int>()
    #expect(queue.submitFirst(9) == .start(9))
  }

  @Test func submitFirstOnAHeldQueueWaitsAtTheFront() {
    var queue = CommandQueue<Int>()
    queue.hold()
    _ = queue.submit(1)
    #expect(queue.submitFirst(2) == .none)
    #expect(queue.release() == .start(2))
    #expect(queue.finish(2) == .start(1))
  }

  @Test func randomOperationsKeepFIFOOrderAndStartEachCommandOnce() {
    for seed in UInt64(1)...200 {
      var random = SeededRandom(seed: seed)
      var queue = CommandQueue<Int>()
      var model: [Int] = []  // Waiting, in the order they must start.
      var running: Int?
      var held = false
      var nextID = 0
      var started: Set<Int> = []
      func apply(_ start: CommandQueue<Int>.Start) {
        guard case .start(let id) = start else { return }
        #expect(running == nil && !held && model.first == id, "seed \(seed): started \(id), model \(model)")
        #expect(started.insert(id).inserted, "seed \(seed): \(id) started twice")
        model.removeFirst()
        running = id
      }
      for _ in 0..<100 {
        switch random.next() % 6 {
        case 0, 1:
          nextID += 1
          model.append(nextID)
          apply(queue.submit(nextID))
        case 2:
          if let id = running {
            running = nil
            apply(queue.finish(id))
          }
        case 3:
          guard nextID > 0 else { continue }
          let id = Int(random.next() % UInt64(nextID)) + 1
          let expected: CommandQueue<Int>.Removal =
            id == running ? .running : model.contains(id) ? .removedWaiting : .unknown
          #expect(queue.remove(id) == expected, "seed \(seed): remove \(id)")
          model.removeAll { $0 == id }
        case 4:
          queue.hold()
          held = true
        default:
          held = false
          apply(queue.release())
        }
        #expect(queue.running == running, "seed \(seed)")
        #expect(queue.waitingCount == model.count, "seed \(seed)")
        if running == nil && !held {
          #expect(model.isEmpty, "seed \(seed): an unheld idle queue left \(model) waiting")
        }
      }
    }
  }
}
