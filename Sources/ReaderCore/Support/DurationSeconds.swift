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
  /// The duration as seconds for error contexts and messages, to the millisecond without trailing
  /// zeros: "6 seconds", "1532.554 seconds" — never a binary-float tail like "1532.5539999999999".
  package var formattedSeconds: String {
    let text = JSONValue.number(inSeconds, decimals: 3).rendered
    return text + (text == "1" || text == "-1" ? " second" : " seconds")
  }
}
