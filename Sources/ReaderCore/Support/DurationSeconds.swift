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
    let milliseconds = (inSeconds * 1000).rounded()
    guard milliseconds.isFinite, abs(milliseconds) < 9e15 else { return "\(inSeconds) seconds" }
    let whole = Int64(milliseconds)
    let sign = whole < 0 ? "-" : ""
    let magnitude = whole.magnitude
    var text = "\(sign)\(magnitude / 1000)"
    if magnitude % 1000 != 0 {
      var fraction = String(magnitude % 1000)
      fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
      while fraction.hasSuffix("0") { fraction.removeLast() }
      text += ".\(fraction)"
    }
    return text + (magnitude == 1000 ? " second" : " seconds")
  }
}
