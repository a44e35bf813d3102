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
