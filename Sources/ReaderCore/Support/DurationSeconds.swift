extension Duration {
  /// The duration in seconds, as a floating-point number.
  package var inSeconds: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }

  /// A duration of `seconds` seconds, rounded to the millisecond; `nil` when not finite or too large.
  package static func seconds(exactly seconds: Double) -> Duration? {
    guard seconds.isFinite, abs(seconds) < 9e12 else { return nil }
    return .milliseconds(Int64((seconds * 1000).rounded()))
  }
}

extension Duration {
  /// The duration as every error context holds one: a plain number of seconds, to the millisecond
  /// without trailing zeros — "6", "0.5", "1532.554", never a unit and never a binary-float tail like
  /// "1532.5539999999999" — so that a program reads it as a number whichever error it is in.
  package var contextSeconds: String {
    // Divided rather than taken apart: `components` traps beyond Int64.max seconds, which a setting
    // being refused may hold.
    JSONValue.number(self / .seconds(1), decimals: 3).rendered
  }

  /// The duration as seconds for messages, to the millisecond without trailing zeros: "6 seconds",
  /// "1 second", "1532.554 seconds".
  package var formattedSeconds: String {
    let text = contextSeconds
    return text + (text == "1" || text == "-1" ? " second" : " seconds")
  }
}
