import Foundation
import ReaderCore

/// What happens near a `SimulatedNFCRadio` and when: tags brought to it, and faults — written by
/// hand, or drawn from a seed for randomized tests and demos.
///
/// ```swift
/// let schedule = SimulatedNFCSchedule.random(seed: 42, tags: ["badge", "poster"], over: .seconds(120))
/// schedule.apply(to: radio)            // times count from now on the radio's clock
/// radio.clock.advance(to: schedule.end)
/// ```
///
/// Every step that takes something away gives it back (a tag is taken away again, the radio comes
/// back on, the other app lets go); overlapping outages of one kind end when the first of them does.
/// The same seed and arguments always give the same schedule, and
/// applying it is deterministic.
public struct SimulatedNFCSchedule: Sendable, Hashable, CustomStringConvertible {
  /// One step: what happens, and when.
  public struct Step: Sendable, Hashable, CustomStringConvertible {
    /// What happens.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
      /// The tag is brought to the device and taken away after the duration.
      case present(tag: String, for: Duration)
      /// The next read or write loses its tag halfway (`readerTransceiveErrorTagConnectionLost`).
      case tagRemovedMidRead
      /// Another app holds the radio for the duration: sessions starting then get
      /// `readerSessionInvalidationErrorSystemIsBusy`.
      case systemBusy(Duration)
      /// The app moves to the background: every session ends with
      /// `readerSessionInvalidationErrorSessionTerminatedUnexpectedly`.
      case unexpectedTermination
      /// The radio is off for the duration (`readerErrorRadioDisabled`).
      case radioOff(Duration)
      /// The person taps Cancel on the sheet (`readerSessionInvalidationErrorUserCanceled`).
      case userCancel

      /// How long the step lasts after it starts.
      public var duration: Duration {
        switch self {
        case .present(_, let duration), .systemBusy(let duration), .radioOff(let duration): duration
        case .tagRemovedMidRead, .unexpectedTermination, .userCancel: .zero
        }
      }

      public var description: String {
        switch self {
        case .present(let tag, let duration): "present(\(tag), for: \(duration))"
        case .tagRemovedMidRead: "tagRemovedMidRead"
        case .systemBusy(let duration): "systemBusy(\(duration))"
        case .unexpectedTermination: "unexpectedTermination"
        case .radioOff(let duration): "radioOff(\(duration))"
        case .userCancel: "userCancel"
        }
      }
    }

    /// When it starts, counted from the moment the schedule is applied.
    public var time: Duration
    /// What happens.
    public var kind: Kind

    /// Creates a step.
    public init(at time: Duration, _ kind: Kind) {
      self.time = time
      self.kind = kind
    }

    /// `time kind`, e.g. `12.5 seconds present(badge, for: 2.0 seconds)`.
    public var description: String { "\(time) \(kind)" }
  }

  /// Which kinds of step `random(seed:…)` draws.
  public enum Category: String, Sendable, Hashable, CaseIterable {
    case presentTag, tagRemovedMidRead, systemBusy, unexpectedTermination, radioOff, userCancel
  }

  /// The steps, in time order (steps at the same time keep their order).
  public let steps: [Step]

  /// A schedule of `steps`, sorted by time.
  public init(_ steps: [Step]) {
    self.steps = steps.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
      .map(\.element)
  }

  /// When the last step is over, counted like `Step.time`.
  public var end: Duration { steps.map { $0.time + $0.kind.duration }.max() ?? .zero }

  public var description: String { steps.map(\.description).joined(separator: "\n") }

  /// Draws a schedule from `seed`: steps start at random times within `duration` (on average one
  /// every `meanInterval`), with kinds from `categories` — presentations three times as often as each
  /// fault. Tags are shown for 0.3–5 s, the radio is busy for 0.1–3 s and off for 1–10 s.
  public static func random(
    seed: UInt64, tags: [String], over duration: Duration, meanInterval: Duration = .seconds(3),
    categories: Set<Category> = Set(Category.allCases)
  ) -> SimulatedNFCSchedule {
    var random = SeededRandom(seed: seed ^ 0x4E46_435F_5343_4844)
    var kinds = Category.allCases.filter(categories.contains)
    if kinds.contains(.presentTag) { kinds += [.presentTag, .presentTag] }
    if tags.isEmpty { kinds.removeAll { $0 == .presentTag } }
    guard !kinds.isEmpty, duration > .zero, meanInterval > .zero else { return .init([]) }

    func between(_ low: Duration, _ high: Duration) -> Duration {
      // Whole milliseconds, so schedules print and compare cleanly.
      let span = (high - low) / .milliseconds(1)
      return low + .milliseconds(Int64(random.nextUnit() * span))
    }

    var steps: [Step] = []
    var time = Duration.zero
    while true {
      time += meanInterval * -log1p(-random.nextUnit())
      time = .milliseconds(Int64(time / .milliseconds(1)))
      guard time < duration else { break }
      switch kinds[Int(random.next() % UInt64(kinds.count))] {
      case .presentTag:
        let tag = tags[Int(random.next() % UInt64(tags.count))]
        steps.append(Step(at: time, .present(tag: tag, for: between(.milliseconds(300), .seconds(5)))))
      case .tagRemovedMidRead: steps.append(Step(at: time, .tagRemovedMidRead))
      case .systemBusy: steps.append(Step(at: time, .systemBusy(between(.milliseconds(100), .seconds(3)))))
      case .unexpectedTermination: steps.append(Step(at: time, .unexpectedTermination))
      case .radioOff: steps.append(Step(at: time, .radioOff(between(.seconds(1), .seconds(10)))))
      case .userCancel: steps.append(Step(at: time, .userCancel))
      }
    }
    return .init(steps)
  }

  /// Schedules every step on `radio`'s clock, counting from now. Steps naming a tag the radio does
  /// not know do nothing.
  public func apply(to radio: SimulatedNFCRadio) {
    for step in steps {
      radio.clock.schedule(after: step.time) { step.kind.perform(on: radio) }
    }
  }
}

extension SimulatedNFCSchedule.Step.Kind {
  fileprivate func perform(on radio: SimulatedNFCRadio) {
    switch self {
    case .present(let tag, let duration): radio.present(tag, for: duration)
    case .tagRemovedMidRead: radio.interruptNextTagCommand()
    case .systemBusy(let duration): radio.holdByAnotherApp(for: duration)
    case .unexpectedTermination: radio.terminateSessions()
    case .radioOff(let duration): radio.switchRadioOff(for: duration)
    case .userCancel: radio.tapCancel()
    }
  }
}
