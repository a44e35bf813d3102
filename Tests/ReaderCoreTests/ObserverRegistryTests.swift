import Foundation
import Testing

@testable import ReaderCore

/// What observers heard, in order.
private final class Heard: Sendable {
  private let values = Locked<[String]>([])
  func append(_ value: String) { values.withLock { $0.append(value) } }
  var all: [String] { values.withLock { $0 } }
}

@Suite struct ObserverRegistryTests {
  @Test func observersAreCalledInTheOrderTheyWereAddedAndRemovedOnesNoMore() {
    let registry = ObserverRegistry<Int>()
    let heard = Heard()
    var tokens: [UInt64] = []
    for name in ["a", "b", "c", "d"] {
      tokens.append(registry.add { heard.append("\(name)\($0)") } ?? 0)
    }
    registry.remove(tokens[1])
    registry.notify(1)
    registry.remove(tokens[1])  // Again: nothing.
    registry.notify(2)
    #expect(heard.all == ["a1", "c1", "d1", "a2", "c2", "d2"])
  }

  @Test func anObserverMayRemoveItselfWhileBeingCalled() {
    let registry = ObserverRegistry<Int>()
    let heard = Heard()
    let token = Locked<UInt64?>(nil)
    let own = registry.add { value in
      heard.append("once\(value)")
      if let mine = token.withLock({ $0 }) { registry.remove(mine) }
    }
    token.withLock { $0 = own }
    _ = registry.add { heard.append("always\($0)") }
    registry.notify(1)
    registry.notify(2)
    #expect(heard.all == ["once1", "always1", "always2"])
  }

  @Test func aLastEventClosesTheRegistry() {
    let registry = ObserverRegistry<Int>()
    let heard = Heard()
    _ = registry.add { heard.append("\($0)") }
    registry.notify(1, last: true)
    registry.notify(2)
    #expect(heard.all == ["1"])
    #expect(registry.add { heard.append("late\($0)") } == nil)
  }
}

@Suite struct SchedulerDateTests {
  @Test func aVirtualClockDatesFromTheSimulationsEpochAndIsDeterministic() {
    let clock = VirtualClock()
    #expect(clock.epoch == Date(timeIntervalSince1970: 1_767_225_600))
    #expect(clock.isDeterministic)
  }

  @Test func aLiveSchedulerDatesFromTheDateItIsGivenAndIsNotDeterministic() {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let scheduler = LiveScheduler(epoch: start)
    #expect(scheduler.epoch == start)
    #expect(!scheduler.isDeterministic)
  }
}
